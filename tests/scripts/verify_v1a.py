"""Verifies Standard Webhooks `v1a` (ed25519) signatures with the `cryptography`
package's ed25519, from the receiver's `whpk_` public key.

Reads JSON from stdin: {"public_key": "whpk_...", "prefix": "webhook" | "svix",
"requests": [{"headers": {...}, "body": "..."}]}. For each request it reads
`{prefix}-id`, `{prefix}-timestamp` and `{prefix}-signature`, and accepts it if
any `v1a,<base64>` entry of the signature header is the key's signature over
`{id}.{timestamp}.{body}`, as the spec defines. Exits non-zero, naming the
request, if one has no such entry, or no `v1a` entry at all.
"""
import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

data = json.load(sys.stdin)
text = data["public_key"]
if not text.startswith("whpk_"):
    sys.exit(f"not a whpk_ key: {text!r}")
key = Ed25519PublicKey.from_public_bytes(base64.b64decode(text[len("whpk_"):], validate=True))
prefix = data["prefix"]
for i, req in enumerate(data["requests"]):
    headers = {k.lower(): v for k, v in req["headers"].items()}
    try:
        msg_id = headers[f"{prefix}-id"]
        timestamp = headers[f"{prefix}-timestamp"]
        signatures = headers[f"{prefix}-signature"].split(" ")
    except KeyError as e:
        sys.exit(f"request {i}: missing header {e}")
    signed = f"{msg_id}.{timestamp}.".encode() + req["body"].encode()
    entries = [s[len("v1a,"):] for s in signatures if s.startswith("v1a,")]
    if not entries:
        sys.exit(f"request {i}: no v1a entry in {signatures}")
    ok = False
    for entry in entries:
        try:
            key.verify(base64.b64decode(entry, validate=True), signed)
            ok = True
            break
        except (InvalidSignature, ValueError):
            continue
    if not ok:
        sys.exit(f"request {i}: no v1a signature verifies with {text}")
print(f"verified {len(data['requests'])}")
