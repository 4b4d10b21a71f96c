"""Fuzzes the gateway's API v1 with Schemathesis against its own OpenAPI document.

Run by tests/tests/it/openapi_contract.rs against a gateway it has set up (tenant,
endpoints, deliveries, an event, plugins). Says what to pin each operation's path
parameters to and which checks to turn off for one operation (each with why);
schemathesis_run.py runs and reports it, and exits non-zero if Schemathesis found
failures or an operation never got a 2xx answer.
"""

import argparse
import pathlib
import sys

import schemathesis_run

# Operations not fuzzed at all, by role, each with why. As the admin nothing
# is excluded: rotating the tenant's key revokes no credential the run uses, and
# the destructive operations are pinned to spare fixtures (see `pins`).
EXCLUDED = {
    "admin": {},
    "tenant": {
        "POST /v1/tenants/{t}/rotate-key": "it would revoke the tenant key the run authenticates with",
    },
}

# Admin-only operations: a tenant key gets 403 there, never a 2xx.
ADMIN_ONLY = (
    "GET /v1/tenants",
    "POST /v1/tenants",
    "PATCH /v1/tenants/{t}",
    "DELETE /v1/tenants/{t}",
    "GET /v1/tasks",
    "GET /v1/tasks/{id}",
    "GET /v1/stats",
    "GET /v1/stats/history",
    "GET /v1/dlq/summary",
    "GET /v1/cluster",
    "POST /v1/event-types",
    "POST /v1/event-types/import",
    "PATCH /v1/event-types/{name}",
    "DELETE /v1/event-types/{name}",
    "GET /v1/operator-endpoints",
    "POST /v1/operator-endpoints",
    "GET /v1/operator-endpoints/{id}",
    "PATCH /v1/operator-endpoints/{id}",
    "DELETE /v1/operator-endpoints/{id}",
)

