"""Fuzzes the gateway's Svix-compatible face with Schemathesis against its own
OpenAPI document (`/api/v1/openapi.json`), as fuzz_api.py does API v1.

Run by tests/tests/it/svix_openapi_contract.rs against a gateway it has set up
(an application with endpoints, messages, an attempt, catalog types). Says what
each operation's path parameters are pinned to and which checks are off for one
operation, each with why; schemathesis_run.py runs and reports it.
"""

import argparse
import sys

import schemathesis_run

# Operations not expected to answer 2xx, with why; each is still fuzzed and
# checked against the document.
NO_2XX = {
    "DELETE /api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content": "not served: hookgate keeps an attempt's response inside its record, and answers 501 rather than claim a removal (docs/svix.md)",
    "POST /api/v1/auth/logout": "only a portal session can end itself; the run's token is the organisation token (404); svix_sdk's authentication scenario checks it",
}

# Checks turned off for one operation, each with why: there, what the check
# expects is not something the API can promise, so a failure is no defect.
CHECKS_OFF = {
    "POST /api/v1/app/{app_id}/endpoint": {
        "positive_data_acceptance": "hookgate's own fields (policy rules across fields) and outbound.allow_only (the operator's egress list) refuse with a 422 naming the field, as on API v1",
        "ensure_resource_availability": "GET, PATCH and DELETE .../endpoint/{endpoint_id} are pinned to fixture endpoints (DELETE to the spare one), not the endpoint its POST made; create then read is checked by svix_sdk",
    },
    "PUT /api/v1/app/{app_id}/endpoint/{endpoint_id}": {
        "positive_data_acceptance": "as for POST: hookgate's own fields and outbound.allow_only",
    },
    "PATCH /api/v1/app/{app_id}/endpoint/{endpoint_id}": {
        "positive_data_acceptance": "as for POST: hookgate's own fields and outbound.allow_only",
    },
    "DELETE /api/v1/app/{app_id}/endpoint/{endpoint_id}": {
        "ensure_resource_availability": "pinned to the spare endpoint, which one chain may delete twice (schemathesis#3588); create then delete is checked by svix_sdk",
    },
    "POST /api/v1/app": {
        "ensure_resource_availability": "GET, PUT, PATCH and DELETE /app/{app_id} are pinned to fixture applications (DELETE to the spare one), not the one its POST made; create then read is checked by svix_sdk",
    },
    "DELETE /api/v1/app/{app_id}": {
        "ensure_resource_availability": "pinned to the spare application, deleted (or found deleted) more than once",
    },
    "POST /api/v1/event-type": {
        "ensure_resource_availability": "GET, PUT, PATCH and DELETE /event-type/{name} are pinned to fixture types, not the type its POST made; create then read is checked by svix_sdk",
        "positive_data_acceptance": "a schema must be a JSON Schema referring only within itself: a rule of JSON Schema, a 422 naming schemas",
    },
    "PUT /api/v1/event-type/{event_type_name}": {
        "positive_data_acceptance": "as for POST /event-type",
    },
    "PATCH /api/v1/event-type/{event_type_name}": {
        "positive_data_acceptance": "as for POST /event-type",
    },
    "DELETE /api/v1/event-type/{event_type_name}": {
        "ensure_resource_availability": "pinned to the spare type, archived (or found gone) more than once",
    },
    "POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/recover": {
        "positive_data_acceptance": "until must come after since: a rule across fields, a 422 naming until",
    },
    "POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/replay-missing": {
        "positive_data_acceptance": "until must come after since: a rule across fields, a 422 naming until",
    },
    "GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/stats": {
        "positive_data_acceptance": "until must come after since (now when absent): a rule across fields, a 422 naming until",
    },
    "PUT /api/v1/app/{app_id}/endpoint/{endpoint_id}/headers": {
        "positive_data_acceptance": "header names hookgate sets itself (webhook-*, svix-*, content-type, host, ...) and names that are no HTTP token are refused by name, a 422 naming the header, as on API v1",
    },
    "PATCH /api/v1/app/{app_id}/endpoint/{endpoint_id}/headers": {
        "positive_data_acceptance": "as for PUT .../headers",
    },
    "GET /api/v1/app/{app_id}/msg": {
        "positive_data_acceptance": "before must come after after: a rule across parameters, a 422 naming it",
    },
    "GET /api/v1/app/{app_id}/attempt/endpoint/{endpoint_id}": {
        "positive_data_acceptance": "as for GET .../msg: before must come after after",
    },
    "GET /api/v1/app/{app_id}/attempt/msg/{msg_id}": {
        "positive_data_acceptance": "as for GET .../msg: before must come after after",
    },
    "GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/msg": {
        "positive_data_acceptance": "as for GET .../msg: before must come after after",
    },
    "DELETE /api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content": {
        "not_a_server_error": "the documented 501: hookgate keeps an attempt's response inside its record and cannot remove it alone, so it says so rather than claim a removal, as Svix's server answers 501 for what it lacks",
    },
    "POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/send-example": {
        "positive_data_acceptance": "the event type must be in the catalog, not archived, with an example: the catalog's state, which no schema can state; a 422 naming eventType",
    },
}


