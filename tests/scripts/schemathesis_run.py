"""Runs Schemathesis over one of the gateway's OpenAPI documents and reports it:
shared by fuzz_api.py (API v1) and fuzz_svix.py (the Svix-compatible face),
which each say what to pin, which checks to turn off and why.

A run writes a schemathesis.toml (a fixed seed, every check but those turned off
for one operation, path parameters pinned to fixtures), runs Schemathesis, counts
each operation's answers by status from the NDJSON report, and fails when
Schemathesis found failures or an operation never answered 2xx (so the fuzzing
never reached its logic).
"""

import base64
import collections
import json
import os
import pathlib
import subprocess
import sys
import urllib.request

# Every check runs (Schemathesis's default): `--checks` on the command line would
# override the per-operation settings, so the checks are left to the config.
METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")

HOOKS = pathlib.Path(__file__).with_name("fuzz_hooks.py")


class Plan:
    """What one run fuzzes, and how.

    `pins(name)` gives an operation's pinned parameters; `excluded`,
    `no_2xx` and `checks_off` map an operation to why; `extra_statuses` maps
    one to (check, statuses, why)."""

    def __init__(self, *, parameters, dictionaries, pins, excluded, no_2xx, checks_off, extra_statuses=None):
        self.parameters = parameters
        self.dictionaries = dictionaries
        self.pins = pins
        self.excluded = excluded
        self.no_2xx = no_2xx
        self.checks_off = checks_off
        self.extra_statuses = extra_statuses or {}


def operations(document):
    """Every operation of the document as `METHOD /path`, in document order."""
    return [
        f"{method.upper()} {path}"
        for path, item in document.get("paths", {}).items()
        for method in item
        if method in METHODS
    ]


def toml_string(s):
    return json.dumps(s)


def write_config(path, ops, plan, token, seed):
    lines = [
        f"seed = {seed}",
        f"hooks = {toml_string(str(HOOKS))}",
        "",
        "[headers]",
        f"Authorization = {toml_string('Bearer ' + token)}",
        "",
        "[generation]",
        'database = "none"',
        "",
        "[parameters]",
    ]
    lines += [f"{toml_string(k)} = {v}" for k, v in plan.parameters.items()]
    for name, values in plan.dictionaries.items():
        lines += ["", f"[dictionaries.{name}]", f"values = [{', '.join(toml_string(v) for v in values)}]"]
    for name in ops:
        if name in plan.excluded:
            lines += ["", "[[operations]]", f"include-name = {toml_string(name)}", "enabled = false"]
            continue
        entry = []
        if pinned := plan.pins(name):
            table = ", ".join(f"{toml_string(k)} = {toml_string(v)}" for k, v in pinned.items())
            entry.append(f"parameters = {{ {table} }}")
        checks = [f"{check} = {{ enabled = false }}" for check in plan.checks_off.get(name, {})]
        if name in plan.extra_statuses:
            check, extra, _ = plan.extra_statuses[name]
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
    """A 4xx answer's code, field and message, in API v1's shape or Svix's."""
    try:
        body = json.loads(base64.b64decode(response["content"]["$base64"]))
        if "error" in body:
            error = body["error"]
            field = f"({error['field']})" if error.get("field") else ""
            return f"{error['code']}{field}: {error['message'][:100]}"
        if isinstance(body.get("detail"), list):
            first = body["detail"][0]
            return f"422({'.'.join(map(str, first['loc']))}): {first['msg'][:100]}"
        return f"{body['code']}: {body['detail'][:100]}"
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return f"{response.get('status_code')} unparsed"


def fetch_spec(base, path, workdir, spec_file=None):
    """The document, saved in `workdir` (from a file when given): loaded from
    its URL, Schemathesis leaves out the operation serving the document; from a
    file with --url it keeps it."""
    spec = pathlib.Path(workdir) / "openapi.json"
    if spec_file:
        spec.write_bytes(pathlib.Path(spec_file).read_bytes())
    else:
        with urllib.request.urlopen(base + path, timeout=10) as answer:
            spec.write_bytes(answer.read())
    return spec


def run(*, base, token, spec, plan, workdir, seed, max_examples, time_limit, env=None):
    """Fuzzes every operation of `spec` per `plan`; prints the report and
    answers the exit code."""
    workdir = pathlib.Path(workdir)
    ops = operations(json.loads(spec.read_text()))
    config = workdir / "schemathesis.toml"
    write_config(config, ops, plan, token, seed)
    ndjson = workdir / "report.ndjson"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color",
        "run", str(spec), "--url", base,
        "--max-examples", str(max_examples),
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
        ran = subprocess.run(command, cwd=workdir, env=dict(os.environ, **(env or {})),
                             capture_output=True, text=True, timeout=time_limit)
    except subprocess.TimeoutExpired as e:
        print((e.stdout or b"").decode() if isinstance(e.stdout, bytes) else e.stdout or "")
        print(f"FAIL: Schemathesis ran past {time_limit}s")
        return 1
    output = ran.stdout + ran.stderr
    statuses, refusals, failures = tally(ndjson) if ndjson.exists() else ({}, {}, [])
    return report(ops, plan, statuses, refusals, failures, output, ran.returncode)


def report(ops, plan, statuses, refusals, failures, output, returncode):
    print(f"{'operation':<60} {'2xx':>5} {'4xx':>5} {'5xx':>5}  statuses")
    zero = []
    for name in ops:
        if name in plan.excluded:
            print(f"{name:<60} excluded: {plan.excluded[name]}")
            continue
        counts = statuses.get(name, collections.Counter())
        by_class = collections.Counter(str(code)[0] for code in counts.elements())
        detail = " ".join(f"{code}x{n}" for code, n in sorted(counts.items(), key=str))
        print(f"{name:<60} {by_class['2']:>5} {by_class['4']:>5} {by_class['5']:>5}  {detail}")
        if by_class["2"] == 0 and name not in plan.no_2xx:
            zero.append(name)

    # Why generated requests were refused: where the document could say more.
    print("\n4xx answers to requests generated as valid per the document (most common first):")
    for name in ops:
        for reason, n in refusals.get(name, collections.Counter()).most_common(3):
            print(f"  {name}: x{n} {reason}")
    failed = returncode != 0
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
    for name, why in plan.no_2xx.items():
        if name in ops:
            print(f"note: {name} is not expected to answer 2xx: {why}")
    for name, checks in plan.checks_off.items():
        for check, why in checks.items():
            print(f"note: {check} is off for {name}: {why}")
    for name, (check, extra, why) in plan.extra_statuses.items():
        print(f"note: {check} also expects {', '.join(extra)} from {name}: {why}")
    if failed:
        print(f"FAIL: Schemathesis exited {returncode}")
    return 1 if failed or zero else 0
