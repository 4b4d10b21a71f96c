"""Messages and their attempts: create (eventId, channels, tags, an inline
application), get by id and eventId, list with filters and paging; then,
once delivered, attempts by endpoint and by message, one attempt, the
attempted messages and destinations, a resend, and expunging content; and
the refusals. Puts the ids the receiver must see into seen["messages"]."""

import time
from datetime import timedelta

import httpx
from svix.api import (
    ApplicationIn,
    MessageAttemptListAttemptedDestinationsOptions,
    MessageAttemptListAttemptedMessagesOptions,
    MessageAttemptListByEndpointOptions,
    MessageAttemptListByMsgOptions,
    MessageAttemptTriggerType,
    MessageCreateOptions,
    MessageGetOptions,
    MessageIn,
    MessageListOptions,
    MessageStatus,
    MessageStatusText,
    StatusCodeClass,
)

from check import eq, refused

WAIT_S = 20


def auth(ctx):
    return {"authorization": f"Bearer {ctx['token']}"}


def endpoint_of(ctx):
    """The endpoint the endpoints part made, or one of our own at the receiver."""
    if "endpoint" not in ctx:
        r = httpx.post(f"{ctx['base']}/api/v1/app/{ctx['app']}/endpoint", json={"url": ctx["receiver"]}, headers=auth(ctx))
        eq(r.status_code, 201, "an endpoint of our own")
        ctx["endpoint"] = r.json()["id"]
    return ctx["endpoint"]


