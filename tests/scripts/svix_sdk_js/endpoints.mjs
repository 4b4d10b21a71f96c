// Endpoints: create (Svix's fields, and hookgate's under `hookgate`), get by
// id and uid, list with paging, upsert, patch, headers, the secret and its
// rotation, recover, replay-missing, send-example, stats, delete, and errors.
import { BackgroundTaskStatus, BackgroundTaskType } from "svix";

import { eq, raw, refused, shaped, sorted } from "./check.mjs";

export async function run(ctx) {
  const { svix, status, app, receiver: url } = ctx;
  const ep = shaped(
    "EndpointOut",
    await svix.endpoint.create(app, {
      url,
      uid: "orders",
      description: "Orders",
      eventTypes: ["user.signup", "invoice.paid"],
      channels: ["eu"],
      metadata: { team: "billing" },
      throttleRate: 50,
      headers: { "x-plain": "p-1" },
    }),
  );
  eq([ep.id.startsWith("ep_"), status()], [true, 201], "an ep_ id, created");
  eq([ep.uid, ep.description, ep.throttleRate], ["orders", "Orders", 50], "created");
  eq([sorted(ep.eventTypes), ep.channels, ep.metadata], [["invoice.paid", "user.signup"], ["eu"], { team: "billing" }], "its filters");
  eq((await svix.endpoint.get(app, "orders")).id, ep.id, "its uid names it");
  const e = await refused(() => svix.endpoint.create(app, { url: "not a url" }), 422, "a bad url");
  eq(e.detail[0].loc, ["body", "url"], "the refused field");
  await refused(() => svix.endpoint.get(app, "ep_nope"), 404, "an unknown endpoint");
  await refused(() => svix.endpoint.create(app, { url, uid: "orders" }), 409, "a taken uid");

  // hookgate's own fields, under `hookgate`, go in and come out; the SDK's
  // model drops names it does not know, so these go over the wire, as in Python.
  const path = `/api/v1/app/${app}/endpoint`;
  const [made, own] = await raw(ctx, "POST", path, { url, hookgate: { policy: { max_attempts: 3 }, timeout_ms: 2000 } });
  eq([made, own.hookgate.policy, own.hookgate.timeout_ms], [201, { max_attempts: 3 }, 2000], "the hookgate extension");
  const [refusal, bad] = await raw(ctx, "POST", path, { url, hookgate: { nope: 1 } });
  eq([refusal, bad.detail[0].loc], [422, ["body", "hookgate.nope"]], "an unknown hookgate field");

  const first = shaped("EndpointOut", await svix.endpoint.list(app, { limit: 1 }));
  eq([first.data.length, first.done], [1, false], "a first page of 1");
  const rest = shaped("EndpointOut", await svix.endpoint.list(app, { limit: 10, iterator: first.iterator }));
  eq(sorted([...first.data, ...rest.data].map((x) => x.id)), sorted([ep.id, own.id]), "both endpoints, once");

  const up = shaped("EndpointOut", await svix.endpoint.upsert(app, "orders", { url, uid: "orders", description: "Orders v2" }));
  eq([status(), up.id, up.description, up.eventTypes ?? null, up.throttleRate ?? null], [200, ep.id, "Orders v2", null, null], "PUT replaces (every type)");
  const put = shaped("EndpointOut", await svix.endpoint.upsert(app, "made-by-put", { url }));
  eq([status(), put.uid], [201, "made-by-put"], "PUT creates what is not there");
  await svix.endpoint.delete(app, put.id);
  eq(status(), 204, "deleted");
  await refused(() => svix.endpoint.get(app, put.id), 404, "a deleted endpoint");
  const patched = shaped("EndpointOut", await svix.endpoint.patch(app, ep.id, { description: "Orders v3", channels: null }));
  eq([patched.description, patched.channels ?? null], ["Orders v3", null], "PATCH");

  await svix.endpoint.setHeaders(app, ep.id, { headers: { "x-one": "1", "x-two": "2" } });
  eq(status(), 204, "headers set");
  await svix.endpoint.patchHeaders(app, ep.id, { headers: { "x-two": "2b", "x-three": "3" } });
  eq(status(), 204, "headers patched");
  const headers = shaped("EndpointHeadersOut", await svix.endpoint.getHeaders(app, ep.id));
  eq(headers.headers, { "x-one": "1", "x-two": "2b", "x-three": "3" }, "headers set, then patched");
  await svix.endpoint.patchHeaders(app, ep.id, { headers: {}, deleteHeaders: ["x-three"] });
  eq((await svix.endpoint.getHeaders(app, ep.id)).headers, { "x-one": "1", "x-two": "2b" }, "deleteHeaders removes one");
  await svix.endpoint.setHeaders(app, ep.id, { headers: { "x-one": "1" } });
  eq((await svix.endpoint.getHeaders(app, ep.id)).headers, { "x-one": "1" }, "a PUT of headers replaces them");

  const secret = shaped("EndpointSecretOut", await svix.endpoint.getSecret(app, ep.id)).key;
  eq(secret.startsWith("whsec_"), true, "a whsec_ secret");
  // This SDK's rotateSecret answers nothing (it discards the body): read back.
  await svix.endpoint.rotateSecret(app, ep.id, {});
  const rotated = (await svix.endpoint.getSecret(app, ep.id)).key;
  eq(rotated !== secret && rotated.startsWith("whsec_"), true, "a new secret");

  const since = new Date(Date.now() - 3600_000);
  const recovering = shaped("TaskOut", await svix.endpoint.recover(app, ep.id, { since }));
  const running = [BackgroundTaskStatus.Running, BackgroundTaskStatus.Finished].includes(recovering.status);
  eq([status(), recovering.task, running], [202, BackgroundTaskType.EndpointRecover, true], "recover is a task");
  const replaying = shaped("TaskOut", await svix.endpoint.replayMissing(app, ep.id, { since }));
  eq([status(), replaying.task], [202, BackgroundTaskType.EndpointReplay], "replay-missing is a task");

  // A catalog type with an example: hookgate's own API carries one, as in Python.
  const [typed] = await raw(ctx, "POST", "/v1/event-types", { name: "user.example", example: { id: 7 } });
  eq(typed, 201, "the example's type");
  const example = shaped("MessageOut", await svix.endpoint.sendExample(app, ep.id, { eventType: "user.example" }));
  eq([status(), example.eventType, example.payload], [200, "user.example", { id: 7 }], "send-example's message");
  await refused(() => svix.endpoint.sendExample(app, ep.id, { eventType: "no.such" }), 422, "an unknown type");

  const stats = shaped("EndpointStats", await svix.endpoint.getStats(app, ep.id));
  eq(["success", "fail", "pending", "sending", "canceled"].every((n) => Number.isInteger(stats[n])), true, "stats");

  ctx.endpoint = ep.id;
  ctx.seen.endpoint = ep.id;
  ctx.seen.example = example.id;
  await svix.endpoint.delete(app, own.id);
}

/** The endpoint's secret as the receiver should verify with, read last. */
export async function finalSecret(ctx) {
  return (await ctx.svix.endpoint.getSecret(ctx.app, ctx.endpoint)).key;
}
