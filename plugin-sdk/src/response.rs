//! Reading what the receiver answered: a header by name, a field of a JSON
//! response body, and `Retry-After`.

use serde_json::Value;

use crate::Attempt;

impl Attempt {
    /// The first header named `name`, compared without case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON; `None` when it is not JSON (or was cut at 4 KiB).
    pub fn body_json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// A field of a JSON body, by a dotted path: `"error"`, `"error.code"`, or
    /// `"errors.0.code"` for an array element.
    pub fn json_field(&self, path: &str) -> Option<Value> {
        let mut value = self.body_json()?;
        for part in path.split('.') {
            value = match value {
                Value::Object(mut map) => map.remove(part)?,
                Value::Array(mut items) => {
                    let i: usize = part.parse().ok()?;
                    if i >= items.len() {
                        return None;
                    }
                    items.swap_remove(i)
                }
                _ => return None,
            };
        }
        Some(value)
    }

    /// A string field of a JSON body (see [`Attempt::json_field`]).
    pub fn json_str(&self, path: &str) -> Option<String> {
        match self.json_field(path)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative integer field of a JSON body; a numeric string counts too
    /// (`"30"`), since APIs send both.
    pub fn json_u64(&self, path: &str) -> Option<u64> {
        match self.json_field(path)? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The `Retry-After` in milliseconds: the host's parse when it has one (which
    /// also understands HTTP dates), otherwise the header read as whole seconds.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after_ms
            .or_else(|| self.header("retry-after").and_then(parse_retry_after))
    }
}

/// A `Retry-After` value of whole seconds, in milliseconds (saturating). An HTTP
/// date needs a clock, which plugins do not have; the host parses those into
/// [`Attempt::retry_after_ms`].
pub fn parse_retry_after(value: &str) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs = v.parse::<u64>().unwrap_or(u64::MAX);
    Some(secs.saturating_mul(1_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_found_without_case() {
        let a = Attempt::builder()
            .header("Content-Type", "application/json")
            .build();
        assert_eq!(a.header("content-type"), Some("application/json"));
        assert_eq!(a.header("CONTENT-TYPE"), Some("application/json"));
        assert_eq!(a.header("retry-after"), None);
    }

    #[test]
    fn json_fields_by_dotted_path() {
        let a = Attempt::builder()
            .body(r#"{"error":{"code":"x","retry_in":"12"},"errors":[{"code":"a"},{"code":"b"}]}"#)
            .build();
        assert_eq!(a.json_str("error.code").as_deref(), Some("x"));
        assert_eq!(a.json_u64("error.retry_in"), Some(12));
        assert_eq!(a.json_str("errors.1.code").as_deref(), Some("b"));
        assert_eq!(a.json_str("errors.5.code"), None);
        assert_eq!(a.json_str("error"), None, "an object is not a string");
        assert_eq!(a.json_field("nope"), None);
        let not_json = Attempt::builder().body("<html>").build();
        assert_eq!(not_json.json_field("error"), None);
    }

    #[test]
    fn retry_after_prefers_the_hosts_parse() {
        assert_eq!(parse_retry_after(" 30 "), Some(30_000));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("99999999999999999999"), Some(u64::MAX));
        let header_only = Attempt::builder().header("Retry-After", "5").build();
        assert_eq!(header_only.retry_after(), Some(5_000));
        let both = Attempt::builder()
            .header("retry-after", "5")
            .retry_after_ms(7_000)
            .build();
        assert_eq!(both.retry_after(), Some(7_000));
    }
}
