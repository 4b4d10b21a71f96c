"""Drives hookgate's Svix-compatible API with the official `svix` Python SDK,
unmodified, through every operation the face serves, and checks each answer.

Usage: python3 main.py BASE_URL ORG_TOKEN RECEIVER_URL
Prints one JSON line: what each part saw (ids, secrets, statuses) for the
Rust test to check against the receiver and the verifiers; exits 1 with the
failing check's message.
"""

import json
import sys
import traceback

from svix.api import Svix, SvixOptions

import applications
import authentication
import endpoints
import messages
import event_types


def main():
    base, token, receiver = sys.argv[1:4]
    # An explicit server_url: without one the SDK calls Svix's cloud.
    svix = Svix(token, SvixOptions(server_url=base, retry_schedule=[]))
    seen = {"failed": None}
    ctx = {"svix": svix, "base": base, "token": token, "receiver": receiver, "seen": seen}
    try:
        for part in (applications, event_types, endpoints, messages, authentication):
            part.run(ctx)
        seen["endpoint_secret"] = endpoints.final_secret(ctx)
    except Exception as e:  # noqa: BLE001 - the test prints whatever failed
        seen["failed"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    print(json.dumps(seen, default=str))
    sys.exit(1 if seen["failed"] else 0)


if __name__ == "__main__":
    main()
