//! `rename-fields`: renames the payload's top-level fields as the endpoint's
//! metadata says, for a receiver that insists on its own names.
//!
//! Each metadata entry `rename.OLD` = `NEW` renames field `OLD` to `NEW`; a
//! field no entry names keeps its name, and an entry whose field is absent does
//! nothing. The fields keep their order, and their values go as they came
//! (read and written with the SDK's `Event::fields` and `Request::set_fields`,
//! never parsed, which keeps a large payload cheap). A payload that is not a
//! JSON object is sent as it came.

use hookgate_plugin_sdk::{Answer, Transform, TransformInput, export_transform};

/// The metadata prefix of a renaming.
pub const PREFIX: &str = "rename.";

/// The transform.
#[derive(Debug, Default)]
pub struct RenameFields;

impl Transform for RenameFields {
    fn transform(&self, input: TransformInput) -> Answer {
        let mut request = input.request;
        let Some(mut fields) = input.event.fields() else {
            return Answer::Send(request);
        };
        let mut key = String::from(PREFIX);
        for (name, _) in &mut fields {
            key.truncate(PREFIX.len());
            key.push_str(name);
            if let Some(to) = input.endpoint.metadata(&key) {
                *name = to.to_owned();
            }
        }
        request.set_fields(&fields);
        Answer::Send(request)
    }
}

export_transform!(RenameFields);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn renames_what_the_metadata_names_and_keeps_the_rest() {
        let mut input = TransformInput::of_json("a.b", &json!({"id": 1, "amt": 5, "x": null}));
        input.endpoint.metadata = vec![
            ("rename.amt".into(), "amount".into()),
            ("rename.gone".into(), "never".into()),
        ];
        let Answer::Send(r) = RenameFields.transform(input) else {
            panic!("skipped")
        };
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body, json!({"id": 1, "amount": 5, "x": null}));
        assert_eq!(r.content_type, "application/json");
    }

    #[test]
    fn fields_keep_their_order_and_their_values_as_written() {
        let payload = br#"{"z": [1, 2], "amt": {"v": "a\"b"}, "a": 1.50}"#;
        let mut input = TransformInput::of_json("a.b", &json!({}));
        input.event.payload = payload.to_vec();
        input.endpoint.metadata = vec![("rename.amt".into(), "amount".into())];
        let Answer::Send(r) = RenameFields.transform(input) else {
            panic!("skipped")
        };
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            r#"{"z":[1, 2],"amount":{"v": "a\"b"},"a":1.50}"#
        );
    }

    #[test]
    fn a_payload_that_is_not_an_object_goes_as_it_came() {
        let input = TransformInput::of_json("a.b", &json!([1, 2]));
        let want = input.request.clone();
        assert_eq!(RenameFields.transform(input), Answer::Send(want));
    }
}
