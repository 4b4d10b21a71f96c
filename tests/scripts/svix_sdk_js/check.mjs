// Shared by the parts of the JavaScript Svix scenario: the SDK's client for
// the gateway, equality and refusal checks, polling, paging, the shapes the
// SDK's models promise, and the few raw requests the Python scenario sends too.
import { ApiException, Svix } from "svix";

/**
 * An SDK client of the gateway at `base` with `token`: `{ svix, status }`,
 * `status()` answering the HTTP status of the last call, which the models
 * drop (an upsert's 201 or 200). Refuses a base off loopback: without an
 * explicit serverUrl the SDK calls Svix's cloud, and nothing here may.
 */
export function client(base, token) {
  const host = new URL(base).hostname;
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) throw new Error(`not a loopback serverUrl: ${base}`);
  let last = null;
  // The SDK's own fetch hook, only to see each answer's status.
  const seeing = async (url, init) => {
    const answer = await fetch(url, init);
    last = answer.status;
    return answer;
  };
  // No retries: a retried call would hide a wrong first answer.
  const svix = new Svix(token, { serverUrl: base, retryScheduleInMs: [], fetch: seeing });
  return { svix, status: () => last };
}

/** JSON with every object's keys sorted: equal values, equal text, whatever the order. */
function canonical(value) {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/** Checks `got` equals `want`, as Python's `==` (objects in any key order). */
export function eq(got, want, what) {
  const [g, w] = [canonical(got), canonical(want)];
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

/** Runs `call`, which must fail with HTTP `status`; answers the error's body. */
export async function refused(call, status, what) {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    eq(error.code, status, `${what}: status`);
    // The SDK parses 4xx bodies only; a 5xx comes as text.
    return typeof error.body === "string" ? JSON.parse(error.body) : error.body;
  }
  throw new Error(`${what}: succeeded, want ${status}`);
}

/** Polls `check` until it answers something other than null, for at most 20 s. */
export async function until(what, check) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got = await check();
    if (got !== null) return got;
    if (Date.now() > deadline) throw new Error(`${what}: not within 20 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every item of a list, page by page (`listPage(limit, iterator)`). */
export async function everyPage(listPage, limit = 2) {
  const items = [];
  let iterator = null;
  for (;;) {
    const page = await listPage(limit, iterator);
    items.push(...page.data);
    if (page.done) return items;
    iterator = page.iterator;
  }
}

// The fields each model the scenario reads must carry (the SDK's models are
// TypeScript types only: a missing field or a bad time reads as undefined or
// an Invalid Date, never an error, so the checks are made here).
const REQUIRED = {
  ApplicationOut: ["id", "name", "metadata", "createdAt", "updatedAt"],
  EndpointOut: ["id", "url", "description", "metadata", "createdAt", "updatedAt"],
  MessageOut: ["id", "eventType", "payload", "timestamp"],
  MessageAttemptOut: ["id", "url", "response", "responseStatusCode", "responseDurationMs", "status", "statusText", "triggerType", "msgId", "endpointId", "timestamp"],
  EndpointMessageOut: ["id", "eventType", "payload", "timestamp", "status", "statusText"],
  MessageEndpointOut: ["id", "url", "description", "status", "statusText", "createdAt", "updatedAt"],
  EventTypeOut: ["name", "description", "deprecated", "createdAt", "updatedAt"],
  EndpointStats: ["success", "pending", "sending", "fail", "canceled"],
  TaskOut: ["id", "status", "task", "updatedAt"],
  EndpointHeadersOut: ["headers", "sensitive"],
  EndpointSecretOut: ["key"],
  AppPortalAccessOut: ["url", "token"],
};

/** `got`, checked to carry every field of `model` and only valid times; a list's items too. */
export function shaped(model, got) {
  if (Array.isArray(got?.data)) {
    eq(typeof got.done, "boolean", `a list of ${model}: done`);
    for (const item of got.data) shaped(model, item);
    return got;
  }
  for (const field of REQUIRED[model]) {
    if (got?.[field] === undefined || got[field] === null) throw new Error(`${model} without ${field}: ${JSON.stringify(got)}`);
  }
  for (const [field, value] of Object.entries(got)) {
    if (value instanceof Date && Number.isNaN(value.getTime())) throw new Error(`${model}.${field} is no time: ${JSON.stringify(got)}`);
  }
  return got;
}

/** A request as Svix's (or hookgate's) API takes it, for what the SDK cannot send; answers the status and the JSON. */
export async function raw(ctx, method, path, body) {
  const answer = await fetch(ctx.base + path, {
    method,
    headers: { authorization: `Bearer ${ctx.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  return [answer.status, text ? JSON.parse(text) : null];
}

/** Sorted copy. */
export const sorted = (items) => [...items].sort();
