// Health, and applications: create (and getOrCreate), get by id and uid, list
// with paging, upsert (PUT, replacing and creating), patch, delete, and the errors.
import { eq, raw, refused, shaped } from "./check.mjs";

export async function run(ctx) {
  const { svix, status } = ctx;
  await svix.health.get();
  eq(status(), 204, "health");

  const app = shaped("ApplicationOut", await svix.application.create({ name: "Acme", uid: "acme-app", metadata: { plan: "pro" } }));
  eq([app.id.startsWith("app_"), status()], [true, 201], "an app_ id, created");
  eq([app.name, app.uid, app.metadata], ["Acme", "acme-app", { plan: "pro" }], "created");
  eq((await svix.application.get("acme-app")).id, app.id, "its uid names it");
  const again = shaped("ApplicationOut", await svix.application.getOrCreate({ name: "Other", uid: "acme-app" }));
  eq([again.id, again.name, status()], [app.id, "Acme", 200], "getOrCreate finds it by uid");
  let e = await refused(() => svix.application.create({ name: "Dup", uid: "acme-app" }), 409, "a taken uid");
  eq(e.code, "conflict", "the conflict's code");
  e = await refused(() => svix.application.get("app_nope"), 404, "an unknown app");
  eq(e.code, "not_found", "the 404's code");
  e = await refused(() => svix.application.create({ name: "Bad", uid: "no spaces" }), 422, "a bad uid");
  eq(e.detail[0].loc[0], "body", "a validation error in the body");

  // Bad query values are Svix's 422 at the parameter, never a bare 400. The
  // SDK always sends get_if_exists=true: a bad one goes over the wire, as in Python.
  const [code, body] = await raw(ctx, "POST", "/api/v1/app?get_if_exists=maybe", { name: "x" });
  eq([code, body.detail[0].loc], [422, ["query", "get_if_exists"]], "a bad get_if_exists");
  e = await refused(() => svix.application.list({ limit: 0 }), 422, "a bad limit");
  eq(e.detail[0].loc, ["query", "limit"], "the limit named");

  for (let n = 0; n < 3; n++) await svix.application.create({ name: `Spare ${n}` });
  const first = shaped("ApplicationOut", await svix.application.list({ limit: 2 }));
  eq([first.data.length, first.done], [2, false], "a first page of 2");
  const rest = shaped("ApplicationOut", await svix.application.list({ limit: 50, iterator: first.iterator }));
  const ids = [...first.data, ...rest.data].map((a) => a.id);
  eq(ids.length, new Set(ids).size, "no app twice across pages");
  eq(ids.includes(app.id) && rest.done, true, "every app listed, then done");

  // This SDK has the PUT the Python one lacks: upsert.
  const updated = shaped("ApplicationOut", await svix.application.upsert(app.id, { name: "Acme Corp", uid: "acme-app", metadata: { tier: "1" } }));
  eq([status(), updated.id, updated.name, updated.metadata], [200, app.id, "Acme Corp", { tier: "1" }], "PUT replaces");
  let upserted = shaped("ApplicationOut", await svix.application.upsert("made-by-put", { name: "Upserted" }));
  eq([status(), upserted.uid, upserted.name], [201, "made-by-put", "Upserted"], "PUT creates what is not there");
  upserted = await svix.application.get(upserted.id);
  const patched = shaped("ApplicationOut", await svix.application.patch(app.id, { name: "Acme Inc" }));
  eq([patched.name, patched.metadata], ["Acme Inc", { tier: "1" }], "PATCH keeps the rest");
  await svix.application.delete(upserted.id);
  eq(status(), 204, "deleted");
  await refused(() => svix.application.get(upserted.id), 404, "a deleted app");
  ctx.app = app.id;
  ctx.seen.app = app.id;
}
