"""Verifies webhook requests with the official `standardwebhooks` package.

Reads JSON from stdin: {"secret": "whsec_...", "requests": [{"headers": {...}, "body": "..."}],
"now": optional Unix seconds} and exits non-zero, naming the request, if any signature
does not verify. "now" stands in for the wall clock, for gateways run on a test clock.
"""
import json
import sys
from datetime import datetime, timezone

import standardwebhooks.webhooks as webhooks
from standardwebhooks.webhooks import Webhook

data = json.load(sys.stdin)
if data.get("now") is not None:
    fixed = datetime.fromtimestamp(data["now"], tz=timezone.utc)

    class _Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed

    webhooks.datetime = _Clock
wh = Webhook(data["secret"])
for i, req in enumerate(data["requests"]):
    try:
        # A body that is not JSON (a transform's form or text) is verified
        # without the package's JSON decoding of it afterwards.
        content_type = {k.lower(): v for k, v in req["headers"].items()}.get("content-type", "")
        wh.verify(req["body"], req["headers"], json_parse="json" in content_type)
    except Exception as e:  # noqa: BLE001 - report any failure
        print(f"request {i}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
print(f"verified {len(data['requests'])}")
