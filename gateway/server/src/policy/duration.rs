//! Millisecond fields of the policy object (`base_ms`, `retry_window_ms`, …).
//!
//! They accept integer milliseconds, a string of digits (milliseconds, as environment
//! variables deliver them) or a humantime string such as `"30s"` or `"5m"`. Output is
//! always integer milliseconds.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::Value;

/// The shape every millisecond field expects, quoted in error messages.
pub(crate) const EXPECTED_MS: &str =
    "integer milliseconds or a duration string such as \"30s\" or \"5m\"";

/// The API schema of a millisecond field: integer milliseconds up to the policy bound,
/// or a duration string. Only described, never built.
pub(crate) enum DurationMs {}

impl utoipa::PartialSchema for DurationMs {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        let millis = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Int64,
            )))
            .minimum(Some(0))
            .maximum(Some(super::MAX_DURATION_MS))
            .description(Some("milliseconds"));
        let text = ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .description(Some(
                "a duration such as \"30s\", \"5m\" or \"1h 30m\", or digits as milliseconds",
            ));
        OneOfBuilder::new()
            .item(millis)
            .item(text)
            .description(Some(EXPECTED_MS))
            .examples([serde_json::json!(1000), serde_json::json!("5m")])
            .into()
    }
}

impl utoipa::ToSchema for DurationMs {}

/// Parses a duration string into whole milliseconds (sub-millisecond parts are dropped).
pub(crate) fn ms_from_str(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return trimmed
            .parse()
            .map_err(|_| format!("{trimmed:?} is too large"));
    }
    let duration = humantime::parse_duration(trimmed)
        .map_err(|err| format!("{text:?} is not {EXPECTED_MS} ({err})"))?;
    u64::try_from(duration.as_millis()).map_err(|_| format!("{text:?} is too large"))
}

/// Reads one millisecond value from JSON.
pub(crate) fn ms_from_json(value: &Value) -> Result<u64, String> {
    match value {
        Value::Number(number) => number
            .as_u64()
            .ok_or_else(|| format!("{number} is not {EXPECTED_MS}")),
        Value::String(text) => ms_from_str(text),
        other => Err(format!("expected {EXPECTED_MS}, got {}", json_type(other))),
    }
}

/// Names a JSON value's type for "expected …, got …" messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A millisecond value as serde reads it from JSON, TOML or the environment.
struct Millis(u64);

struct MillisVisitor;

impl Visitor<'_> for MillisVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED_MS)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<u64, E> {
        Ok(value)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<u64, E> {
        u64::try_from(value).map_err(|_| E::custom(format!("{value} is not {EXPECTED_MS}")))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<u64, E> {
        ms_from_str(value).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MillisVisitor).map(Millis)
    }
}

/// `deserialize_with` for an optional millisecond field.
pub(crate) fn deserialize_opt_ms<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    Ok(Option::<Millis>::deserialize(deserializer)?.map(|millis| millis.0))
}

/// `deserialize_with` for an optional list of millisecond values (`schedule_ms`).
pub(crate) fn deserialize_opt_ms_list<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<u64>>, D::Error> {
    let list = Option::<Vec<Millis>>::deserialize(deserializer)?;
    Ok(list.map(|values| values.into_iter().map(|millis| millis.0).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn humantime_strings_become_milliseconds() {
        assert_eq!(ms_from_str("30s"), Ok(30_000));
        assert_eq!(ms_from_str("5m"), Ok(300_000));
        assert_eq!(ms_from_str("1h 30m"), Ok(5_400_000));
        assert_eq!(ms_from_str("250ms"), Ok(250));
        assert_eq!(ms_from_str("1500"), Ok(1_500));
        assert!(ms_from_str("soon").is_err());
        assert!(ms_from_str("").is_err());
        assert!(ms_from_str("-5s").is_err());
    }

    #[test]
    fn json_values_are_integer_ms_or_strings() {
        assert_eq!(ms_from_json(&json!(1000)), Ok(1000));
        assert_eq!(ms_from_json(&json!("2s")), Ok(2000));
        assert!(ms_from_json(&json!(-1)).is_err());
        assert!(ms_from_json(&json!(1.5)).is_err());
        assert!(ms_from_json(&json!(true)).is_err());
    }
}
