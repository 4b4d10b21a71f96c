//! `rename-fields`: renames the payload's top-level fields as the endpoint's
//! metadata says, for a receiver that insists on its own names.
//!
//! Each metadata entry `rename.OLD` = `NEW` renames field `OLD` to `NEW`; a
//! field no entry names keeps its name, and an entry whose field is absent does
//! nothing. The fields come out in name order (the SDK's JSON keeps objects
//! sorted). A payload that is not a JSON object is sent as it came.

use hookgate_plugin_sdk::{Answer, Transform, TransformInput, export_transform};
use serde_json::Value;

/// The metadata prefix of a renaming.
pub const PREFIX: &str = "rename.";

/// The transform.
#[derive(Debug, Default)]
pub struct RenameFields;

impl Transform for RenameFields {
    fn transform(&self, input: TransformInput) -> Answer {
        let mut request = input.request;
        let Some(Value::Object(fields)) = input.event.json() else {
            return Answer::Send(request);
        };
        let renamed = fields
            .into_iter()
            .map(|(name, value)| {
                let to = input
                    .endpoint
                    .metadata(&format!("{PREFIX}{name}"))
                    .map_or(name, str::to_owned);
                (to, value)
            })
            .collect();
        request.set_json(&Value::Object(renamed));
        Answer::Send(request)
    }
}

export_transform!(RenameFields);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    }

    #[test]
    fn a_payload_that_is_not_an_object_goes_as_it_came() {
        let input = TransformInput::of_json("a.b", &json!([1, 2]));
        let want = input.request.clone();
        assert_eq!(RenameFields.transform(input), Answer::Send(want));
    }
}
