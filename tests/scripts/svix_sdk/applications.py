"""Applications: create (and get_or_create), get by id and uid, list with
paging, update (PUT, also upserting), patch, delete, and the errors."""

from svix.api import ApplicationIn, ApplicationListOptions, ApplicationPatch

import httpx

from check import eq, refused


def put(ctx, path, body):
    """A PUT as Svix's API takes it; answers the status and the JSON."""
    r = httpx.put(ctx["base"] + path, json=body, headers={"authorization": f"Bearer {ctx['token']}"})
    return r.status_code, r.json()


def run(ctx):
    svix = ctx["svix"]
    app = svix.application.create(ApplicationIn(name="Acme", uid="acme-app", metadata={"plan": "pro"}))
    eq(app.id.startswith("app_"), True, "an app_ id")
    eq((app.name, app.uid, app.metadata), ("Acme", "acme-app", {"plan": "pro"}), "created")
    eq(svix.application.get("acme-app").id, app.id, "its uid names it")
    again = svix.application.get_or_create(ApplicationIn(name="Other", uid="acme-app"))
    eq(again.id, app.id, "get_or_create finds it by uid")
    e = refused(lambda: svix.application.create(ApplicationIn(name="Dup", uid="acme-app")), 409, "a taken uid")
    eq(e.code, "conflict", "the conflict's code")
    e = refused(lambda: svix.application.get("app_nope"), 404, "an unknown app")
    eq(e.code, "not_found", "the 404's code")
    e = refused(lambda: svix.application.create(ApplicationIn(name="Bad", uid="no spaces")), 422, "a bad uid")
    eq(e.detail[0].loc[0], "body", "a validation error in the body")

    # Bad query values are Svix's 422 at the parameter, never a bare 400.
    for path, param in [("/api/v1/app?get_if_exists=maybe", "get_if_exists"), ("/api/v1/app?limit=0", "limit")]:
        method = "POST" if "get_if_exists" in path else "GET"
        r = httpx.request(method, ctx["base"] + path, json={"name": "x"}, headers={"authorization": f"Bearer {ctx['token']}"})
        eq((r.status_code, r.json()["detail"][0]["loc"]), (422, ["query", param]), f"a bad {param}")

    for n in range(3):
        svix.application.create(ApplicationIn(name=f"Spare {n}"))
    first = svix.application.list(ApplicationListOptions(limit=2))
    eq((len(first.data), first.done), (2, False), "a first page of 2")
    rest = svix.application.list(ApplicationListOptions(limit=50, iterator=first.iterator))
    ids = [a.id for a in first.data + rest.data]
    eq(len(ids), len(set(ids)), "no app twice across pages")
    eq(app.id in ids and rest.done, True, "every app listed, then done")

    # This SDK has no application update: PUT goes over the wire as Svix's API names it.
    status, updated = put(ctx, f"/api/v1/app/{app.id}", {"name": "Acme Corp", "uid": "acme-app", "metadata": {"tier": "1"}})
    eq((status, updated["name"], updated["metadata"]), (200, "Acme Corp", {"tier": "1"}), "PUT replaces")
    status, upserted = put(ctx, "/api/v1/app/made-by-put", {"name": "Upserted"})
    eq((status, upserted["uid"], upserted["name"]), (201, "made-by-put", "Upserted"), "PUT creates what is not there")
    upserted = svix.application.get(upserted["id"])
    patched = svix.application.patch(app.id, ApplicationPatch(name="Acme Inc"))
    eq((patched.name, patched.metadata), ("Acme Inc", {"tier": "1"}), "PATCH keeps the rest")
    svix.application.delete(upserted.id)
    refused(lambda: svix.application.get(upserted.id), 404, "a deleted app")
    ctx["app"] = app.id
    ctx["seen"]["app"] = app.id