# Checks turned off for one operation, each with why: there, what the check
# expects is not something the API can promise, so a failure is no defect.
CHECKS_OFF = {
    "POST /v1/tenants": {
        "missing_required_header": "its coverage case without Authorization went out with the config's Authorization header (a 409 for the existing tenant, where the gateway answers 401 to a request without a token, as idempotent_calls checks); seen since the operation declares a header parameter",
    },
    "POST /v1/policy/simulate": {
        "positive_data_acceptance": "the policy object's rules across fields (a strategy's own parameters, preset or policy but not both) are not JSON Schema; each refusal is a 422 naming the field",
    },
    "POST /v1/tenants/{t}/endpoints": {
        "positive_data_acceptance": "the policy object's rules across fields, and outbound.allow_only (the operator's egress list, not the document's), refuse with a 422 naming the field",
        "ensure_resource_availability": "DELETE .../endpoints/{id} is pinned to the spare endpoint, so the check's DELETE removes (or finds removed) that one, not the endpoint its POST made",
    },
    "DELETE /v1/tenants/{t}/endpoints/{id}": {
        "ensure_resource_availability": "in the stateful phase one chain may delete a created endpoint twice, and the second, correct 404 is reported as the endpoint missing after creation (schemathesis#3588); create then delete is checked by api_endpoints::endpoint_lifecycle",
    },
    "PATCH /v1/tenants/{t}/endpoints/{id}": {
        "positive_data_acceptance": "as for POST: the policy object's rules across fields and outbound.allow_only",
    },
    "PUT /v1/tenants/{t}/endpoints/{id}": {
        "positive_data_acceptance": "as for POST, and the body's uid must be the path's: a rule across fields",
    },
    "POST /v1/tenants/{t}/endpoints/{id}/recover": {
        "positive_data_acceptance": "until must come after since: a rule across fields, a 422 naming until",
    },
    "POST /v1/tenants/{t}/endpoints/{id}/replay-missing": {
        "positive_data_acceptance": "until must come after since: a rule across fields, a 422 naming until",
    },
    "POST /v1/tenants/{t}/replay": {
        "positive_data_acceptance": "dead_reason applies to state dead only: a rule across fields, a 422 naming dead_reason",
    },
    "GET /v1/stats/history": {
        "positive_data_acceptance": "until must come after since (now when absent): a rule across fields, a 422 naming until",
    },
    "GET /v1/tenants/{t}/stats/history": {
        "positive_data_acceptance": "until must come after since (now when absent): a rule across fields, a 422 naming until",
    },
    "POST /v1/tenants/{t}/portal-sessions": {
        "positive_data_acceptance": "each of endpoints must name an endpoint of the tenant: the store's state, which no schema can state; a 422 naming endpoints[i]",
    },
    "GET /v1/tenants/{t}/endpoints/{id}/stats": {
        "positive_data_acceptance": "until must come after since (now when absent): a rule across fields, a 422 naming until",
    },
    "POST /v1/tenants/{t}/endpoints/{id}/send-example": {
        "positive_data_acceptance": "the event type must be in the catalog, not archived, with an example: the catalog's state, which no schema can state; a 422 naming event_type",
    },
    "POST /v1/event-types": {
        "missing_required_header": "as for POST /v1/tenants: its coverage case without Authorization went out with the config's Authorization header (a 409 for the type the run made already)",
        "ensure_resource_availability": "as for POST .../endpoints: GET, PATCH and DELETE /v1/event-types/{name} are pinned to fixture types (DELETE to the spare one), not the type its POST made; create, read and delete are checked by event_catalog",
        "positive_data_acceptance": "a schema must be a JSON Schema referring only within itself, the example must match the latest schema, validate needs a schema: rules of JSON Schema and across fields, each a 422 naming the field",
    },
    "DELETE /v1/event-types/{name}": {
        "ensure_resource_availability": "pinned to the spare fixture type, so in the stateful phase it removes (or finds removed) that one, not the type a POST made; create then delete is checked by event_catalog",
    },
    "PATCH /v1/event-types/{name}": {
        "positive_data_acceptance": "as for POST /v1/event-types",
    },
    "POST /v1/event-types/import": {
        "missing_required_header": "as for POST /v1/tenants: its coverage case without Authorization went out with the config's Authorization header (a 422 for its document without webhooks)",
        "positive_data_acceptance": "a document needs its webhooks under webhooks or x-webhooks (one of two, not null): a rule across fields, a 422 naming webhooks",
    },
    "POST /v1/operator-endpoints": {
        "missing_required_header": "as for POST /v1/tenants: its coverage case without Authorization went out with the config's Authorization header (a 403 for a tenant key, a 422 for the admin's when its body is refused)",
        "positive_data_acceptance": "each event_types entry must name an operator event type (a list the code keeps, not a pattern a schema can state), and outbound.allow_only refuses other URLs; each a 422 naming the field; past 20 per namespace, a 422 naming operator_endpoints",
        "ensure_resource_availability": "as for POST .../endpoints: GET, PATCH and DELETE .../operator-endpoints/{id} are pinned to fixture operator endpoints (DELETE to the spare one), not the one its POST made; create, read and delete are checked by operator_events and the CLI's operator_endpoints",
    },
    "PATCH /v1/operator-endpoints/{id}": {
        "positive_data_acceptance": "as for POST /v1/operator-endpoints",
    },
    "DELETE /v1/operator-endpoints/{id}": {
        "ensure_resource_availability": "as for DELETE .../endpoints/{id}: pinned to the spare operator endpoint, removed (or found removed) more than once",
    },
    "POST /v1/tenants/{t}/operator-endpoints": {
        "missing_required_header": "as for POST /v1/operator-endpoints",
        "positive_data_acceptance": "as for POST /v1/operator-endpoints",
        "ensure_resource_availability": "as for POST /v1/operator-endpoints",
    },
    "PATCH /v1/tenants/{t}/operator-endpoints/{id}": {
        "positive_data_acceptance": "as for POST /v1/operator-endpoints",
    },
    "DELETE /v1/tenants/{t}/operator-endpoints/{id}": {
        "ensure_resource_availability": "as for DELETE /v1/operator-endpoints/{id}",
    },
    "PUT /v1/tenants/{t}/plugins/{name}": {
        "positive_data_acceptance": "a module's content is judged by the upload checks (magic, compile, conformance), which no schema can state",
    },
}

