//! `slack-message`: turns an event into a Slack incoming-webhook message, so an
//! endpoint can be a Slack webhook URL.
//!
//! The message's `text` is the event type in bold, then each top-level scalar
//! field of the payload as `name: value`, in name order, at most [`MAX_FIELDS`] of them; the
//! endpoint's metadata `slack.channel`, when set, becomes the message's
//! `channel`. Slack ignores the signature headers; a receiver that checks them
//! verifies the message as sent.

use hookgate_plugin_sdk::{Answer, Transform, TransformInput, export_transform};
use serde_json::{Map, Value, json};

/// The most payload fields the text lists.
pub const MAX_FIELDS: usize = 10;

/// The transform.
#[derive(Debug, Default)]
pub struct SlackMessage;

impl Transform for SlackMessage {
    fn transform(&self, input: TransformInput) -> Answer {
        let mut text = format!("*{}*", input.event.event_type);
        if let Some(Value::Object(fields)) = input.event.json() {
            for (name, value) in fields.iter().filter_map(scalar).take(MAX_FIELDS) {
                text.push_str(&format!("\n{name}: {value}"));
            }
        }
        let mut message = Map::new();
        message.insert("text".into(), json!(text));
        if let Some(channel) = input.endpoint.metadata("slack.channel") {
            message.insert("channel".into(), json!(channel));
        }
        let mut request = input.request;
        request.set_json(&Value::Object(message));
        Answer::Send(request)
    }
}

/// A field's name and its value as text, if it is a string, number or boolean.
fn scalar((name, value): (&String, &Value)) -> Option<(String, String)> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    Some((name.clone(), text))
}

export_transform!(SlackMessage);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_lists_the_type_and_the_scalar_fields() {
        let mut input = TransformInput::of_json(
            "invoice.paid",
            &json!({"amount": 42, "customer": "acme", "lines": [1], "paid": true}),
        );
        input.endpoint.metadata = vec![("slack.channel".into(), "#billing".into())];
        let Answer::Send(r) = SlackMessage.transform(input) else {
            panic!("skipped")
        };
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            body,
            json!({"text": "*invoice.paid*\namount: 42\ncustomer: acme\npaid: true",
                   "channel": "#billing"})
        );
        assert_eq!(r.content_type, "application/json");
    }
}
