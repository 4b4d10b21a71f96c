// Messages and their attempts: create (eventId, channels, tags, an inline
// application), get by id and eventId, list with filters and paging; then,
// once delivered, attempts by endpoint and by message, one attempt, the
// attempted messages and destinations, a resend, and expunging content; and
// the refusals. Puts the ids the receiver must see into seen.messages.
import { MessageAttemptTriggerType, MessageStatus, MessageStatusText, StatusCodeClass } from "svix";

import { eq, everyPage, refused, shaped, sorted, until } from "./check.mjs";

/** The messages, checked as created; answers them, first the one with an eventId. */
async function create(ctx) {
  const { svix, status, app } = ctx;
  const paid = shaped(
    "MessageOut",
    await svix.message.create(
      app,
      { eventType: "invoice.paid", payload: { amount: 1 }, eventId: "inv-1", channels: ["billing"], tags: ["invoice:1"] },
      { withContent: true },
    ),
  );
  eq(
    [status(), paid.eventType, paid.payload, paid.eventId, paid.channels, paid.tags],
    [202, "invoice.paid", { amount: 1 }, "inv-1", ["billing"], ["invoice:1"]],
    "created",
  );
  eq(paid.id.length > 0 && !Number.isNaN(paid.timestamp.getTime()), true, "an id and a time");
  const second = shaped("MessageOut", await svix.message.create(app, { eventType: "invoice.paid", payload: { amount: 2 } }));
  eq([second.payload, second.eventId ?? null, second.channels ?? null], [{}, null, null], "created without content");
  const signup = await svix.message.create(app, { eventType: "user.signup", payload: { email: "a@example.com" } });
  let e = await refused(() => svix.message.create(app, { eventType: "invoice.paid", payload: {}, eventId: "inv-1" }), 409, "a taken eventId");
  eq(e.code, "conflict", "the conflict's code");
  e = await refused(() => svix.message.create(app, { eventType: "x", payload: {}, payloadRetentionPeriod: 30 }), 422, "a retention");
  eq(e.detail[0].loc, ["body", "payloadRetentionPeriod"], "the retention named");
  // The model's payload is `any`: the SDK sends an array as it is.
  e = await refused(() => svix.message.create(app, { eventType: "x", payload: [1] }), 422, "a payload not an object");
  eq(e.detail[0].loc, ["body", "payload"], "the payload named");
  await refused(() => svix.message.create("no-such-app", { eventType: "x", payload: {} }), 404, "an unknown app");

  const inline = await svix.message.create("inline-app", { eventType: "user.signup", payload: { secret: 1 }, application: { name: "Inline" } });
  eq((await svix.application.get("inline-app")).name, "Inline", "the inline application made");
  const again = await svix.message.create("inline-app", { eventType: "user.signup", payload: {}, application: { name: "Ignored" } });
  eq([(await svix.application.get("inline-app")).name, again.id !== inline.id], ["Inline", true], "an existing app kept");
  e = await refused(
    () => svix.message.create("inline-2", { eventType: "x", payload: {}, application: { name: "B", throttleRate: 5 } }),
    422,
    "a bad inline app",
  );
  eq(e.detail[0].loc, ["body", "application", "throttleRate"], "the inline field named");
  return [paid, second, signup, inline];
}

