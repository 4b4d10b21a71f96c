//! `form-body`: sends the payload's top-level fields form-encoded
//! (`application/x-www-form-urlencoded`), for receivers built for HTML forms.
//!
//! Fields go in name order (the SDK's JSON keeps objects sorted). A string is
//! sent as it is, a number, boolean or null as its JSON text, and an
//! array or object as its JSON text too, so nothing is lost. The event type is
//! added as `event_type` unless the payload has such a field. A payload that is
//! not a JSON object is sent as one field, `payload`.

use hookgate_plugin_sdk::{Answer, Transform, TransformInput, export_transform};
use serde_json::Value;

/// The transform.
#[derive(Debug, Default)]
pub struct FormBody;

impl Transform for FormBody {
    fn transform(&self, input: TransformInput) -> Answer {
        let mut pairs: Vec<(String, String)> = match input.event.json() {
            Some(Value::Object(fields)) => fields
                .into_iter()
                .map(|(name, value)| (name, text(value)))
                .collect(),
            _ => vec![(
                "payload".into(),
                String::from_utf8_lossy(&input.event.payload).into_owned(),
            )],
        };
        if !pairs.iter().any(|(name, _)| name == "event_type") {
            pairs.push(("event_type".into(), input.event.event_type.clone()));
        }
        let mut request = input.request;
        request.set_form(&pairs);
        Answer::Send(request)
    }
}

fn text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

export_transform!(FormBody);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_become_form_pairs() {
        let input =
            TransformInput::of_json("a.b", &json!({"name": "Zoë Q", "n": 2, "tags": ["x"]}));
        let Answer::Send(r) = FormBody.transform(input) else {
            panic!("skipped")
        };
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "n=2&name=Zo%C3%AB+Q&tags=%5B%22x%22%5D&event_type=a.b"
        );
        assert_eq!(r.content_type, "application/x-www-form-urlencoded");
    }
}
