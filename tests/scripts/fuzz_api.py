"""Fuzzes the gateway's API v1 with Schemathesis against its own OpenAPI document.

Run by tests/tests/it/openapi_contract.rs against a gateway it has set up (tenant,
endpoints, deliveries, an event, plugins). Writes a schemathesis.toml into
--workdir that pins the path parameters to those fixtures, runs Schemathesis with a
fixed seed and every check (but those turned off for one operation, each with
why), then counts the 2xx answers of each
operation from the NDJSON report. Exits non-zero if Schemathesis found failures or
an operation never got a 2xx answer (so the fuzzing never reached its logic).
"""

import argparse
import base64
import collections
import json
import os
import pathlib
import subprocess
import sys
import urllib.request

# Every check runs (Schemathesis's default): `--checks` on the command line would
# override the per-operation settings below, so the checks are left to the config.
METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")

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

HOOKS = pathlib.Path(__file__).with_name("fuzz_hooks.py")


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


def operations(document):
    """Every operation of the document as `METHOD /path`, in document order."""
    return [
        f"{method.upper()} {path}"
        for path, item in document.get("paths", {}).items()
        for method in item
        if method in METHODS
    ]


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


def toml_string(s):
    return json.dumps(s)


def no_2xx_expected(role):
    """Operations fuzzed and checked but not expected to answer 2xx, with why."""
    never = {"GET /v1/portal-session": "only a portal session has one: the run's token is a key or the admin's (404); portal_sessions checks it",
             "DELETE /v1/portal-session": "as GET: only a portal session can end itself (404 for a key or the admin's); portal_sessions checks it"}
    if role == "tenant":
        return never | {name: "admin only: a tenant key gets 403" for name in ADMIN_ONLY}
    return never


def write_config(path, ops, args):
    lines = [
        f"seed = {args.seed}",
        f"hooks = {toml_string(str(HOOKS))}",
        "",
        "[headers]",
        f"Authorization = {toml_string('Bearer ' + args.token)}",
        "",
        "[generation]",
        'database = "none"',
        "",
        "[parameters]",
        f'"path.t" = {toml_string(args.tenant)}',
        # Most generated URLs fall outside outbound.allow_only; offer one inside it.
        '"body.url" = { dictionary = "urls", probability = 0.5 }',
        "",
        "[dictionaries.urls]",
        f"values = [{toml_string(args.receiver)}]",
    ]
    for name in ops:
        if name in EXCLUDED[args.role]:
            lines += ["", "[[operations]]", f"include-name = {toml_string(name)}", "enabled = false"]
            continue
        entry = []
        if pinned := pins(name, args):
            table = ", ".join(f"{toml_string(k)} = {toml_string(v)}" for k, v in pinned.items())
            entry.append(f"parameters = {{ {table} }}")
        checks = [f"{check} = {{ enabled = false }}" for check in CHECKS_OFF.get(name, {})]
        if name in EXTRA_STATUSES:
            check, extra, _ = EXTRA_STATUSES[name]
            statuses = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"] + extra
            checks.append(f"{check} = {{ expected-statuses = {json.dumps(statuses)} }}")
        if checks:
            entry.append(f"checks = {{ {', '.join(checks)} }}")
        if entry:
            lines += ["", "[[operations]]", f"include-name = {toml_string(name)}"] + entry
    path.write_text("\n".join(lines) + "\n")


def tally(ndjson):
    """Statuses per operation (of requests with the operation's own method) and
    the failed checks, from Schemathesis's NDJSON events."""
    statuses = collections.defaultdict(collections.Counter)
    refusals = collections.defaultdict(collections.Counter)
    failures = []
    for line in ndjson.read_text().splitlines():
        event = json.loads(line)
        recorder = event.get("ScenarioFinished", {}).get("recorder", {})
        for case_id, interaction in recorder.get("interactions", {}).items():
            case = recorder["cases"][case_id]["value"]
            request = interaction["request"]
            response = interaction.get("response") or {}
            name = f"{case['method'].upper()} {case['path']}"
            if request["method"].upper() == case["method"].upper():
                status = response.get("status_code", "none")
                statuses[name][status] += 1
                # A 4xx to data the document allows: the server is stricter than documented.
                mode = case.get("meta", {}).get("generation", {}).get("mode")
                if str(status).startswith("4") and mode == "positive":
                    refusals[name][refusal(response)] += 1
            for check in recorder.get("checks", {}).get(case_id, []):
                if check["status"] == "failure":
                    failure = check["failure_info"]["failure"]
                    operation = failure.get("operation") or name
                    failures.append((operation, check["name"], failure.get("title"), failure.get("message"), request, response))
    return statuses, refusals, failures