/** Get by id and eventId, and the list: paging, filters, content. */
async function read(ctx, paid, sent) {
  const { svix, app } = ctx;
  const got = shaped("MessageOut", await svix.message.get(app, paid.id, { withContent: true }));
  eq([got.id, got.payload, got.tags, got.timestamp], [paid.id, { amount: 1 }, ["invoice:1"], paid.timestamp], "get by id");
  eq((await svix.message.get(app, "inv-1")).id, paid.id, "get by eventId");
  // This SDK asks for no content unless told: the payload then reads {}.
  eq((await svix.message.get(app, paid.id)).payload, {}, "no payload without content");
  await refused(() => svix.message.get(app, "msg_nope"), 404, "an unknown message");

  // The parts before may have sent messages of their own: ours are checked.
  const ours = new Set(sent.map((m) => m.id));
  const listed = await everyPage(async (limit, iterator) => shaped("MessageOut", await svix.message.list(app, { limit, iterator })));
  const ids = listed.map((m) => m.id);
  eq([ids.length === new Set(ids).size, [...ours].every((id) => ids.includes(id))], [true, true], "every message once, across pages");
  const times = listed.map((m) => m.timestamp.getTime());
  eq(times, [...times].sort((a, b) => b - a), "newest first");

  const only = async (options) => sorted((await svix.message.list(app, options)).data.map((m) => m.id).filter((id) => ours.has(id)));
  eq(await only({ eventTypes: ["invoice.paid"] }), sorted([sent[1].id, paid.id]), "by event type");
  eq(await only({ eventTypes: ["invoice.paid", "user.signup"] }), sorted(ours), "by event types");
  eq(await only({ channel: "billing" }), [paid.id], "by channel");
  eq(await only({ tag: "invoice:1" }), [paid.id], "by tag");
  eq(await only({ before: new Date(paid.timestamp.getTime() - 3600_000) }), [], "before");
  eq(await only({ after: new Date(paid.timestamp.getTime() - 1000) }), sorted(ours), "after");
  const page = await svix.message.list(app, { withContent: true, channel: "billing" });
  eq(page.data[0].payload, { amount: 1 }, "listed with content");
  const e = await refused(() => svix.message.list(app, { limit: 500 }), 422, "a limit too large");
  eq(e.detail[0].loc, ["query", "limit"], "the limit named");
}

/** The attempts once delivered, by endpoint and by message, and one. */
async function attempts(ctx, endpoint, paid, sent) {
  const { svix, app, receiver } = ctx;
  const ours = new Set(sent.map((m) => m.id));
  // Our messages' attempts at the endpoint (the parts before may have sent others).
  const byEndpoint = async (options = {}) =>
    shaped("MessageAttemptOut", await svix.messageAttempt.listByEndpoint(app, endpoint, options)).data.filter((a) => ours.has(a.msgId));

  const made = await until("an attempt of every message", async () => {
    const delivered = new Set((await byEndpoint({ status: MessageStatus.Success })).map((a) => a.msgId));
    const all = delivered.size === sent.length ? await byEndpoint({ withContent: true }) : [];
    return all.length > 0 ? all : null;
  });
  eq(sorted(made.map((a) => a.msgId)), sorted(ours), "one attempt of every message");
  for (const a of made) {
    eq(
      [a.status, a.statusText, a.responseStatusCode, a.triggerType, a.url, a.endpointId],
      [MessageStatus.Success, MessageStatusText.Success, 200, MessageAttemptTriggerType.Scheduled, receiver, endpoint],
      "a delivered attempt",
    );
    eq(typeof a.response === "string" && a.responseDurationMs >= 0, true, "a response and a duration");
  }
  eq(await byEndpoint({ status: MessageStatus.Fail }), [], "no failed attempt");
  eq((await byEndpoint({ statusCodeClass: StatusCodeClass.Code2xx })).length, sent.length, "all 2xx");
  eq(await byEndpoint({ statusCodeClass: StatusCodeClass.Code5xx }), [], "no 5xx");
  eq((await byEndpoint({ channel: "billing" })).map((a) => a.msgId), [paid.id], "by channel");
  eq((await byEndpoint({ eventTypes: ["invoice.paid"] })).length, 2, "by event type");
  const withMsg = await byEndpoint({ withMsg: true, tag: "invoice:1" });
  eq(withMsg.map((a) => [a.msgId, a.msg?.id, a.msg?.eventId]), [[paid.id, paid.id, "inv-1"]], "with the message");
  const paged = await everyPage((limit, iterator) => svix.messageAttempt.listByEndpoint(app, endpoint, { limit, iterator }));
  eq(sorted(paged.filter((a) => ours.has(a.msgId)).map((a) => a.id)), sorted(made.map((a) => a.id)), "paged");
  await refused(() => svix.messageAttempt.listByEndpoint(app, "ep_nope"), 404, "an unknown endpoint");

  const mine = { endpointId: endpoint, withContent: true };
  const ofPaid = shaped("MessageAttemptOut", await svix.messageAttempt.listByMsg(app, paid.id, mine)).data;
  eq(ofPaid.map((a) => [a.msgId, a.endpointId]), [[paid.id, endpoint]], "by message");
  eq((await svix.messageAttempt.listByMsg(app, "inv-1", mine)).data.length, 1, "by eventId");
  eq((await svix.messageAttempt.listByMsg(app, paid.id, { status: MessageStatus.Pending })).data, [], "none pending");
  const one = shaped("MessageAttemptOut", await svix.messageAttempt.get(app, paid.id, ofPaid[0].id));
  eq([one.id, one.msgId, one.status, one.statusText, one.url], [ofPaid[0].id, paid.id, 0, "success", receiver], "one attempt");
  eq((await svix.messageAttempt.get(app, "inv-1", one.id)).id, one.id, "one attempt by eventId");
  await refused(() => svix.messageAttempt.get(app, sent[1].id, one.id), 404, "another message's attempt");
  const e = await refused(() => svix.messageAttempt.expungeContent(app, paid.id, one.id), 501, "an attempt's content");
  eq(e.code, "not_implemented", "the refusal's code");
  await refused(() => svix.messageAttempt.expungeContent(app, paid.id, "atm_nope"), 404, "an unknown attempt");
}