# Statuses a check takes as expected for one operation, beyond its own, with why.
EXTRA_STATUSES = {
    "POST /api/v1/app/{app_id}/msg": (
        "positive_data_acceptance",
        ["422"],
        "an empty channel or tag, or a deliverAt more than 30 days ahead (a bound no schema can state of a time), is a 422 naming it, as API v1's ingest answers",
    ),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base", required=True, help="the gateway, e.g. http://127.0.0.1:PORT")
    p.add_argument("--token", required=True, help="the organisation (admin) token")
    p.add_argument("--app", required=True, help="an application the run may change")
    p.add_argument("--spare-app", required=True, help="the application DELETE may remove")
    p.add_argument("--endpoint", required=True, help="an endpoint of the app the run may change")
    p.add_argument("--spare-endpoint", required=True, help="the endpoint DELETE may remove")
    p.add_argument("--msg", required=True, help="a message sent to --endpoint")
    p.add_argument("--spare-msg", required=True, help="the message whose content DELETE may expunge")
    p.add_argument("--attempt", required=True, help="an attempt of --msg at --endpoint")
    p.add_argument("--event-type", required=True, help="a catalog type with an example")
    p.add_argument("--patched-event-type", required=True, help="the type PATCH may change")
    p.add_argument("--spare-event-type", required=True, help="the type DELETE may archive")
    p.add_argument("--receiver", required=True, help="a URL endpoints may point at")
    p.add_argument("--workdir", required=True)
    p.add_argument("--seed", type=int, default=20261206)
    p.add_argument("--max-examples", type=int, default=25)
    p.add_argument("--time-limit", type=float, default=170.0, help="seconds for the whole run")
    return p.parse_args()


def pins(name, args):
    """The path parameters an operation is pinned to, beyond `app_id`."""
    method, path = name.split(" ", 1)
    pinned = {}
    if path == "/api/v1/app/{app_id}" and method == "DELETE":
        pinned["path.app_id"] = args.spare_app
    if "{endpoint_id}" in path:
        spare = path.endswith("/endpoint/{endpoint_id}") and method == "DELETE"
        pinned["path.endpoint_id"] = args.spare_endpoint if spare else args.endpoint
    if "{msg_id}" in path:
        expunge = path.endswith("/msg/{msg_id}/content")
        pinned["path.msg_id"] = args.spare_msg if expunge else args.msg
    if "{attempt_id}" in path:
        pinned["path.attempt_id"] = args.attempt
    if "{event_type_name}" in path:
        by_method = {"DELETE": args.spare_event_type, "PATCH": args.patched_event_type}
        pinned["path.event_type_name"] = by_method.get(method, args.event_type)
    return pinned


def main():
    args = parse_args()
    spec = schemathesis_run.fetch_spec(args.base, "/api/v1/openapi.json", args.workdir)
    plan = schemathesis_run.Plan(
        parameters={
            "path.app_id": schemathesis_run.toml_string(args.app),
            # Most generated URLs fall outside outbound.allow_only; offer one inside it.
            "body.url": '{ dictionary = "urls", probability = 0.5 }',
        },
        dictionaries={"urls": [args.receiver]},
        pins=lambda name: pins(name, args),
        excluded={},
        no_2xx=NO_2XX,
        checks_off=CHECKS_OFF,
        extra_statuses=EXTRA_STATUSES,
    )
    return schemathesis_run.run(
        base=args.base, token=args.token, spec=spec, plan=plan, workdir=args.workdir,
        seed=args.seed, max_examples=args.max_examples, time_limit=args.time_limit,
    )


if __name__ == "__main__":
    sys.exit(main())
