"""Verifies webhook requests with the official `svix` package's `Webhook.verify`.

Reads JSON from stdin: {"secret": "whsec_...", "requests": [{"headers": {...}, "body": "..."}]}
and exits non-zero, naming the request, if any does not verify. The caller passes the
`svix-*` headers only, so the package cannot fall back to `webhook-*` ones.
"""
import json
import sys

from svix.webhooks import Webhook

data = json.load(sys.stdin)
wh = Webhook(data["secret"])
for i, req in enumerate(data["requests"]):
    try:
        wh.verify(req["body"], req["headers"])
    except Exception as e:  # noqa: BLE001 - report any failure
        print(f"request {i}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
print(f"verified {len(data['requests'])}")
