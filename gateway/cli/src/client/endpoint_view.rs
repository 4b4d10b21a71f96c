//! How endpoints read in human output: a list table, one endpoint's fields (its
//! destination among them, never a secret), and its signing secrets with their
//! expiry.

use serde_json::{Value, json};

use super::table::{Table, cell, key_values, millis};
use super::{list_items, next_page};

fn status(ep: &Value) -> String {
    if ep["disabled"] == json!(true) {
        format!("disabled ({})", cell(&ep["disabled_reason"]))
    } else {
        "enabled".to_owned()
    }
}

fn breaker(ep: &Value) -> String {
    let b = &ep["breaker"];
    let mut text = format!("{}, {} trips", cell(&b["state"]), cell(&b["trips"]));
    if let Some(until) = b["open_until"].as_str() {
        text.push_str(", open until ");
        text.push_str(until);
    }
    text
}

pub(super) fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no endpoints\n".to_owned();
    }
    let mut table = Table::new(&[
        "ENDPOINT",
        "DESTINATION",
        "EVENT TYPES",
        "STATUS",
        "BREAKER",
        "CREATED",
    ]);
    for ep in items {
        table.row(vec![
            cell(&ep["id"]),
            destination_cell(ep),
            cell(&ep["event_types"]),
            status(ep),
            cell(&ep["breaker"]["state"]),
            cell(&ep["created_at"]),
        ]);
    }
    table.render() + &next_page(v)
}

pub(super) fn render_endpoint(ep: &Value) -> String {
    let policy = if ep["policy"].is_null() {
        "gateway default".to_owned()
    } else {
        cell(&ep["policy"])
    };
    let rate = ep["rate_limit_per_s"]
        .as_u64()
        .map_or_else(|| "none".to_owned(), |n| format!("{n}/s"));
    key_values(&[
        ("id", cell(&ep["id"])),
        ("url", cell(&ep["url"])),
        ("destination", destination(&ep["destination"])),
        ("description", cell(&ep["description"])),
        ("event types", cell(&ep["event_types"])),
        ("status", status(ep)),
        ("breaker", breaker(ep)),
        ("policy", policy),
        ("effective policy", cell(&ep["policy_effective"])),
        ("plugin", cell(&ep["plugin"])),
        (
            "timeout",
            ep["timeout_ms"].as_u64().map_or("-".into(), millis),
        ),
        ("max in flight", cell(&ep["max_in_flight"])),
        ("rate limit", rate),
        ("headers", headers(ep)),
        ("signature", signature(&ep["signature"])),
        ("created", cell(&ep["created_at"])),
    ])
}

/// The destination's kind, what it publishes to and as whom; `http` for
/// the default (and for a gateway that predates destinations).
fn destination(d: &Value) -> String {
    let kind = d["type"].as_str().unwrap_or("http");
    let mut parts = target(d);
    if let Some(name) = d["credentials"]["name"].as_str() {
        parts.push(format!("credentials {name} (named by the operator)"));
    } else if let Some(user) = d["credentials"]["username"].as_str() {
        parts.push(format!("as user {user}"));
    } else if d["credentials"]["token"].is_string() {
        parts.push("with a token".to_owned());
    } else if let Some(key) = d["credentials"]["access_key_id"].as_str() {
        parts.push(format!("as key {key}"));
    }
    if parts.is_empty() {
        return kind.to_owned();
    }
    format!("{kind}: {}", parts.join(", "))
}

/// What a broker destination publishes to, as `name value` phrases.
fn target(d: &Value) -> Vec<String> {
    let text = |field: &str| d[field].as_str();
    let mut parts = Vec::new();
    match d["type"].as_str() {
        Some("rabbitmq") => {
            parts.push(match text("exchange") {
                Some("") | None => "the default exchange".to_owned(),
                Some(e) => format!("exchange {e}"),
            });
            parts.push(match text("routing_key") {
                Some(k) => format!("routing key {k}"),
                None => "routing key: the event's type".to_owned(),
            });
        }
        Some("nats") => parts.extend(text("subject").map(|s| format!("subject {s}"))),
        Some("redis") => {
            parts.extend(text("stream").map(|s| format!("stream {s}")));
            parts.extend(d["max_len"].as_u64().map(|n| format!("max len ~{n}")));
        }
        Some("sqs") => parts.extend(text("queue_url").map(|q| format!("queue {q}"))),
        Some("sns") => parts.extend(text("topic_arn").map(|t| format!("topic {t}"))),
        Some("kinesis") => parts.extend(text("stream").map(|s| format!("stream {s}"))),
        _ => {}
    }
    parts.extend(text("region").map(|r| format!("region {r}")));
    parts.extend(text("message_group_path").map(|p| format!("message group at {p}")));
    parts.extend(text("partition_key_path").map(|p| format!("partition key at {p}")));
    parts
}

/// The list's destination cell: the URL of an http endpoint; a broker's kind,
/// address and target (`rabbitmq amqp://… exchange=orders key=k`).
fn destination_cell(ep: &Value) -> String {
    let d = &ep["destination"];
    let kind = d["type"].as_str().unwrap_or("http");
    if kind == "http" {
        return cell(&ep["url"]);
    }
    let mut text = format!("{kind} {}", cell(&ep["url"]));
    for (field, short) in [
        ("exchange", "exchange"),
        ("routing_key", "key"),
        ("subject", "subject"),
        ("stream", "stream"),
        ("queue_url", "queue"),
        ("topic_arn", "topic"),
        ("region", "region"),
    ] {
        if let Some(v) = d[field].as_str() {
            let v = if v.is_empty() { "''" } else { v };
            text.push_str(&format!(" {short}={v}"));
        }
    }
    text
}

/// The signature setting as `v1,v1a under webhook-* and svix-*`.
fn signature(setting: &Value) -> String {
    let schemes: Vec<&str> = setting["schemes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let names = match setting["headers"].as_str() {
        Some("svix") => "svix-*",
        Some("both") => "webhook-* and svix-*",
        _ => "webhook-*",
    };
    let schemes = if schemes.is_empty() {
        "v1".to_owned()
    } else {
        schemes.join(",")
    };
    format!("{schemes} under {names}")
}

/// The endpoint's custom headers as `name: value`, sensitive ones masked by
/// the gateway; `none` without any.
fn headers(ep: &Value) -> String {
    let Some(headers) = ep["headers"].as_object().filter(|h| !h.is_empty()) else {
        return "none".to_owned();
    };
    headers
        .iter()
        .map(|(name, value)| format!("{name}: {}", value.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The live secrets; with `v1a`, each one's public key (`whpk_`) too.
pub(super) fn render_secrets(v: &Value) -> String {
    let secrets: Vec<&Value> = v["secrets"].as_array().into_iter().flatten().collect();
    let v1a = secrets.iter().any(|s| s["public_key"].is_string());
    let mut table = if v1a {
        Table::new(&["SECRET", "PUBLIC KEY (v1a)", "EXPIRES"])
    } else {
        Table::new(&["SECRET", "EXPIRES"])
    };
    for s in secrets {
        let expires = s["expires_at"].as_str().unwrap_or("never (current)");
        let mut row = vec![cell(&s["secret"])];
        if v1a {
            row.push(cell(&s["public_key"]));
        }
        row.push(expires.to_owned());
        table.row(row);
    }
    let setting = format!("signature: {}\n", signature(&v["signature"]));
    if table.is_empty() {
        return format!("secret: {}\n{setting}", cell(&v["secret"]));
    }
    table.render() + &setting
}