def until(what, check):
    """Polls `check` until it answers something truthy, for at most WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {WAIT_S} s")
        time.sleep(0.2)


def every_page(list_page, limit=2):
    """Every item of a list, page by page."""
    items, iterator = [], None
    while True:
        page = list_page(limit, iterator)
        items += page.data
        if page.done:
            return items
        iterator = page.iterator


def create(ctx):
    """The messages, checked as created; answers them, first the one with an eventId."""
    svix, app = ctx["svix"], ctx["app"]
    paid = svix.message.create(
        app,
        MessageIn(event_type="invoice.paid", payload={"amount": 1}, event_id="inv-1", channels=["billing"], tags=["invoice:1"]),
        MessageCreateOptions(with_content=True),
    )
    eq(
        (paid.event_type, paid.payload, paid.event_id, paid.channels, paid.tags),
        ("invoice.paid", {"amount": 1}, "inv-1", ["billing"], ["invoice:1"]),
        "created",
    )
    eq(paid.timestamp is not None and bool(paid.id), True, "an id and a time")
    second = svix.message.create(app, MessageIn(event_type="invoice.paid", payload={"amount": 2}))
    eq((second.payload, second.event_id, second.channels), ({}, None, None), "created without content")
    signup = svix.message.create(app, MessageIn(event_type="user.signup", payload={"email": "a@example.com"}))
    e = refused(lambda: svix.message.create(app, MessageIn(event_type="invoice.paid", payload={}, event_id="inv-1")), 409, "a taken eventId")
    eq(e.code, "conflict", "the conflict's code")
    e = refused(lambda: svix.message.create(app, MessageIn(event_type="x", payload={}, payload_retention_period=30)), 422, "a retention")
    eq(e.detail[0].loc, ["body", "payloadRetentionPeriod"], "the retention named")
    r = httpx.post(f"{ctx['base']}/api/v1/app/{app}/msg", json={"eventType": "x", "payload": [1]}, headers=auth(ctx))
    eq((r.status_code, r.json()["detail"][0]["loc"]), (422, ["body", "payload"]), "a payload not an object")
    refused(lambda: svix.message.create("no-such-app", MessageIn(event_type="x", payload={})), 404, "an unknown app")

    inline = svix.message.create("inline-app", MessageIn(event_type="user.signup", payload={"secret": 1}, application=ApplicationIn(name="Inline")))
    eq(svix.application.get("inline-app").name, "Inline", "the inline application made")
    again = svix.message.create("inline-app", MessageIn(event_type="user.signup", payload={}, application=ApplicationIn(name="Ignored")))
    eq((svix.application.get("inline-app").name, again.id != inline.id), ("Inline", True), "an existing app kept")
    e = refused(lambda: svix.message.create("inline-2", MessageIn(event_type="x", payload={}, application=ApplicationIn(name="B", throttle_rate=5))), 422, "a bad inline app")
    eq(e.detail[0].loc, ["body", "application", "throttleRate"], "the inline field named")
    return paid, second, signup, inline


def read(ctx, paid, sent):
    """Get by id and eventId, and the list: paging, filters, content."""
    svix, app = ctx["svix"], ctx["app"]
    got = svix.message.get(app, paid.id, MessageGetOptions(with_content=True))
    eq((got.id, got.payload, got.tags, got.timestamp), (paid.id, {"amount": 1}, ["invoice:1"], paid.timestamp), "get by id")
    eq(svix.message.get(app, "inv-1").id, paid.id, "get by eventId")
    eq(svix.message.get(app, paid.id).payload, {}, "no payload without content")
    refused(lambda: svix.message.get(app, "msg_nope"), 404, "an unknown message")

    # The parts before may have sent messages of their own: ours are checked.
    ours = {m.id for m in sent}
    listed = every_page(lambda limit, it: svix.message.list(app, MessageListOptions(limit=limit, iterator=it)))
    ids = [m.id for m in listed]
    eq((len(ids) == len(set(ids)), ours <= set(ids)), (True, True), "every message once, across pages")
    times = [m.timestamp for m in listed]
    eq(times, sorted(times, reverse=True), "newest first")

    def only(**options):
        return {m.id for m in svix.message.list(app, MessageListOptions(**options)).data} & ours

    eq(only(event_types=["invoice.paid"]), {sent[1].id, paid.id}, "by event type")
    eq(only(event_types=["invoice.paid", "user.signup"]), ours, "by event types")
    eq(only(channel="billing"), {paid.id}, "by channel")
    eq(only(tag="invoice:1"), {paid.id}, "by tag")
    eq(only(before=paid.timestamp - timedelta(hours=1)), set(), "before")
    eq(only(after=paid.timestamp - timedelta(seconds=1)), ours, "after")
    page = svix.message.list(app, MessageListOptions(with_content=True, channel="billing"))
    eq(page.data[0].payload, {"amount": 1}, "listed with content")
    e = refused(lambda: svix.message.list(app, MessageListOptions(limit=500)), 422, "a limit too large")
    eq(e.detail[0].loc, ["query", "limit"], "the limit named")


def attempts(ctx, endpoint, paid, sent):
    """The attempts once delivered, by endpoint and by message, and one."""
    svix, app = ctx["svix"], ctx["app"]

    ours = {m.id for m in sent}

    def by_endpoint(**options):
        """Our messages' attempts at the endpoint (the parts before may have sent others)."""
        page = svix.message_attempt.list_by_endpoint(app, endpoint, MessageAttemptListByEndpointOptions(**options))
        return [a for a in page.data if a.msg_id in ours]

    made = until("an attempt of every message", lambda: len({a.msg_id for a in by_endpoint(status=MessageStatus.SUCCESS)}) == len(sent) and by_endpoint(with_content=True))
    eq(sorted(a.msg_id for a in made), sorted(ours), "one attempt of every message")
    for a in made:
        eq(
            (a.status, a.status_text, a.response_status_code, a.trigger_type, a.url, a.endpoint_id),
            (MessageStatus.SUCCESS, MessageStatusText.SUCCESS, 200, MessageAttemptTriggerType.SCHEDULED, ctx["receiver"], endpoint),
            "a delivered attempt",
        )
        eq(isinstance(a.response, str) and a.response_duration_ms >= 0, True, "a response and a duration")
    eq(by_endpoint(status=MessageStatus.FAIL), [], "no failed attempt")
    eq(len(by_endpoint(status_code_class=StatusCodeClass.CODE2XX)), len(sent), "all 2xx")
    eq(by_endpoint(status_code_class=StatusCodeClass.CODE5XX), [], "no 5xx")
    eq([a.msg_id for a in by_endpoint(channel="billing")], [paid.id], "by channel")
    eq(len(by_endpoint(event_types=["invoice.paid"])), 2, "by event type")
    with_msg = by_endpoint(with_msg=True, tag="invoice:1")
    eq([(a.msg_id, a.msg.id, a.msg.event_id) for a in with_msg], [(paid.id, paid.id, "inv-1")], "with the message")
    paged = every_page(lambda limit, it: svix.message_attempt.list_by_endpoint(app, endpoint, MessageAttemptListByEndpointOptions(limit=limit, iterator=it)))
    eq(sorted(a.id for a in paged if a.msg_id in ours), sorted(a.id for a in made), "paged")
    refused(lambda: svix.message_attempt.list_by_endpoint(app, "ep_nope"), 404, "an unknown endpoint")

    mine = MessageAttemptListByMsgOptions(endpoint_id=endpoint, with_content=True)
    of_paid = svix.message_attempt.list_by_msg(app, paid.id, mine).data
    eq([(a.msg_id, a.endpoint_id) for a in of_paid], [(paid.id, endpoint)], "by message")
    eq(len(svix.message_attempt.list_by_msg(app, "inv-1", mine).data), 1, "by eventId")
    eq(svix.message_attempt.list_by_msg(app, paid.id, MessageAttemptListByMsgOptions(status=MessageStatus.PENDING)).data, [], "none pending")
    one = svix.message_attempt.get(app, paid.id, of_paid[0].id)
    eq((one.id, one.msg_id, one.status, one.status_text, one.url), (of_paid[0].id, paid.id, 0, "success", ctx["receiver"]), "one attempt")
    eq(svix.message_attempt.get(app, "inv-1", one.id).id, one.id, "one attempt by eventId")
    refused(lambda: svix.message_attempt.get(app, sent[1].id, one.id), 404, "another message's attempt")
    e = refused(lambda: svix.message_attempt.expunge_content(app, paid.id, one.id), 501, "an attempt's content")
    eq(e.code, "not_implemented", "the refusal's code")
    refused(lambda: svix.message_attempt.expunge_content(app, paid.id, "atm_nope"), 404, "an unknown attempt")
    return one