# Statuses a check takes as expected for one operation, beyond its own, with why.
EXTRA_STATUSES = {
    "POST /v1/tenants/{t}/events": (
        "positive_data_acceptance",
        ["422"],
        "deliver_at more than 30 days ahead, a bound no schema can state of a time, is a 422 naming deliver_at",
    ),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base", required=True, help="the gateway, e.g. http://127.0.0.1:PORT")
    p.add_argument("--token", required=True, help="the admin token, or with --role tenant the tenant's key")
    p.add_argument("--role", choices=("admin", "tenant"), default="admin")
    p.add_argument("--tenant", required=True)
    p.add_argument("--endpoint", required=True, help="an endpoint the run may change")
    p.add_argument("--spare-endpoint", required=True, help="the endpoint DELETE may remove")
    p.add_argument("--operator-endpoint", required=True, help="an operator endpoint of the admin's the run may change")
    p.add_argument("--spare-operator-endpoint", required=True, help="the admin's operator endpoint DELETE may remove")
    p.add_argument("--tenant-operator-endpoint", required=True, help="an operator endpoint of the tenant's the run may change")
    p.add_argument("--spare-tenant-operator-endpoint", required=True, help="the tenant's operator endpoint DELETE may remove")
    p.add_argument("--delivery", required=True)
    p.add_argument("--event", required=True)
    p.add_argument("--plugin", required=True, help="a plugin with two versions")
    p.add_argument("--spare-plugin", required=True, help="the plugin DELETE may remove")
    p.add_argument("--spare-tenant", required=True, help="the tenant DELETE may remove")
    p.add_argument("--spare-event", required=True, help="the event whose payload DELETE may expunge")
    p.add_argument("--event-type", required=True, help="a catalog type with an example, left unchanged")
    p.add_argument("--patched-event-type", required=True, help="the catalog type PATCH may change")
    p.add_argument("--spare-event-type", required=True, help="the catalog type DELETE may remove")
    p.add_argument("--task", required=True, help="a task of the tenant")
    p.add_argument("--receiver", required=True, help="a URL endpoints may point at")
    p.add_argument("--wasm", required=True, help="a plugin module uploads may send")
    p.add_argument("--workdir", required=True)
    p.add_argument("--spec", help="a document file to use instead of the gateway's /v1/openapi.json")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--max-examples", type=int, default=25)
    p.add_argument("--time-limit", type=float, default=170.0, help="seconds for the whole run")
    return p.parse_args()


def pins(name, args):
    """The path parameters an operation is pinned to, beyond the tenant `t`."""
    method, path = name.split(" ", 1)
    if path == "/v1/tenants/{t}" and method == "DELETE":
        return {"path.t": args.spare_tenant}
    if "/tasks/{id}" in path:
        return {"path.id": args.task}
    if path == "/v1/operator-endpoints/{id}":
        return {"path.id": args.spare_operator_endpoint if method == "DELETE" else args.operator_endpoint}
    if path.endswith("/operator-endpoints/{id}"):
        by_method = {"DELETE": args.spare_tenant_operator_endpoint}
        return {"path.id": by_method.get(method, args.tenant_operator_endpoint)}
    if path.endswith("/endpoints/{id}") and method == "DELETE":
        return {"path.id": args.spare_endpoint}
    if "/endpoints/{id}" in path:
        return {"path.id": args.endpoint}
    if "/deliveries/{id}" in path:
        return {"path.id": args.delivery}
    if path.endswith("/events/{id}/payload"):
        return {"path.id": args.spare_event}
    if "/events/{id}" in path:
        return {"path.id": args.event}
    if path == "/v1/event-types/{name}":
        # Each method its own type: a patch may archive one or drop its
        # example, which send-example needs of the type it sends.
        by_method = {"DELETE": args.spare_event_type, "PATCH": args.patched_event_type}
        return {"path.name": by_method.get(method, args.event_type)}
    if path.endswith("/plugins/{name}") and method == "DELETE":
        return {"path.name": args.spare_plugin}
    if "/plugins/{name}" in path:
        return {"path.name": args.plugin}
    return {}


def no_2xx_expected(role):
    """Operations fuzzed and checked but not expected to answer 2xx, with why."""
    never = {"GET /v1/portal-session": "only a portal session has one: the run's token is a key or the admin's (404); portal_sessions checks it",
             "DELETE /v1/portal-session": "as GET: only a portal session can end itself (404 for a key or the admin's); portal_sessions checks it"}
    if role == "tenant":
        return never | {name: "admin only: a tenant key gets 403" for name in ADMIN_ONLY}
    return never


def main():
    args = parse_args()
    spec = schemathesis_run.fetch_spec(args.base, "/v1/openapi.json", args.workdir, args.spec)
    plan = schemathesis_run.Plan(
        parameters={
            "path.t": schemathesis_run.toml_string(args.tenant),
            # Most generated URLs fall outside outbound.allow_only; offer one inside it.
            "body.url": '{ dictionary = "urls", probability = 0.5 }',
        },
        dictionaries={"urls": [args.receiver]},
        pins=lambda name: pins(name, args),
        excluded=EXCLUDED[args.role],
        no_2xx=no_2xx_expected(args.role),
        checks_off=CHECKS_OFF,
        extra_statuses=EXTRA_STATUSES,
    )
    return schemathesis_run.run(
        base=args.base, token=args.token, spec=spec, plan=plan, workdir=args.workdir,
        seed=args.seed, max_examples=args.max_examples, time_limit=args.time_limit,
        env={"HOOKGATE_FUZZ_WASM": str(pathlib.Path(args.wasm).resolve())},
    )


if __name__ == "__main__":
    sys.exit(main())