/** Attempted messages of the endpoint, and attempted destinations of one. */
async function destinations(ctx, endpoint, paid, sent) {
  const { svix, app, receiver } = ctx;
  const ours = new Set(sent.map((m) => m.id));
  const all = await everyPage(async (limit, iterator) =>
    shaped("EndpointMessageOut", await svix.messageAttempt.listAttemptedMessages(app, endpoint, { limit, iterator, withContent: true })),
  );
  const msgs = all.filter((m) => ours.has(m.id));
  eq(sorted(msgs.map((m) => m.id)), sorted(ours), "attempted messages");
  for (const m of msgs) eq([m.status, m.statusText], [MessageStatus.Success, MessageStatusText.Success], "delivered");
  eq(msgs.filter((m) => m.id === paid.id).map((m) => m.payload), [{ amount: 1 }], "with content");

  const attempted = async (options) =>
    sorted((await svix.messageAttempt.listAttemptedMessages(app, endpoint, options)).data.map((m) => m.id).filter((id) => ours.has(id)));
  eq(await attempted({ status: MessageStatus.Fail }), [], "none failed");
  eq(await attempted({ status: MessageStatus.Success }), sorted(ours), "all succeeded");
  eq(await attempted({ channel: "billing" }), [paid.id], "by channel");
  eq(await attempted({ eventTypes: ["invoice.paid"] }), sorted([paid.id, sent[1].id]), "by event type");

  const dests = shaped("MessageEndpointOut", await svix.messageAttempt.listAttemptedDestinations(app, paid.id, { limit: 50 })).data;
  const mineOnly = dests.filter((d) => d.id === endpoint);
  eq(mineOnly.map((d) => [d.url, d.status, d.statusText]), [[receiver, MessageStatus.Success, MessageStatusText.Success]], "attempted destination");
}

async function resendAndExpunge(ctx, endpoint, paid, inline) {
  const { svix, status, app } = ctx;
  await svix.messageAttempt.resend(app, paid.id, endpoint);
  eq(status(), 202, "a resend accepted");
  const resent = await until("the resend's attempt", async () => {
    const page = await svix.messageAttempt.listByMsg(app, paid.id, { endpointId: endpoint });
    const manual = page.data.filter((a) => a.triggerType === MessageAttemptTriggerType.Manual && a.status === MessageStatus.Success);
    return manual.length > 0 ? manual : null;
  });
  eq(resent.length, 1, "one manual attempt");
  await refused(() => svix.messageAttempt.resend(app, paid.id, "ep_nope"), 404, "a resend to no endpoint");

  // The inline app has no endpoint, so no delivery of it can be pending.
  await svix.message.expungeContent("inline-app", inline.id);
  eq(status(), 204, "content expunged");
  eq((await svix.message.get("inline-app", inline.id, { withContent: true })).payload, {}, "expunged");
  await refused(() => svix.message.expungeContent(app, "msg_nope"), 404, "expunging no message");
}

export async function run(ctx) {
  const endpoint = ctx.endpoint;
  const [paid, second, signup, inline] = await create(ctx);
  const sent = [paid, second, signup];
  await read(ctx, paid, sent);
  await attempts(ctx, endpoint, paid, sent);
  await destinations(ctx, endpoint, paid, sent);
  await resendAndExpunge(ctx, endpoint, paid, inline);
  // The receiver sees each message once, and the resent one twice.
  ctx.seen.messages = { ids: sent.map((m) => m.id), count: sent.length + 1, resent: paid.id };
}