def destinations(ctx, endpoint, paid, sent):
    """Attempted messages of the endpoint, and attempted destinations of one."""
    svix, app = ctx["svix"], ctx["app"]
    ours = {m.id for m in sent}
    msgs = every_page(lambda limit, it: svix.message_attempt.list_attempted_messages(
        app, endpoint, MessageAttemptListAttemptedMessagesOptions(limit=limit, iterator=it, with_content=True)))
    msgs = [m for m in msgs if m.id in ours]
    eq(sorted(m.id for m in msgs), sorted(ours), "attempted messages")
    for m in msgs:
        eq((m.status, m.status_text), (MessageStatus.SUCCESS, MessageStatusText.SUCCESS), "delivered")
    eq([m.payload for m in msgs if m.id == paid.id], [{"amount": 1}], "with content")

    def attempted(**options):
        page = svix.message_attempt.list_attempted_messages(app, endpoint, MessageAttemptListAttemptedMessagesOptions(**options))
        return {m.id for m in page.data} & ours

    eq(attempted(status=MessageStatus.FAIL), set(), "none failed")
    eq(attempted(status=MessageStatus.SUCCESS), ours, "all succeeded")
    eq(attempted(channel="billing"), {paid.id}, "by channel")
    eq(attempted(event_types=["invoice.paid"]), {paid.id, sent[1].id}, "by event type")

    dests = svix.message_attempt.list_attempted_destinations(app, paid.id, MessageAttemptListAttemptedDestinationsOptions(limit=50)).data
    mine = [d for d in dests if d.id == endpoint]
    eq([(d.url, d.status, d.status_text) for d in mine], [(ctx["receiver"], MessageStatus.SUCCESS, MessageStatusText.SUCCESS)], "attempted destination")


def resend_and_expunge(ctx, endpoint, paid, inline):
    svix, app = ctx["svix"], ctx["app"]
    svix.message_attempt.resend(app, paid.id, endpoint)
    mine = MessageAttemptListByMsgOptions(endpoint_id=endpoint)
    resent = until("the resend's attempt", lambda: [
        a for a in svix.message_attempt.list_by_msg(app, paid.id, mine).data
        if a.trigger_type == MessageAttemptTriggerType.MANUAL and a.status == MessageStatus.SUCCESS
    ])
    eq(len(resent), 1, "one manual attempt")
    refused(lambda: svix.message_attempt.resend(app, paid.id, "ep_nope"), 404, "a resend to no endpoint")

    # The inline app has no endpoint, so no delivery of it can be pending.
    svix.message.expunge_content("inline-app", inline.id)
    eq(svix.message.get("inline-app", inline.id, MessageGetOptions(with_content=True)).payload, {}, "expunged")
    refused(lambda: svix.message.expunge_content(app, "msg_nope"), 404, "expunging no message")


def run(ctx):
    endpoint = endpoint_of(ctx)
    paid, second, signup, inline = create(ctx)
    sent = [paid, second, signup]
    read(ctx, paid, sent)
    attempts(ctx, endpoint, paid, sent)
    destinations(ctx, endpoint, paid, sent)
    resend_and_expunge(ctx, endpoint, paid, inline)
    # The receiver sees each message once, and the resent one twice.
    ctx["seen"]["messages"] = {"ids": [m.id for m in sent], "count": len(sent) + 1, "resent": paid.id}
