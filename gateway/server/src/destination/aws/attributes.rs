//! How a message's attributes fit the AWS services: SQS and SNS take at most
//! ten message attributes, each a non-empty string, so past nine the rest
//! travel together as one JSON object; Kinesis has no attributes, so a record
//! is a JSON envelope of the headers and the body. And the message group or
//! partition key, picked from the payload by a JSON pointer.

use serde_json::{Map, Value};

use crate::destination::{BrokerMessage, PublishFailure};
use crate::policy::FailureKind;

/// The most message attributes SQS and SNS take.
pub(crate) const MAX_ATTRIBUTES: usize = 10;

/// The attribute holding, as a JSON object, those past the first nine.
pub(crate) const OVERFLOW_ATTRIBUTE: &str = "hookgate-headers";

/// The attributes in the order they matter most to a consumer: the
/// signature's, then the event type and content type, then the rest as built.
fn by_importance(message: &BrokerMessage) -> Vec<(&str, &str)> {
    const FIRST: [&str; 5] = [
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        super::super::EVENT_TYPE_ATTRIBUTE,
        "content-type",
    ];
    let mut out: Vec<(&str, &str)> = message
        .attributes
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    out.sort_by_key(|(name, _)| FIRST.iter().position(|f| f == name).unwrap_or(FIRST.len()));
    out
}

/// The message attributes to send to SQS or SNS: each as it is while they
/// fit; otherwise the first nine and [`OVERFLOW_ATTRIBUTE`] with the rest.
/// An empty value, which the services refuse, travels in the overflow.
pub(crate) fn message_attributes(message: &BrokerMessage) -> Vec<(String, String)> {
    let all = by_importance(message);
    let (mut direct, mut rest): (Vec<_>, Vec<_>) =
        all.into_iter().partition(|(_, v)| !v.is_empty());
    if direct.len() + usize::from(!rest.is_empty()) > MAX_ATTRIBUTES {
        rest.splice(0..0, direct.split_off(MAX_ATTRIBUTES - 1));
    }
    let mut out: Vec<(String, String)> = direct
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    if !rest.is_empty() {
        let object: Map<String, Value> = rest
            .into_iter()
            .map(|(n, v)| (n.to_owned(), Value::String(v.to_owned())))
            .collect();
        out.push((
            OVERFLOW_ATTRIBUTE.to_owned(),
            Value::Object(object).to_string(),
        ));
    }
    out
}

/// What an SQS send or an SNS publish carries, as both services take it.
pub(super) struct Queued<'a> {
    /// The payload, which both carry as text.
    pub(super) body: &'a str,
    /// At most [`MAX_ATTRIBUTES`], by [`message_attributes`].
    pub(super) attributes: Vec<(String, String)>,
    /// For a FIFO queue or topic: the message group and the deduplication id.
    pub(super) fifo: Option<(String, String)>,
}

/// `message` as `service` takes it: the body as text, the attributes that
/// fit, and for a FIFO target the group (the payload's at `group_path`, or
/// `endpoint_id`) with the event id as deduplication id.
pub(super) fn queued<'a>(
    message: &'a BrokerMessage,
    service: &str,
    fifo: bool,
    group_path: Option<&str>,
    endpoint_id: &str,
) -> Result<Queued<'a>, PublishFailure> {
    // A payload is JSON, so this refuses only what could never be sent.
    let body = std::str::from_utf8(&message.body).map_err(|_| {
        PublishFailure::new(
            FailureKind::Rejected,
            format!("{service} carries text, and this payload is not UTF-8"),
        )
    })?;
    let fifo = fifo.then(|| {
        (
            group_of(message, group_path, endpoint_id),
            message.event_id.clone(),
        )
    });
    Ok(Queued {
        body,
        attributes: message_attributes(message),
        fifo,
    })
}

