"""Verifies webhook requests with the official `standardwebhooks` package.

Reads JSON from stdin: {"secret": "whsec_...", "requests": [{"headers": {...}, "body": "..."}]}
and exits non-zero, naming the request, if any signature does not verify.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook

data = json.load(sys.stdin)
wh = Webhook(data["secret"])
for i, req in enumerate(data["requests"]):
    try:
        wh.verify(req["body"], req["headers"])
    except Exception as e:  # noqa: BLE001 - report any failure
        print(f"request {i}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
print(f"verified {len(data['requests'])}")
