"""Drives the gateway through a Python client generated from its OpenAPI document.

Run by tests/tests/it/openapi_contract.rs after `openapi-python-client generate`
wrote the package `hookgate_client` into --client-dir. Finds each operation's
generated module by method and path (the module names follow the document's
operation ids, which this script does not assume), then: as the admin creates a
tenant; with the tenant's key creates an endpoint at --receiver, ingests an event
and polls its delivery until it succeeded. Prints one JSON object of what each
call answered (status and parsed body); exits non-zero if a call failed or an
answer did not parse into the generated client's model.
"""

import argparse
import importlib
import inspect
import json
import pathlib
import re
import sys
import time
import typing


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--client-dir", required=True, help="the folder holding hookgate_client/")
    p.add_argument("--base", required=True)
    p.add_argument("--admin", required=True, help="the admin token")
    p.add_argument("--tenant", required=True, help="the id of the tenant to create")
    p.add_argument("--receiver", required=True, help="the endpoint's URL")
    p.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the delivery")
    return p.parse_args()


def index_operations(package_dir):
    """`(METHOD, path template)` -> generated module, read from each module's
    `_get_kwargs` (the generator writes the method and path there as literals)."""
    found = {}
    for source in sorted((package_dir / "api").glob("*/*.py")):
        if source.name == "__init__.py":
            continue
        text = source.read_text()
        method = re.search(r'"method":\s*"(\w+)"', text)
        url = re.search(r'"url":\s*"([^"]+)"', text)
        if method and url:
            name = f"hookgate_client.api.{source.parent.name}.{source.stem}"
            found[(method.group(1).upper(), url.group(1))] = importlib.import_module(name)
    return found


class Api:
    def __init__(self, package_dir, base):
        from hookgate_client import AuthenticatedClient

        self.modules = index_operations(package_dir)
        self.base = base
        self.client_class = AuthenticatedClient
        self.unparsed = []

    def call(self, token, method, template, path_values=(), body=None):
        """Calls the generated `sync_detailed` of `METHOD template`; returns (status, parsed)."""
        module = self.modules.get((method, template))
        if module is None:
            known = sorted(f"{m} {p}" for m, p in self.modules)
            raise SystemExit(f"no generated function for {method} {template}; generated: {known}")
        function = module.sync_detailed
        seen = []
        hooks = {"response": [seen.append]}
        client = self.client_class(base_url=self.base, token=token, httpx_args={"event_hooks": hooks})
        kwargs = {"client": client}
        positional = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        ]
        if len(positional) != len(path_values):
            raise SystemExit(f"{method} {template}: path parameters {positional}, given {path_values}")
        kwargs.update(zip(positional, path_values))
        if body is not None:
            kwargs["body"] = body_model(function).from_dict(body)
        try:
            response = function(**kwargs)
        except Exception as e:
            # Most likely the answer does not fit the document's schema.
            answer = seen[-1] if seen else None
            shown = f"{answer.status_code} {answer.text}" if answer is not None else "no answer"
            raise SystemExit(f"{method} {template}: the generated client failed on {shown}: {e!r}") from e
        parsed = response.parsed
        if hasattr(parsed, "to_dict"):
            return int(response.status_code), parsed.to_dict()
        # The generated client has no model for this answer (the generator
        # dropped its schema, or the status is undocumented): go on with the raw
        # JSON so the rest of the round trip still runs, and fail at the end.
        self.unparsed.append(f"{method} {template} answered {int(response.status_code)}: parsed {parsed!r}")
        return int(response.status_code), json.loads(response.content or b"null")


def body_model(function):
    """The generated model class of a function's `body` argument."""
    hint = typing.get_type_hints(function)["body"]
    for candidate in (hint, *typing.get_args(hint)):
        if hasattr(candidate, "from_dict"):
            return candidate
    raise SystemExit(f"{function.__module__}: body is {hint}, not a generated model")


def expect(record, step, status, wanted):
    record[step] = {"status": status[0], "body": status[1]}
    if status[0] not in wanted:
        print(json.dumps(record, indent=2, default=str))
        raise SystemExit(f"{step}: answered {status[0]}, wanted one of {wanted}")
    return status[1]


def main():
    args = parse_args()
    sys.path.insert(0, args.client_dir)
    api = Api(pathlib.Path(args.client_dir) / "hookgate_client", args.base)
    record = {}
    tenant = expect(
        record, "create_tenant",
        api.call(args.admin, "POST", "/v1/tenants", body={"id": args.tenant}), {201},
    )
    key = tenant["api_key"]
    t = args.tenant
    endpoint = expect(
        record, "create_endpoint",
        api.call(key, "POST", "/v1/tenants/{t}/endpoints", [t], body={"url": args.receiver}), {201},
    )
    event = expect(
        record, "ingest_event",
        api.call(
            key, "POST", "/v1/tenants/{t}/events", [t],
            body={"event_type": "order.paid", "payload": {"id": 42}},
        ),
        {202},
    )
    delivery_id = event["deliveries"][0]["id"]
    deadline = time.monotonic() + args.wait
    polls = 0
    while True:
        polls += 1
        delivery = expect(
            record, "show_delivery",
            api.call(key, "GET", "/v1/tenants/{t}/deliveries/{id}", [t, delivery_id]), {200},
        )
        if delivery.get("state") in ("succeeded", "dead") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    record["polls"] = polls
    listed = expect(record, "list_deliveries", api.call(key, "GET", "/v1/tenants/{t}/deliveries", [t]), {200})
    record["listed_ids"] = [d["id"] for d in listed["data"]]
    record["unparsed"] = api.unparsed
    print(json.dumps(record, indent=2, default=str))
    if api.unparsed:
        raise SystemExit("the generated client did not parse: " + "; ".join(api.unparsed))


if __name__ == "__main__":
    main()
