"""Endpoints: create (Svix's fields, and hookgate's under `hookgate`), get by
id and uid, list with paging, upsert, patch, headers, the secret and its
rotation, recover, replay-missing, send-example, stats, delete, and errors."""

from datetime import datetime, timedelta, timezone

import httpx
from svix.api import (
    EndpointHeadersIn,
    EndpointHeadersPatchIn,
    EndpointIn,
    EndpointListOptions,
    EndpointPatch,
    EndpointSecretRotateIn,
    EndpointUpsertIn,
    EventExampleIn,
    RecoverIn,
    ReplayIn,
)

from check import eq, refused


def raw(ctx, method, path, body=None):
    """A request as Svix's API takes it; answers the status and the JSON."""
    r = httpx.request(method, ctx["base"] + path, json=body, headers={"authorization": f"Bearer {ctx['token']}"})
    return r.status_code, (r.json() if r.content else None)


def run(ctx):
    svix, app, url = ctx["svix"], ctx["app"], ctx["receiver"]
    ep = svix.endpoint.create(
        app,
        EndpointIn(
            url=url,
            uid="orders",
            description="Orders",
            event_types=["user.signup", "invoice.paid"],
            channels=["eu"],
            metadata={"team": "billing"},
            throttle_rate=50,
            headers={"x-plain": "p-1"},
        ),
    )
    eq(ep.id.startswith("ep_"), True, "an ep_ id")
    eq((ep.uid, ep.description, ep.throttle_rate), ("orders", "Orders", 50), "created")
    eq((sorted(ep.event_types), ep.channels, ep.metadata), (["invoice.paid", "user.signup"], ["eu"], {"team": "billing"}), "its filters")
    eq(svix.endpoint.get(app, "orders").id, ep.id, "its uid names it")
    e = refused(lambda: svix.endpoint.create(app, EndpointIn(url="not a url")), 422, "a bad url")
    eq(e.detail[0].loc, ["body", "url"], "the refused field")
    refused(lambda: svix.endpoint.get(app, "ep_nope"), 404, "an unknown endpoint")
    refused(lambda: svix.endpoint.create(app, EndpointIn(url=url, uid="orders")), 409, "a taken uid")

    # hookgate's own fields, under `hookgate`, go in and come out.
    status, own = raw(ctx, "POST", f"/api/v1/app/{app}/endpoint",
                      {"url": url, "hookgate": {"policy": {"max_attempts": 3}, "timeout_ms": 2000}})
    eq((status, own["hookgate"]["policy"], own["hookgate"]["timeout_ms"]), (201, {"max_attempts": 3}, 2000), "the hookgate extension")
    status, bad = raw(ctx, "POST", f"/api/v1/app/{app}/endpoint", {"url": url, "hookgate": {"nope": 1}})
    eq((status, bad["detail"][0]["loc"]), (422, ["body", "hookgate.nope"]), "an unknown hookgate field")

    first = svix.endpoint.list(app, EndpointListOptions(limit=1))
    eq((len(first.data), first.done), (1, False), "a first page of 1")
    rest = svix.endpoint.list(app, EndpointListOptions(limit=10, iterator=first.iterator))
    eq(sorted([x.id for x in first.data + rest.data]), sorted([ep.id, own["id"]]), "both endpoints, once")

    up = svix.endpoint.upsert(app, "orders", EndpointUpsertIn(url=url, uid="orders", description="Orders v2"))
    eq((up.id, up.description, up.event_types, up.throttle_rate), (ep.id, "Orders v2", None, None), "PUT replaces (every type)")
    made = svix.endpoint.upsert(app, "made-by-put", EndpointUpsertIn(url=url))
    eq(made.uid, "made-by-put", "PUT creates what is not there")
    svix.endpoint.delete(app, made.id)
    refused(lambda: svix.endpoint.get(app, made.id), 404, "a deleted endpoint")
    patched = svix.endpoint.patch(app, ep.id, EndpointPatch(description="Orders v3", channels=None))
    eq((patched.description, patched.channels), ("Orders v3", None), "PATCH")

    svix.endpoint.set_headers(app, ep.id, EndpointHeadersIn(headers={"x-one": "1", "x-two": "2"}))
    svix.endpoint.patch_headers(app, ep.id, EndpointHeadersPatchIn(headers={"x-two": "2b", "x-three": "3"}))
    eq(svix.endpoint.get_headers(app, ep.id).headers, {"x-one": "1", "x-two": "2b", "x-three": "3"}, "headers set, then patched")
    svix.endpoint.patch_headers(app, ep.id, EndpointHeadersPatchIn(headers={}, delete_headers=["x-three"]))
    eq(svix.endpoint.get_headers(app, ep.id).headers, {"x-one": "1", "x-two": "2b"}, "deleteHeaders removes one")
    svix.endpoint.set_headers(app, ep.id, EndpointHeadersIn(headers={"x-one": "1"}))
    eq(svix.endpoint.get_headers(app, ep.id).headers, {"x-one": "1"}, "a PUT of headers replaces them")

    secret = svix.endpoint.get_secret(app, ep.id).key
    eq(secret.startswith("whsec_"), True, "a whsec_ secret")
    rotated = svix.endpoint.rotate_secret(app, ep.id, EndpointSecretRotateIn())
    eq(rotated.key != secret and rotated.key == svix.endpoint.get_secret(app, ep.id).key, True, "a new secret")

    since = datetime.now(timezone.utc) - timedelta(hours=1)
    recovering = svix.endpoint.recover(app, ep.id, RecoverIn(since=since))
    eq((recovering.task, str(recovering.status) in ("running", "finished")), ("endpoint.recover", True), "recover is a task")
    replaying = svix.endpoint.replay_missing(app, ep.id, ReplayIn(since=since))
    eq(replaying.task, "endpoint.replay", "replay-missing is a task")

    # A catalog type with an example (hookgate's catalog carries one).
    r = httpx.post(ctx["base"] + "/v1/event-types", json={"name": "user.example", "example": {"id": 7}},
                   headers={"authorization": f"Bearer {ctx['token']}"})
    eq(r.status_code, 201, "the example's type")
    example = svix.endpoint.send_example(app, ep.id, EventExampleIn(event_type="user.example"))
    eq((example.event_type, example.payload), ("user.example", {"id": 7}), "send-example's message")
    refused(lambda: svix.endpoint.send_example(app, ep.id, EventExampleIn(event_type="no.such")), 422, "an unknown type")

    stats = svix.endpoint.get_stats(app, ep.id)
    eq(all(isinstance(n, int) for n in (stats.success, stats.fail, stats.pending, stats.sending, stats.canceled)), True, "stats")

    ctx["endpoint"] = ep.id
    ctx["seen"]["endpoint"] = ep.id
    ctx["seen"]["example"] = example.id
    svix.endpoint.delete(app, own["id"])


def final_secret(ctx):
    """The endpoint's secret as the receiver should verify with, read last."""
    return ctx["svix"].endpoint.get_secret(ctx["app"], ctx["endpoint"]).key