def refusal(response):
    """A 4xx answer's error `code`, `field` and message."""
    try:
        error = json.loads(base64.b64decode(response["content"]["$base64"]))["error"]
        field = f"({error['field']})" if error.get("field") else ""
        return f"{error['code']}{field}: {error['message'][:100]}"
    except (KeyError, TypeError, ValueError):
        return f"{response.get('status_code')} unparsed"


def main():
    args = parse_args()
    workdir = pathlib.Path(args.workdir)
    # Loaded from its URL, Schemathesis leaves out the operation serving the
    # document (GET /v1/openapi.json); from a file with --url it keeps it.
    spec = workdir / "openapi.json"
    if args.spec:
        spec.write_bytes(pathlib.Path(args.spec).read_bytes())
    else:
        with urllib.request.urlopen(args.base + "/v1/openapi.json", timeout=10) as answer:
            spec.write_bytes(answer.read())
    ops = operations(json.loads(spec.read_text()))
    config = workdir / "schemathesis.toml"
    write_config(config, ops, args)
    ndjson = workdir / "report.ndjson"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color",
        "run", str(spec), "--url", args.base,
        "--max-examples", str(args.max_examples),
        # One worker: CPython before 3.11.8 can fail `ast.parse` run from two
        # threads at once ("AST constructor recursion depth mismatch",
        # gh-106905), which Schemathesis does while it generates cases.
        "--workers", "1",
        "--request-timeout", "10",
        # Keep fuzzing an operation after a failure, so its 2xx count means something.
        "--continue-on-failure",
        "--report", "ndjson", "--report-ndjson-path", str(ndjson),
    ]
    print("$", " ".join(command), flush=True)
    try:
        env = dict(os.environ, HOOKGATE_FUZZ_WASM=str(pathlib.Path(args.wasm).resolve()))
        run = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=args.time_limit)
    except subprocess.TimeoutExpired as e:
        print((e.stdout or b"").decode() if isinstance(e.stdout, bytes) else e.stdout or "")
        print(f"FAIL: Schemathesis ran past {args.time_limit}s")
        return 1
    output = run.stdout + run.stderr
    statuses, refusals, failures = tally(ndjson) if ndjson.exists() else ({}, {}, [])

    print(f"{'operation':<60} {'2xx':>5} {'4xx':>5} {'5xx':>5}  statuses")
    zero = []
    excluded = EXCLUDED[args.role]
    no_2xx = no_2xx_expected(args.role)
    for name in ops:
        if name in excluded:
            print(f"{name:<60} excluded: {excluded[name]}")
            continue
        counts = statuses.get(name, collections.Counter())
        by_class = collections.Counter(str(code)[0] for code in counts.elements())
        detail = " ".join(f"{code}x{n}" for code, n in sorted(counts.items(), key=str))
        print(f"{name:<60} {by_class['2']:>5} {by_class['4']:>5} {by_class['5']:>5}  {detail}")
        if by_class["2"] == 0 and name not in no_2xx:
            zero.append(name)

    # Why generated requests were refused: where the document could say more.
    print("\n4xx answers to requests generated as valid per the document (most common first):")
    for name in ops:
        for reason, n in refusals.get(name, collections.Counter()).most_common(3):
            print(f"  {name}: x{n} {reason}")
    failed = run.returncode != 0
    if failed or zero:
        print("\n===== Schemathesis output =====")
        print(output)
    else:
        print("\n".join(output.splitlines()[-25:]))
    # One line per distinct failure, with the first request that showed it.
    seen = collections.Counter()
    for name, check, title, message, request, response in failures:
        key = (name, check, title, (message or "").strip()[:300])
        seen[key] += 1
        if seen[key] == 1:
            print(f"FAILURE {name}: {check}: {title}: {key[3]}")
            body = request.get("body")
            if isinstance(body, dict) and "$base64" in body:
                body = base64.b64decode(body["$base64"]).decode(errors="replace")
            print(f"    {request['method']} {request['uri']} body={body!r:.300} -> {response.get('status_code')}")
    for name in zero:
        print(f"FAIL: {name} never answered 2xx")
    for name, why in no_2xx.items():
        if name in ops:
            print(f"note: {name} is not expected to answer 2xx: {why}")
    for name, checks in CHECKS_OFF.items():
        for check, why in checks.items():
            print(f"note: {check} is off for {name}: {why}")
    for name, (check, extra, why) in EXTRA_STATUSES.items():
        print(f"note: {check} also expects {', '.join(extra)} from {name}: {why}")
    if failed:
        print(f"FAIL: Schemathesis exited {run.returncode}")
    return 1 if failed or zero else 0


if __name__ == "__main__":
    sys.exit(main())
