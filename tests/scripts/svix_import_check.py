"""Checks what `hookgate import svix` made, through the official `svix` Python SDK.

Reads JSON from stdin:
  {"target": {"url": ..., "token": ...},
   "source": {"url": ..., "token": ...}   # a Svix server, read with the SDK too, or
   "export": {...},                        # the environment export imported
   "deliveries": [{"secret": "whsec_...", "headers": {...}, "body": "..."}]}

and exits non-zero, saying what differs, unless the target (hookgate's Svix face)
shows every application and endpoint of the source: the application by its Svix id
(or its uid), with its name, uid and metadata; each endpoint by its uid, or by its
Svix id when it had none, with its url, description, disabled, event types,
channels, metadata, rate, secret and headers. Each delivery must verify with
Svix's `Webhook` and the given (original) secret, reading the `svix-*` headers
only.
"""
import json
import sys

from svix.api import ApplicationListOptions, EndpointListOptions, Svix, SvixOptions
from svix.webhooks import Webhook

# The headers Svix never shows a value of.
SVIX_SENSITIVE = {"x-auth-token", "x-api-key", "www-authenticate", "authorization",
                  "proxy-authenticate", "proxy-authorization"}


def fail(what):
    print(what, file=sys.stderr)
    sys.exit(1)


def eq(got, want, what):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def client(side):
    return Svix(side["token"], SvixOptions(server_url=side["url"], retry_schedule=[]))


def every(list_page, options):
    """Every item of an SDK list, page by page."""
    items, iterator = [], None
    while True:
        page = list_page(options(limit=2, iterator=iterator))
        items += page.data
        if page.done or not page.data:
            return items
        iterator = page.iterator


def whsec(secret):
    return secret if secret is None or secret.startswith("whsec_") else "whsec_" + secret


def from_server(svix):
    """A Svix server's applications and endpoints as plain dicts."""
    apps = []
    for app in every(svix.application.list, ApplicationListOptions):
        endpoints = []
        for ep in every(lambda o: svix.endpoint.list(app.id, o), EndpointListOptions):
            headers = svix.endpoint.get_headers(app.id, ep.id)
            endpoints.append({
                "id": ep.id, "uid": ep.uid, "url": ep.url, "description": ep.description,
                "disabled": bool(ep.disabled), "types": sorted(ep.event_types or []),
                "channels": sorted(ep.channels or []), "metadata": ep.metadata,
                "rate": ep.throttle_rate, "secret": svix.endpoint.get_secret(app.id, ep.id).key,
                "headers": {k.lower(): v for k, v in headers.headers.items()},
                "sensitive": {s.lower() for s in headers.sensitive},
            })
        apps.append({"id": app.id, "uid": app.uid, "name": app.name,
                     "metadata": app.metadata, "endpoints": endpoints})
    return apps


def from_export(export):
    """An export's applications and endpoints as plain dicts."""
    apps = []
    for app in export.get("applications", []):
        endpoints = []
        for ep in app.get("endpoints", []):
            given = ep.get("headers") or {"headers": {}, "sensitive": []}
            endpoints.append({
                "id": ep["id"], "uid": ep.get("uid"), "url": ep["url"],
                "description": ep.get("description", ""), "disabled": bool(ep.get("disabled")),
                "types": sorted(ep.get("filterTypes") or ep.get("eventTypes") or []),
                "channels": sorted(ep.get("channels") or []), "metadata": ep.get("metadata", {}),
                "rate": ep.get("throttleRate", ep.get("rateLimit")), "secret": whsec(ep.get("secret")),
                "headers": {k.lower(): v for k, v in given["headers"].items()},
                "sensitive": {s.lower() for s in given.get("sensitive", [])},
            })
        apps.append({"id": app["id"], "uid": app.get("uid"), "name": app["name"],
                     "metadata": app.get("metadata", {}), "endpoints": endpoints})
    return apps


def check_application(svix, want):
    got = svix.application.get(want["uid"] or want["id"])
    where = f"application {want['id']}"
    if want["uid"] is None:
        eq(svix.application.get(want["id"]).id, got.id, f"{where}: its Svix id names it")
    eq(got.id in (want["id"], want["id"].lower()), True, f"{where}: its id ({got.id})")
    uid = want["uid"] if want["uid"] is not None or got.id == want["id"] else want["id"]
    eq((got.name, got.uid, got.metadata), (want["name"], uid, want["metadata"]), where)
    eps = every(lambda o: svix.endpoint.list(got.id, o), EndpointListOptions)
    eq(len(eps), len(want["endpoints"]), f"{where}: its endpoints")
    for ep in want["endpoints"]:
        check_endpoint(svix, got.id, ep, where)
    return len(eps)


def check_endpoint(svix, app_id, want, app_where):
    key = want["uid"] or want["id"]
    where = f"{app_where}, endpoint {want['id']}"
    got = svix.endpoint.get(app_id, key)
    eq(got.uid, key, f"{where}: its uid")
    fields = (got.url, got.description, bool(got.disabled), sorted(got.event_types or []),
              sorted(got.channels or []), got.metadata, got.throttle_rate)
    wanted = (want["url"], want["description"], want["disabled"], want["types"],
              want["channels"], want["metadata"], want["rate"])
    eq(fields, wanted, where)
    eq(svix.endpoint.get_secret(app_id, got.id).key, want["secret"], f"{where}: its secret")
    headers = svix.endpoint.get_headers(app_id, got.id)
    hidden = {s.lower() for s in headers.sensitive}
    for name, value in want["headers"].items():
        if name in SVIX_SENSITIVE or name in want["sensitive"]:
            eq(name in hidden, True, f"{where}: header {name} sensitive")
        else:
            eq(headers.headers.get(name), value, f"{where}: header {name}")


def main():
    data = json.load(sys.stdin)
    target = client(data["target"])
    if "source" in data:
        apps = from_server(client(data["source"]))
    else:
        apps = from_export(data["export"])
    if not apps:
        fail("the source has no applications to compare")
    endpoints = sum(check_application(target, app) for app in apps)
    for i, delivery in enumerate(data.get("deliveries", [])):
        headers = {k: v for k, v in delivery["headers"].items() if not k.lower().startswith("webhook-")}
        try:
            Webhook(delivery["secret"]).verify(delivery["body"], headers)
        except Exception as e:  # noqa: BLE001 - report any failure
            fail(f"delivery {i}: {type(e).__name__}: {e}")
    print(f"checked {len(apps)} applications, {endpoints} endpoints, "
          f"{len(data.get('deliveries', []))} deliveries")


main()
