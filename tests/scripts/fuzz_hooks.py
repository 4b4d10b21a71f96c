"""Schemathesis hooks for fuzz_api.py and fuzz_svix.py: how to send an `application/wasm` (or
`application/octet-stream`, which the upload also takes) body,
and a fresh `Idempotency-Key` for each request.

Schemathesis has no serializer for `application/wasm` and errors on the plugin
upload without one. The first body and every other one after it is the real
module in $HOOKGATE_FUZZ_WASM, so that uploads can succeed within the gateway's
10 uploads per tenant per hour; the rest are the generated value as bytes (the
document describes the module as an array of byte values), which the gateway
must refuse cleanly.
"""

import itertools
import re
import uuid
import json
import os
import pathlib
import threading

import schemathesis

# The Svix face has no uploads, and its run names no module.
MODULE = pathlib.Path(os.environ["HOOKGATE_FUZZ_WASM"]).read_bytes() if "HOOKGATE_FUZZ_WASM" in os.environ else b""
_calls = itertools.count()
_lock = threading.Lock()


@schemathesis.serializer("application/wasm", "application/octet-stream")
def wasm(ctx, value):
    with _lock:
        n = next(_calls)
    if n % 2 == 0:
        return MODULE
    if isinstance(value, bytes):
        return value
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return bytes(v & 0xFF for v in value)
    # Negative cases (not an array of integers): their JSON text.
    return json.dumps(value).encode()


# A valid key as the document states it; a generated value that is not one is
# left as it is, for the gateway to refuse.
_KEY = re.compile(r"^[!-~]{1,255}$")


@schemathesis.hook
def before_call(context, case, **kwargs):
    """Each request a key of its own, as a client makes one per distinct call:
    Schemathesis draws keys from a small space and would send one key with many
    bodies, which the gateway refuses by design (422 idempotency_key_reused)."""
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key" and isinstance(headers[name], str) and _KEY.match(headers[name]):
            headers[name] = uuid.uuid4().hex
