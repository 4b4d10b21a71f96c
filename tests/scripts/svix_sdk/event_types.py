"""Event types: create, get, list (paging, content, archived), upsert (PUT,
creating then replacing), patch (schemas replaced whole), delete (archives)
and expunge, and the refusals: a taken name, feature flags, no description,
a descending list."""

import httpx
from svix.api import (
    EventTypeDeleteOptions,
    EventTypeIn,
    EventTypeListOptions,
    EventTypePatch,
    EventTypeUpsertIn,
    Ordering,
)

from check import eq, refused

AMOUNT = {"1": {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}}
EMAIL = {"1": {"type": "object", "properties": {"email": {"type": "string"}}}}


def raw(ctx, method, path, body=None):
    """A request as Svix's API takes it; answers the status and the JSON."""
    r = httpx.request(method, ctx["base"] + path, json=body, headers={"authorization": f"Bearer {ctx['token']}"})
    return r.status_code, (r.json() if r.content else None)


def listed(svix, **options):
    """Every type the list shows, page by page (2 a page)."""
    types, iterator = [], None
    while True:
        page = svix.event_type.list(EventTypeListOptions(limit=2, iterator=iterator, **options))
        types += page.data
        if page.done:
            return [t.name for t in types], types
        iterator = page.iterator


def run(ctx):
    svix = ctx["svix"]
    paid = svix.event_type.create(
        EventTypeIn(name="invoice.paid", description="An invoice was paid", schemas=AMOUNT, group_name="billing")
    )
    eq(
        (paid.name, paid.description, paid.schemas, paid.group_name, paid.archived, paid.deprecated),
        ("invoice.paid", "An invoice was paid", AMOUNT, "billing", False, False),
        "created",
    )
    eq(paid.feature_flags, None, "no feature flags")
    got = svix.event_type.get("invoice.paid")
    eq((got.schemas, got.created_at, got.group_name), (AMOUNT, paid.created_at, "billing"), "get")
    for name in ("user.signup", "user.deleted", "order.created"):
        svix.event_type.create(EventTypeIn(name=name, description=f"{name} happened"))

    e = refused(lambda: svix.event_type.create(EventTypeIn(name="invoice.paid", description="again")), 409, "a taken name")
    eq(e.code, "conflict", "the conflict's code")
    e = refused(
        lambda: svix.event_type.create(EventTypeIn(name="flagged", description="x", feature_flags=["beta"])),
        422,
        "feature flags",
    )
    eq(e.detail[0].loc, ["body", "featureFlags"], "featureFlags named")
    # This SDK no longer sends the singular `featureFlag`: over the wire as Svix's API names it.
    status, body = raw(ctx, "POST", "/api/v1/event-type", {"name": "flagged", "description": "x", "featureFlag": "beta"})
    eq((status, body["detail"][0]["loc"]), (422, ["body", "featureFlag"]), "featureFlag named")
    status, body = raw(ctx, "POST", "/api/v1/event-type", {"name": "undescribed"})
    eq((status, body["detail"][0]["loc"]), (422, ["body", "description"]), "description required")
    refused(lambda: svix.event_type.get("flagged"), 404, "nothing made of a refusal")

    names, types = listed(svix)
    eq(names, ["invoice.paid", "order.created", "user.deleted", "user.signup"], "listed in name order, paged")
    eq({t.schemas for t in types}, {None}, "no schemas without content")
    page = svix.event_type.list(EventTypeListOptions(with_content=True))
    eq({t.name: t.schemas for t in page.data}["invoice.paid"], AMOUNT, "schemas with content")
    e = refused(lambda: svix.event_type.list(EventTypeListOptions(order=Ordering.DESCENDING)), 422, "descending")
    eq(e.detail[0].loc, ["query", "order"], "order named")

    # PUT creates (201), then replaces: a flag or schema left out is gone.
    status, body = raw(ctx, "PUT", "/api/v1/event-type/user.updated", {"description": "A user changed", "schemas": EMAIL})
    eq((status, body["name"], body["schemas"]), (201, "user.updated", EMAIL), "PUT creates")
    up = svix.event_type.upsert("user.updated", EventTypeUpsertIn(description="Changed", deprecated=True, schemas=AMOUNT))
    eq((up.description, up.deprecated, up.schemas), ("Changed", True, AMOUNT), "PUT replaces")
    up = svix.event_type.upsert("user.updated", EventTypeUpsertIn(description="Changed again"))
    eq((up.description, up.deprecated, up.schemas, up.group_name), ("Changed again", False, None, None), "PUT resets")

    patched = svix.event_type.patch("invoice.paid", EventTypePatch(description="Paid", deprecated=True))
    eq((patched.description, patched.deprecated, patched.schemas, patched.group_name), ("Paid", True, AMOUNT, "billing"), "PATCH keeps the rest")
    patched = svix.event_type.patch("invoice.paid", EventTypePatch(schemas={"2": EMAIL["1"]}))
    eq(patched.schemas, {"2": EMAIL["1"]}, "PATCH replaces the schemas whole")
    refused(lambda: svix.event_type.patch("nope", EventTypePatch(description="x")), 404, "patching no type")

    svix.event_type.delete("user.deleted")
    eq(svix.event_type.get("user.deleted").archived, True, "delete archives")
    names, _ = listed(svix)
    eq("user.deleted" in names, False, "archived types left out")
    names, _ = listed(svix, include_archived=True)
    eq("user.deleted" in names, True, "archived types on demand")
    svix.event_type.delete("user.deleted", EventTypeDeleteOptions(expunge=True))
    refused(lambda: svix.event_type.get("user.deleted"), 404, "expunged")
    ctx["seen"]["event_types"] = sorted(listed(svix)[0])
