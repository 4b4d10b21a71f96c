//! `skip-by-field`: skips events whose payload marks them, for example test
//! events a receiver should never see.
//!
//! The field is the JSON pointer in the endpoint's metadata `skip.pointer`
//! (`/test` when unset); the event is skipped when its value there equals
//! `skip.equals` read as JSON (`true` when unset), and sent unchanged otherwise.

use hookgate_plugin_sdk::{Answer, Transform, TransformInput, export_transform};
use serde_json::Value;

/// The transform.
#[derive(Debug, Default)]
pub struct SkipByField;

impl Transform for SkipByField {
    fn transform(&self, input: TransformInput) -> Answer {
        let pointer = input.endpoint.metadata("skip.pointer").unwrap_or("/test");
        let equals = input
            .endpoint
            .metadata("skip.equals")
            .map_or(Value::Bool(true), |v| {
                serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()))
            });
        let marked = input
            .event
            .json()
            .is_some_and(|payload| payload.pointer(pointer) == Some(&equals));
        if marked {
            return Answer::Skip(format!("{pointer} is {equals}"));
        }
        Answer::Send(input.request)
    }
}

export_transform!(SkipByField);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skips_what_is_marked_and_sends_the_rest_unchanged() {
        let marked = TransformInput::of_json("a.b", &json!({"test": true}));
        assert_eq!(
            SkipByField.transform(marked),
            Answer::Skip("/test is true".into())
        );
        let plain = TransformInput::of_json("a.b", &json!({"test": false}));
        let want = plain.request.clone();
        assert_eq!(SkipByField.transform(plain), Answer::Send(want));
        let mut custom = TransformInput::of_json("a.b", &json!({"env": {"name": "staging"}}));
        custom.endpoint.metadata = vec![
            ("skip.equals".into(), "staging".into()),
            ("skip.pointer".into(), "/env/name".into()),
        ];
        assert_eq!(
            SkipByField.transform(custom),
            Answer::Skip("/env/name is \"staging\"".into())
        );
    }
}
