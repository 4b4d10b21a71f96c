// Drives hookgate's Svix-compatible API with the official `svix` npm package,
// unmodified, with an explicit serverUrl (without one it calls Svix's cloud):
// health; an application made, found, upserted, patched, listed and deleted;
// an event type; an endpoint with its headers, secret rotation and stats; a
// message by id and eventId; its attempts, destinations and a resend; and
// the errors (404, 409, 422). Prints one JSON line: what the Rust test checks
// against the receiver and the verifiers; exits 1 with the failing check.
//
// Usage: node svix_sdk.mjs BASE_URL ORG_TOKEN RECEIVER_URL
import { ApiException, MessageStatus, Svix } from "svix";

const [base, token, receiver] = process.argv.slice(2);
const svix = new Svix(token, { serverUrl: base, retryScheduleInMs: [] });
const seen = { failed: null };

function eq(got, want, what) {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)];
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

/** Runs `call`, which must fail with HTTP `status`; answers the error's body. */
async function refused(call, status, what) {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    eq(error.code, status, `${what}: status`);
    return error.body;
  }
  throw new Error(`${what}: succeeded, want ${status}`);
}

async function applications() {
  await svix.health.get();
  const app = await svix.application.create({ name: "JS app", uid: "js-app", metadata: { sdk: "js" } });
  eq([app.id.startsWith("app_"), app.uid, app.metadata], [true, "js-app", { sdk: "js" }], "created");
  eq((await svix.application.getOrCreate({ name: "again", uid: "js-app" })).id, app.id, "getOrCreate finds it");
  eq((await svix.application.get("js-app")).id, app.id, "its uid names it");
  const upserted = await svix.application.upsert(app.id, { name: "JS app 2", uid: "js-app" });
  eq([upserted.id, upserted.name, upserted.metadata], [app.id, "JS app 2", {}], "upsert replaces");
  const made = await svix.application.upsert("js-made", { name: "Made" });
  eq(made.uid, "js-made", "upsert creates");
  eq((await svix.application.patch(made.id, { name: "Made 2" })).name, "Made 2", "patch");
  const page = await svix.application.list({ limit: 1 });
  eq([page.data.length, page.done], [1, false], "a page of one");
  await svix.application.delete(made.id);
  await refused(() => svix.application.get(made.id), 404, "a deleted app");
  const taken = await refused(() => svix.application.create({ name: "dup", uid: "js-app" }), 409, "a taken uid");
  eq(taken.code, "conflict", "the conflict's code");
  return app.id;
}

async function eventTypes() {
  const made = await svix.eventType.create({ name: "js.signup", description: "A user signed up" });
  eq([made.name, made.description, made.deprecated], ["js.signup", "A user signed up", false], "event type");
  eq((await svix.eventType.patch("js.signup", { deprecated: true })).deprecated, true, "patched");
  eq((await svix.eventType.get("js.signup")).deprecated, true, "read back");
  const listed = await svix.eventType.list({ limit: 250 });
  eq(listed.data.some((t) => t.name === "js.signup"), true, "listed");
}

async function endpoint(app) {
  const ep = await svix.endpoint.create(app, {
    url: receiver,
    uid: "js-ep",
    eventTypes: ["js.signup"],
    channels: ["eu"],
    throttleRate: 20,
    metadata: { team: "js" },
  });
  eq([ep.uid, ep.eventTypes, ep.channels, ep.throttleRate], ["js-ep", ["js.signup"], ["eu"], 20], "endpoint");
  const bad = await refused(() => svix.endpoint.create(app, { url: "nope" }), 422, "a bad url");
  eq(bad.detail[0].loc, ["body", "url"], "the refused field");
  const up = await svix.endpoint.upsert(app, "js-ep", { url: receiver, uid: "js-ep" });
  eq([up.id, up.eventTypes ?? null, up.channels ?? null], [ep.id, null, null], "upsert: every type, no channel");
  eq((await svix.endpoint.patch(app, ep.id, { description: "JS" })).description, "JS", "patch");
  await svix.endpoint.setHeaders(app, ep.id, { headers: { "x-js": "1" } });
  eq((await svix.endpoint.getHeaders(app, ep.id)).headers, { "x-js": "1" }, "headers");
  const before = (await svix.endpoint.getSecret(app, ep.id)).key;
  await svix.endpoint.rotateSecret(app, ep.id, {});
  const after = (await svix.endpoint.getSecret(app, ep.id)).key;
  eq([before.startsWith("whsec_"), after !== before], [true, true], "a rotated secret");
  const stats = await svix.endpoint.getStats(app, ep.id);
  eq(typeof stats.success, "number", "stats");
  eq((await svix.endpoint.list(app)).data.map((e) => e.id), [ep.id], "listed");
  return ep.id;
}

/** Polls `read` until `done` holds of its answer, for at most 20 s. */
async function until(read, done, what) {
  for (let i = 0; i < 200; i++) {
    const got = await read();
    if (done(got)) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within 20 s`);
}

async function messages(app, ep) {
  const msg = await svix.message.create(
    app,
    { eventType: "js.signup", eventId: "js-evt-1", payload: { user: 42 }, channels: ["eu"] },
    { withContent: true },
  );
  eq([msg.eventType, msg.eventId, msg.payload], ["js.signup", "js-evt-1", { user: 42 }], "message");
  // This SDK asks for no content unless told: the payload then reads {}.
  const read = await svix.message.get(app, "js-evt-1");
  eq([read.id, read.payload], [msg.id, {}], "its eventId names it");
  eq((await svix.message.get(app, msg.id, { withContent: true })).payload, { user: 42 }, "with its content");
  await refused(() => svix.message.create(app, { eventType: "js.signup", eventId: "js-evt-1", payload: {} }), 409, "a repeated eventId");
  eq((await svix.message.list(app)).data.map((m) => m.id), [msg.id], "listed");
  const attempts = await until(() => svix.messageAttempt.listByMsg(app, msg.id), (l) => l.data.length > 0, "an attempt");
  const attempt = attempts.data[0];
  eq([attempt.status, attempt.statusText, attempt.responseStatusCode, attempt.endpointId, attempt.msgId], [MessageStatus.Success, "success", 200, ep, msg.id], "the attempt");
  eq((await svix.messageAttempt.get(app, msg.id, attempt.id)).id, attempt.id, "the attempt by id");
  eq((await svix.messageAttempt.listByEndpoint(app, ep)).data.some((a) => a.id === attempt.id), true, "by endpoint");
  eq((await svix.messageAttempt.listAttemptedMessages(app, ep)).data.map((m) => m.id), [msg.id], "attempted messages");
  eq((await svix.messageAttempt.listAttemptedDestinations(app, msg.id)).data.map((d) => d.id), [ep], "destinations");
  await svix.messageAttempt.resend(app, msg.id, ep);
  await until(() => svix.messageAttempt.listByMsg(app, msg.id), (l) => l.data.length > 1, "the resend's attempt");
  return msg.id;
}

try {
  const app = await applications();
  await eventTypes();
  const ep = await endpoint(app);
  const msg = await messages(app, ep);
  Object.assign(seen, { app, endpoint: ep, message: msg, requests: 2 });
  seen.secret = (await svix.endpoint.getSecret(app, ep)).key;
} catch (error) {
  seen.failed = `${error.message}\n${error.stack}\n${JSON.stringify(error.body ?? null)}`;
}
console.log(JSON.stringify(seen));
process.exit(seen.failed ? 1 : 0);