/// A Kinesis record's data: `{"headers": {...}, "body": "..."}` with every
/// attribute and the body exactly as signed (`body_base64` instead when the
/// body is not UTF-8).
pub(crate) fn envelope(message: &BrokerMessage) -> Vec<u8> {
    let headers: Map<String, Value> = message
        .attributes
        .iter()
        .map(|(n, v)| (n.clone(), Value::String(v.clone())))
        .collect();
    let mut out = Map::new();
    out.insert("headers".into(), Value::Object(headers));
    match std::str::from_utf8(&message.body) {
        Ok(text) => out.insert("body".into(), Value::String(text.to_owned())),
        Err(_) => {
            use base64::Engine as _;
            let encoded = base64::engine::general_purpose::STANDARD.encode(&message.body);
            out.insert("body_base64".into(), Value::String(encoded))
        }
    };
    Value::Object(out).to_string().into_bytes()
}

/// The group (or partition key) of `message`: the payload's value at
/// `pointer` when it is a non-empty string or a number, else `fallback`.
/// Cut to the services' 128 characters, each outside printable ASCII (which
/// SQS and SNS refuse in a group id) made `-`.
pub(crate) fn group_of(message: &BrokerMessage, pointer: Option<&str>, fallback: &str) -> String {
    let picked = pointer.and_then(|p| {
        let payload: Value = serde_json::from_slice(&message.body).ok()?;
        match payload.pointer(p)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    });
    let group = picked.unwrap_or_else(|| fallback.to_owned());
    group
        .chars()
        .take(128)
        .map(|c| if c.is_ascii_graphic() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn message(extra: usize) -> BrokerMessage {
        let mut attributes = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("traceparent".to_owned(), "00-abc-def-01".to_owned()),
            ("webhook-id".to_owned(), "evt_1".to_owned()),
            ("webhook-timestamp".to_owned(), "1700000000".to_owned()),
            ("webhook-signature".to_owned(), "v1,abc".to_owned()),
            ("hookgate-event-type".to_owned(), "order.paid".to_owned()),
        ];
        for i in 0..extra {
            attributes.push((format!("x-extra-{i}"), format!("v{i}")));
        }
        BrokerMessage {
            event_id: "evt_1".into(),
            event_type: "order.paid".into(),
            timestamp_s: 1_700_000_000,
            body: Bytes::from_static(br#"{"customer":{"id":"c-9","n":7}}"#),
            attributes,
        }
    }

    #[test]
    fn attributes_that_fit_go_as_they_are_signature_first() {
        let out = message_attributes(&message(4));
        assert_eq!(out.len(), 10);
        assert_eq!(out[0].0, "webhook-id");
        assert_eq!(out[2].0, "webhook-signature");
        assert!(out.iter().all(|(n, _)| n != OVERFLOW_ATTRIBUTE));
    }

    #[test]
    fn past_ten_the_rest_travel_as_one_json_object() {
        let m = message(6);
        let out = message_attributes(&m);
        assert_eq!(out.len(), MAX_ATTRIBUTES);
        let (name, value) = out.last().unwrap();
        assert_eq!(name, OVERFLOW_ATTRIBUTE);
        let rest: Map<String, Value> = serde_json::from_str(value).unwrap();
        // Nothing is lost: nine direct plus the overflow's hold all twelve.
        assert_eq!(9 + rest.len(), m.attributes.len());
        assert!(out[..9].iter().any(|(n, _)| n == "webhook-signature"));
    }

    #[test]
    fn the_group_comes_from_the_payload_or_the_fallback() {
        let m = message(0);
        assert_eq!(group_of(&m, Some("/customer/id"), "ep"), "c-9");
        assert_eq!(group_of(&m, Some("/customer/n"), "ep"), "7");
        assert_eq!(group_of(&m, Some("/missing"), "ep"), "ep");
        assert_eq!(group_of(&m, None, "ep"), "ep");
    }

    #[test]
    fn the_envelope_holds_every_header_and_the_exact_body() {
        let m = message(12);
        let v: Value = serde_json::from_slice(&envelope(&m)).unwrap();
        assert_eq!(v["headers"].as_object().unwrap().len(), m.attributes.len());
        assert_eq!(v["body"].as_str().unwrap().as_bytes(), &m.body[..]);
    }
}
