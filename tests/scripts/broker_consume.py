"""A consumer of hookgate's broker destinations, written with each ecosystem's
usual client (pika, nats-py, redis-py, boto3), that verifies every message's
signature with the official `standardwebhooks` package.

Usage: broker_consume.py setup|consume|teardown, with a JSON object on stdin:
  {"kind": "rabbitmq"|"nats"|"redis"|"sqs"|"sns"|"kinesis", "url": "...",
   "name": "<unique per test>", "secret": "whsec_..." (consume),
   "count": N (consume), "timeout_s": 30, "settle_s": S (consume, optional)}
`name` is the queue and exchange (rabbitmq), the stream and subject prefix
(nats), the stream key (redis), the queue (sqs), the topic, whose messages a
queue `<name>-sub` receives (sns), or the stream (kinesis). `setup` makes them
and prints a JSON object: {} for the first three; {"queue_url"} (sqs),
{"topic_arn", "queue_url", "subscription_arn"} (sns), {"stream_arn"} (kinesis).
`teardown` removes them and prints {}.

The AWS kinds talk to `url` as the endpoint (moto in the tests), region
`region` (us-east-1), with `access_key_id`/`secret_access_key` ("testing"
when absent). More fields: `fifo` (sqs, sns: a FIFO queue or topic, named
`<name>.fifo`, without content-based deduplication) and `max_message_size`
(sqs: the queue's MaximumMessageSize).

`consume` reads `count` messages within `timeout_s`, verifies each, and prints
{"messages": [{"headers": {...}, "body": "...", "id": ..., ...}]}; it exits
non-zero naming the message whose signature does not verify, or when too few
arrive. With `settle_s` it goes on reading that long after the count (a
duplicate would show as one more message). Each kind adds its own fields:
  sqs, sns  the headers are the message attributes; when the gateway had more
            than SQS's 10 it sent 9 and `hookgate-headers`, a JSON object of
            the rest, which is merged back. `id` is the SQS MessageId;
            `attribute_names` are the attributes as received, and `group` and
            `dedup` the MessageGroupId and MessageDeduplicationId (FIFO).
  kinesis   each record's data is {"headers": {...}, "body": "..."}; `id` is
            the sequence number, with `partition_key` and `shard`.
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


# --- Amazon SQS, SNS and Kinesis (boto3) -------------------------------------

# SQS takes at most 10 message attributes a message: the gateway sends the
# first 9 and this one, a JSON object of the rest.
OVERFLOW = "hookgate-headers"


def aws_client(cfg, service):
    import boto3
    from botocore.config import Config

    return boto3.client(
        service,
        endpoint_url=cfg["url"],
        region_name=cfg.get("region", "us-east-1"),
        aws_access_key_id=cfg.get("access_key_id", "testing"),
        aws_secret_access_key=cfg.get("secret_access_key", "testing"),
        # Bounded: a server that hangs fails the call, never the test run.
        config=Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 2}),
    )


def aws_code(err):
    return err.response.get("Error", {}).get("Code")


def fifo_name(cfg, name):
    return name + ".fifo" if cfg.get("fifo") else name


def sqs_make_queue(cfg, sqs, name):
    attrs = {}
    if cfg.get("fifo"):
        attrs.update({"FifoQueue": "true", "ContentBasedDeduplication": "false"})
    if cfg.get("max_message_size"):
        attrs["MaximumMessageSize"] = str(cfg["max_message_size"])
    return sqs.create_queue(QueueName=fifo_name(cfg, name), Attributes=attrs)["QueueUrl"]


def sqs_delete_queue(cfg, sqs, name):
    try:
        url = sqs.get_queue_url(QueueName=fifo_name(cfg, name))["QueueUrl"]
    except sqs.exceptions.QueueDoesNotExist:
        return  # a test may have removed it to provoke `not_found`
    sqs.delete_queue(QueueUrl=url)


def sqs_setup(cfg):
    return {"queue_url": sqs_make_queue(cfg, aws_client(cfg, "sqs"), cfg["name"])}


def sqs_teardown(cfg):
    sqs_delete_queue(cfg, aws_client(cfg, "sqs"), cfg["name"])
    return {}


def sns_setup(cfg):
    sns = aws_client(cfg, "sns")
    sqs = aws_client(cfg, "sqs")
    attrs = {"FifoTopic": "true", "ContentBasedDeduplication": "false"} if cfg.get("fifo") else {}
    topic = sns.create_topic(Name=fifo_name(cfg, cfg["name"]), Attributes=attrs)["TopicArn"]
    # A FIFO topic delivers only to a FIFO queue.
    queue_url = sqs_make_queue(cfg, sqs, cfg["name"] + "-sub")
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # Raw delivery: the queue gets the message itself, with the published
    # message attributes as its own, not SNS's JSON envelope.
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn,
                        Attributes={"RawMessageDelivery": "true"}, ReturnSubscriptionArn=True)
    return {"topic_arn": topic, "queue_url": queue_url, "subscription_arn": sub["SubscriptionArn"]}


def sns_teardown(cfg):
    sns = aws_client(cfg, "sns")
    wanted = fifo_name(cfg, cfg["name"])
    for page in sns.get_paginator("list_topics").paginate():
        for t in page["Topics"]:
            if t["TopicArn"].rsplit(":", 1)[-1] == wanted:
                sns.delete_topic(TopicArn=t["TopicArn"])
    sqs_delete_queue(cfg, aws_client(cfg, "sqs"), cfg["name"] + "-sub")
    return {}


def sqs_message(m):
    attrs = m.get("MessageAttributes") or {}
    headers = {}
    for k, v in attrs.items():
        if "StringValue" not in v:
            fail(f"attribute {k!r} is not a string: {json.dumps(m)}")
        headers[k] = v["StringValue"]
    if OVERFLOW in headers:
        rest = json.loads(headers.pop(OVERFLOW))
        if not isinstance(rest, dict) or not all(isinstance(v, str) for v in rest.values()):
            fail(f"{OVERFLOW} is not an object of strings: {json.dumps(m)}")
        both = sorted(set(rest) & set(headers))
        if both:
            fail(f"{both} both attributes and in {OVERFLOW}: {json.dumps(m)}")
        headers.update(rest)
    system = m.get("Attributes") or {}
    return {
        "headers": headers,
        "body": m["Body"],
        "id": m["MessageId"],
        "attribute_names": sorted(attrs),
        "group": system.get("MessageGroupId"),
        "dedup": system.get("MessageDeduplicationId"),
    }


def sqs_read(cfg, queue, deadline, out, want):
    sqs = aws_client(cfg, "sqs")
    url = sqs.get_queue_url(QueueName=fifo_name(cfg, queue))["QueueUrl"]
    while len(out) < want and time.monotonic() < deadline:
        got = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=max(1, min(10, want - len(out))),
            WaitTimeSeconds=1,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        for m in got:
            out.append(sqs_message(m))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def kinesis_setup(cfg):
    k = aws_client(cfg, "kinesis")
    k.create_stream(StreamName=cfg["name"], ShardCount=1)
    deadline = time.monotonic() + cfg.get("timeout_s", 30)
    while True:
        summary = k.describe_stream_summary(StreamName=cfg["name"])["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return {"stream_arn": summary["StreamARN"]}
        if time.monotonic() >= deadline:
            fail(f"stream {cfg['name']} is still {summary['StreamStatus']}")
        time.sleep(0.2)


def kinesis_teardown(cfg):
    k = aws_client(cfg, "kinesis")
    try:
        k.delete_stream(StreamName=cfg["name"], EnforceConsumerDeletion=True)
    except k.exceptions.ResourceNotFoundException:
        pass
    return {}


def kinesis_message(shard, r):
    try:
        envelope = json.loads(r["Data"])
        headers, body = envelope["headers"], envelope["body"]
    except (ValueError, KeyError, TypeError) as e:
        fail(f"record {r['SequenceNumber']} is no {{headers, body}} envelope ({e}): {r['Data']!r}")
    if not isinstance(body, str) or not isinstance(headers, dict):
        fail(f"record {r['SequenceNumber']}: headers must be an object, body a string: {r['Data']!r}")
    return {"headers": headers, "body": body, "id": r["SequenceNumber"],
            "partition_key": r["PartitionKey"], "shard": shard}


def kinesis_reader(cfg):
    """Reads every shard from its start; returns read(deadline, out, want)."""
    k = aws_client(cfg, "kinesis")
    name = cfg["name"]
    iterators = {
        s["ShardId"]: k.get_shard_iterator(StreamName=name, ShardId=s["ShardId"],
                                           ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        for s in k.list_shards(StreamName=name)["Shards"]
    }

    def read(deadline, out, want):
        while len(out) < want and time.monotonic() < deadline:
            empty = True
            for shard, it in list(iterators.items()):
                if it is None:
                    continue
                got = k.get_records(ShardIterator=it, Limit=1000)
                iterators[shard] = got.get("NextShardIterator")
                for r in got["Records"]:
                    empty = False
                    out.append(kinesis_message(shard, r))
            if empty:
                time.sleep(0.2)

    return read


def aws_consume(cfg):
    kind = cfg["kind"]
    if kind == "kinesis":
        read = kinesis_reader(cfg)
    else:
        queue = cfg["name"] + "-sub" if kind == "sns" else cfg["name"]

        def read(deadline, out, want):
            sqs_read(cfg, queue, deadline, out, want)

    out = []
    read(time.monotonic() + cfg.get("timeout_s", 30), out, cfg["count"])
    if cfg.get("settle_s") and len(out) >= cfg["count"]:
        # Anything more (a duplicate would be) is read and reported too.
        read(time.monotonic() + cfg["settle_s"], out, float("inf"))
    return out


AWS = {
    "sqs": {"setup": sqs_setup, "teardown": sqs_teardown, "consume": aws_consume},
    "sns": {"setup": sns_setup, "teardown": sns_teardown, "consume": aws_consume},
    "kinesis": {"setup": kinesis_setup, "teardown": kinesis_teardown, "consume": aws_consume},
}


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
    elif kind in AWS:
        got = AWS[kind][action](cfg)
    else:
        fail(f"unknown kind {kind!r}")
    if action != "consume":
        # The Rust runner parses every answer as JSON.
        print(json.dumps(got or {}))
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
