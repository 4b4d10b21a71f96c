// Event types: create, get, list (paging, content, archived), upsert (PUT,
// creating then replacing), patch (schemas replaced whole), delete (archives)
// and expunge, and the refusals: a taken name, feature flags, no description,
// a descending list.
import { Ordering } from "svix";

import { eq, raw, refused, shaped, sorted } from "./check.mjs";

const AMOUNT = { 1: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] } };
const EMAIL = { 1: { type: "object", properties: { email: { type: "string" } } } };

/** Every type the list shows, page by page (2 a page): their names, and them. */
async function listed(svix, options = {}) {
  const types = [];
  let iterator = null;
  for (;;) {
    const page = shaped("EventTypeOut", await svix.eventType.list({ limit: 2, iterator, ...options }));
    types.push(...page.data);
    if (page.done) return [types.map((t) => t.name), types];
    iterator = page.iterator;
  }
}

export async function run(ctx) {
  const { svix, status } = ctx;
  const paid = shaped(
    "EventTypeOut",
    await svix.eventType.create({ name: "invoice.paid", description: "An invoice was paid", schemas: AMOUNT, groupName: "billing" }),
  );
  eq(
    [status(), paid.name, paid.description, paid.schemas, paid.groupName, paid.archived, paid.deprecated],
    [201, "invoice.paid", "An invoice was paid", AMOUNT, "billing", false, false],
    "created",
  );
  eq(paid.featureFlags ?? null, null, "no feature flags");
  const got = shaped("EventTypeOut", await svix.eventType.get("invoice.paid"));
  eq([got.schemas, got.createdAt, got.groupName], [AMOUNT, paid.createdAt, "billing"], "get");
  for (const name of ["user.signup", "user.deleted", "order.created"]) {
    await svix.eventType.create({ name, description: `${name} happened` });
  }

  let e = await refused(() => svix.eventType.create({ name: "invoice.paid", description: "again" }), 409, "a taken name");
  eq(e.code, "conflict", "the conflict's code");
  e = await refused(() => svix.eventType.create({ name: "flagged", description: "x", featureFlags: ["beta"] }), 422, "feature flags");
  eq(e.detail[0].loc, ["body", "featureFlags"], "featureFlags named");
  // This SDK's model has no singular `featureFlag` to send: over the wire, as in Python.
  const [code, body] = await raw(ctx, "POST", "/api/v1/event-type", { name: "flagged", description: "x", featureFlag: "beta" });
  eq([code, body.detail[0].loc], [422, ["body", "featureFlag"]], "featureFlag named");
  // Its types are TypeScript's only: a description left out goes out as such.
  e = await refused(() => svix.eventType.create({ name: "undescribed" }), 422, "no description");
  eq(e.detail[0].loc, ["body", "description"], "description required");
  await refused(() => svix.eventType.get("flagged"), 404, "nothing made of a refusal");

  let [names, types] = await listed(svix);
  eq(names, ["invoice.paid", "order.created", "user.deleted", "user.signup"], "listed in name order, paged");
  eq(types.every((t) => t.schemas == null), true, "no schemas without content");
  const page = await svix.eventType.list({ withContent: true });
  eq(page.data.find((t) => t.name === "invoice.paid").schemas, AMOUNT, "schemas with content");
  e = await refused(() => svix.eventType.list({ order: Ordering.Descending }), 422, "descending");
  eq(e.detail[0].loc, ["query", "order"], "order named");

  // PUT creates (201), then replaces: a flag or schema left out is gone.
  let up = shaped("EventTypeOut", await svix.eventType.upsert("user.updated", { description: "A user changed", schemas: EMAIL }));
  eq([status(), up.name, up.schemas], [201, "user.updated", EMAIL], "PUT creates");
  up = shaped("EventTypeOut", await svix.eventType.upsert("user.updated", { description: "Changed", deprecated: true, schemas: AMOUNT }));
  eq([status(), up.description, up.deprecated, up.schemas], [200, "Changed", true, AMOUNT], "PUT replaces");
  up = await svix.eventType.upsert("user.updated", { description: "Changed again" });
  eq([up.description, up.deprecated, up.schemas ?? null, up.groupName ?? null], ["Changed again", false, null, null], "PUT resets");

  let patched = shaped("EventTypeOut", await svix.eventType.patch("invoice.paid", { description: "Paid", deprecated: true }));
  eq([patched.description, patched.deprecated, patched.schemas, patched.groupName], ["Paid", true, AMOUNT, "billing"], "PATCH keeps the rest");
  patched = await svix.eventType.patch("invoice.paid", { schemas: { 2: EMAIL[1] } });
  eq(patched.schemas, { 2: EMAIL[1] }, "PATCH replaces the schemas whole");
  await refused(() => svix.eventType.patch("nope", { description: "x" }), 404, "patching no type");

  await svix.eventType.delete("user.deleted");
  eq(status(), 204, "deleted");
  eq((await svix.eventType.get("user.deleted")).archived, true, "delete archives");
  [names] = await listed(svix);
  eq(names.includes("user.deleted"), false, "archived types left out");
  [names] = await listed(svix, { includeArchived: true });
  eq(names.includes("user.deleted"), true, "archived types on demand");
  await svix.eventType.delete("user.deleted", { expunge: true });
  await refused(() => svix.eventType.get("user.deleted"), 404, "expunged");
  ctx.seen.event_types = sorted((await listed(svix))[0]);
}
