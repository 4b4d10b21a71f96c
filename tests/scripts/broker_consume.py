"""A consumer of hookgate's broker destinations, written with each ecosystem's
usual client (pika, nats-py, redis-py), that verifies every message's signature
with the official `standardwebhooks` package.

Usage: broker_consume.py setup|consume|teardown, with a JSON object on stdin:
  {"kind": "rabbitmq"|"nats"|"redis", "url": "...", "name": "<unique per test>",
   "secret": "whsec_..." (consume), "count": N (consume), "timeout_s": 30}
`name` is the queue and exchange (rabbitmq), the stream and subject prefix
(nats), or the stream key (redis). `setup` makes them; `teardown` removes them.
`consume` reads `count` messages, verifies each, and prints
{"messages": [{"headers": {...}, "body": "...", "id": ...}]}; it exits non-zero
naming the message whose signature does not verify, or when too few arrive.
"""
import asyncio
import json
import sys
import time

from standardwebhooks.webhooks import Webhook


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


# --- RabbitMQ (pika) ---------------------------------------------------------

def rabbit_connection(url):
    import pika

    params = pika.URLParameters(url)
    params.credentials = pika.PlainCredentials("guest", "guest")
    return pika.BlockingConnection(params)


def rabbit_setup(cfg):
    conn = rabbit_connection(cfg["url"])
    ch = conn.channel()
    name = cfg["name"]
    ch.exchange_declare(exchange=name, exchange_type="topic", durable=False, auto_delete=False)
    ch.queue_declare(queue=name, durable=False, auto_delete=False)
    ch.queue_bind(queue=name, exchange=name, routing_key=cfg.get("binding", "#"))
    conn.close()


def rabbit_teardown(cfg):
    conn = rabbit_connection(cfg["url"])
    ch = conn.channel()
    ch.queue_delete(queue=cfg["name"])
    ch.exchange_delete(exchange=cfg["name"])
    conn.close()


def rabbit_consume(cfg):
    conn = rabbit_connection(cfg["url"])
    ch = conn.channel()
    out = []
    deadline = time.monotonic() + cfg.get("timeout_s", 30)
    while len(out) < cfg["count"] and time.monotonic() < deadline:
        method, props, body = ch.basic_get(queue=cfg["name"], auto_ack=True)
        if method is None:
            time.sleep(0.1)
            continue
        headers = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in (props.headers or {}).items()}
        out.append({
            "headers": headers,
            "body": body.decode(),
            "id": props.message_id,
            "type": props.type,
            "routing_key": method.routing_key,
            "persistent": props.delivery_mode == 2,
        })
    conn.close()
    return out


# --- NATS JetStream (nats-py) ------------------------------------------------

async def nats_run(cfg, action):
    import nats

    nc = await nats.connect(cfg["url"])
    js = nc.jetstream()
    name = cfg["name"]
    try:
        if action == "setup":
            await js.add_stream(name=name, subjects=[f"{name}.>"])
            return None
        if action == "teardown":
            await js.delete_stream(name)
            return None
        sub = await js.pull_subscribe(f"{name}.>", durable=None, stream=name)
        out = []
        deadline = time.monotonic() + cfg.get("timeout_s", 30)
        while len(out) < cfg["count"] and time.monotonic() < deadline:
            try:
                msgs = await sub.fetch(cfg["count"] - len(out), timeout=1)
            except nats.errors.TimeoutError:
                continue
            for m in msgs:
                await m.ack()
                out.append({
                    "headers": dict(m.headers or {}),
                    "body": m.data.decode(),
                    "id": (m.headers or {}).get("Nats-Msg-Id"),
                    "subject": m.subject,
                })
        if cfg.get("settle_s"):
            # Anything more in the stream (a duplicate would be) is reported too.
            await asyncio.sleep(cfg["settle_s"])
            info = await js.stream_info(name)
            out.append({"stream_messages": info.state.messages})
        return out
    finally:
        await nc.close()


# --- Redis Streams (redis-py) ------------------------------------------------

def redis_run(cfg, action):
    import redis

    r = redis.Redis.from_url(cfg["url"])
    name = cfg["name"]
    if action == "setup":
        r.delete(name)
        return None
    if action == "teardown":
        r.delete(name)
        return None
    out = []
    last = "0-0"
    deadline = time.monotonic() + cfg.get("timeout_s", 30)
    while len(out) < cfg["count"] and time.monotonic() < deadline:
        got = r.xread({name: last}, count=cfg["count"], block=500)
        for _stream, entries in got or []:
            for entry_id, fields in entries:
                last = entry_id
                fields = {k.decode(): v.decode() for k, v in fields.items()}
                body = fields.pop("body")
                out.append({"headers": fields, "body": body, "id": entry_id.decode()})
    return out


def main():
    action = sys.argv[1]
    cfg = json.load(sys.stdin)
    kind = cfg["kind"]
    if kind == "rabbitmq":
        run = {"setup": rabbit_setup, "teardown": rabbit_teardown, "consume": rabbit_consume}[action]
        got = run(cfg)
    elif kind == "nats":
        got = asyncio.run(nats_run(cfg, action))
    elif kind == "redis":
        got = redis_run(cfg, action)
    else:
        fail(f"unknown kind {kind!r}")
    if action != "consume":
        print("ok")
        return
    messages = [m for m in got if "body" in m]
    if len(messages) < cfg["count"]:
        fail(f"{len(messages)} of {cfg['count']} messages arrived: {json.dumps(got)}")
    wh = Webhook(cfg["secret"])
    for i, m in enumerate(messages):
        # standardwebhooks reads the webhook-* headers by their lower-case names.
        headers = {k.lower(): v for k, v in m["headers"].items()}
        try:
            wh.verify(m["body"], headers)
        except Exception as e:  # noqa: BLE001 - report any failure
            fail(f"message {i}: {type(e).__name__}: {e}: {json.dumps(m)}")
    print(json.dumps({"messages": got}))


main()
