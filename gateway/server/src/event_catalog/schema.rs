//! JSON Schema documents of the catalog: checked when stored (against their
//! meta-schema, and compiled), and compiled once to validate payloads.
//!
//! A schema may refer only within itself: no retriever reaches the network or
//! the file system (the crate is built without either, and the retriever
//! given refuses every URI besides), so storing or using a schema never makes
//! hookgate fetch anything. Patterns run on the linear-time `regex` engine, so
//! a hostile `pattern` cannot make validation backtrack for long.

use jsonschema::{PatternOptions, Retrieve, Uri, Validator};
use serde_json::Value;

/// Why a schema document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SchemaError {
    /// Not a JSON Schema: its meta-schema refuses it at `at`.
    #[error("is not a valid JSON Schema at {at}: {message}")]
    NotASchema { at: String, message: String },
    /// Valid, but it cannot be compiled (a `$ref` outside itself, a pattern
    /// the engine refuses).
    #[error("cannot be used: {0}")]
    Unusable(String),
}

/// Why a payload was refused by its type's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the payload does not match schema version {version} of {event_type} at {at}: {message}")]
pub(crate) struct PayloadRejected {
    pub event_type: String,
    pub version: String,
    /// JSON Pointer into the payload (empty: the payload itself).
    pub at: String,
    pub message: String,
    /// The property missing there, when that is why.
    pub missing: Option<String>,
}

/// The retriever every schema is compiled with: it refuses every URI.
struct NoRetriever;

impl Retrieve for NoRetriever {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "a schema may refer only within itself, not to {}",
            uri.as_str()
        )
        .into())
    }
}

/// A compiled schema, ready to check payloads.
pub(crate) struct PayloadSchema {
    version: String,
    validator: Validator,
}

impl std::fmt::Debug for PayloadSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayloadSchema")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl PayloadSchema {
    /// Compiles `doc`, schema version `version` of a type.
    ///
    /// # Errors
    /// If it is not a JSON Schema, or refers outside itself.
    pub(crate) fn compile(version: &str, doc: &Value) -> Result<Self, SchemaError> {
        if let Err(e) = jsonschema::meta::validate(doc) {
            return Err(SchemaError::NotASchema {
                at: pointer_or_root(&e.instance_path().to_string()),
                message: e.to_string(),
            });
        }
        let validator = jsonschema::options()
            .with_retriever(NoRetriever)
            .with_pattern_options(PatternOptions::regex())
            .build(doc)
            .map_err(|e| SchemaError::Unusable(e.to_string()))?;
        Ok(Self {
            version: version.to_owned(),
            validator,
        })
    }

    /// Checks `payload`, an event of `event_type`; the first error found.
    ///
    /// # Errors
    /// Where and why the payload does not match.
    pub(crate) fn check(&self, event_type: &str, payload: &Value) -> Result<(), PayloadRejected> {
        self.validator
            .validate(payload)
            .map_err(|e| PayloadRejected {
                event_type: event_type.to_owned(),
                version: self.version.clone(),
                at: pointer_or_root(&e.instance_path().to_string()),
                message: e.to_string(),
                missing: match e.kind() {
                    jsonschema::error::ValidationErrorKind::Required { property } => {
                        property.as_str().map(str::to_owned)
                    }
                    _ => None,
                },
            })
    }
}

/// A JSON Pointer as people read it: `(root)` for the empty one.
fn pointer_or_root(pointer: &str) -> String {
    if pointer.is_empty() {
        "(root)".to_owned()
    } else {
        pointer.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn order() -> Value {
        json!({
            "type": "object",
            "required": ["amount"],
            "properties": {
                "amount": {"type": "integer", "minimum": 0},
                "currency": {"$ref": "#/$defs/currency"}
            },
            "$defs": {"currency": {"type": "string", "pattern": "^[A-Z]{3}$"}}
        })
    }

    #[test]
    fn a_payload_is_checked_with_the_place_and_reason_of_its_first_error() {
        let s = PayloadSchema::compile("1", &order()).unwrap();
        assert!(
            s.check("order.paid", &json!({"amount": 5, "currency": "EUR"}))
                .is_ok()
        );
        let e = s.check("order.paid", &json!({"amount": -1})).unwrap_err();
        assert_eq!((e.at.as_str(), e.version.as_str()), ("/amount", "1"));
        assert!(e.message.contains("minimum"), "{e}");
        let e = s
            .check("order.paid", &json!({"amount": 1, "currency": "euro"}))
            .unwrap_err();
        assert_eq!(e.at, "/currency");
        let e = s.check("order.paid", &json!([])).unwrap_err();
        assert_eq!(e.at, "(root)");
    }

    #[test]
    fn a_schema_that_is_not_one_or_refers_outside_itself_is_refused() {
        let bad = json!({"type": "objekt"});
        assert!(matches!(
            PayloadSchema::compile("1", &bad),
            Err(SchemaError::NotASchema { .. })
        ));
        for outside in [
            "https://example.com/schema.json",
            "file:///etc/passwd",
            "other.json#/x",
        ] {
            let doc = json!({"properties": {"a": {"$ref": outside}}});
            assert!(
                matches!(
                    PayloadSchema::compile("1", &doc),
                    Err(SchemaError::Unusable(_))
                ),
                "{outside}"
            );
        }
    }
}
