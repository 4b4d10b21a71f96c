//! Status patterns for the per-endpoint `retry_on` and `give_up_on` lists.
//!
//! Three forms: an exact status (`"429"`), a class (`"5xx"`) and an inclusive range
//! (`"500-504"`). They serialise back to the same text.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One entry of `retry_on` / `give_up_on`, matched against a response status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum StatusPattern {
    /// Exactly this status, e.g. `"429"`.
    Exact(u16),
    /// Every status of this hundred, e.g. `"5xx"` is `Class(5)`.
    Class(u8),
    /// An inclusive range, e.g. `"500-504"`.
    Range {
        /// Lowest matching status.
        low: u16,
        /// Highest matching status.
        high: u16,
    },
}

/// A pattern that is none of `"429"`, `"5xx"` or `"500-504"` within 100–599.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a status pattern (expected e.g. \"429\", \"5xx\" or \"500-504\", within 100-599)"
)]
pub struct InvalidStatusPattern(pub String);

/// Described as a string of one of the three forms.
impl utoipa::PartialSchema for StatusPattern {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(r"^([1-5]xx|[1-5][0-9]{2}(-[1-5][0-9]{2})?)$"))
            .description(Some(
                "A status (\"429\"), a class (\"5xx\") or an inclusive range (\"500-504\"), within 100-599",
            ))
            .examples([serde_json::json!("5xx")])
            .into()
    }
}

impl utoipa::ToSchema for StatusPattern {}

impl StatusPattern {
    /// Whether `status` falls under this pattern.
    pub fn matches(self, status: u16) -> bool {
        match self {
            Self::Exact(exact) => status == exact,
            Self::Class(class) => status / 100 == u16::from(class),
            Self::Range { low, high } => (low..=high).contains(&status),
        }
    }
}

fn parse_status(text: &str) -> Option<u16> {
    if text.len() != 3 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse()
        .ok()
        .filter(|status| (100..=599).contains(status))
}

impl FromStr for StatusPattern {
    type Err = InvalidStatusPattern;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidStatusPattern(text.to_owned());
        let trimmed = text.trim();
        if let Some((low, high)) = trimmed.split_once('-') {
            let low = parse_status(low.trim()).ok_or_else(invalid)?;
            let high = parse_status(high.trim()).ok_or_else(invalid)?;
            return if low <= high {
                Ok(Self::Range { low, high })
            } else {
                Err(invalid())
            };
        }
        let lower = trimmed.to_ascii_lowercase();
        if let Some(digit) = lower.strip_suffix("xx") {
            return match digit.as_bytes() {
                [d @ b'1'..=b'5'] => Ok(Self::Class(d - b'0')),
                _ => Err(invalid()),
            };
        }
        parse_status(trimmed).map(Self::Exact).ok_or_else(invalid)
    }
}

impl TryFrom<String> for StatusPattern {
    type Error = InvalidStatusPattern;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl fmt::Display for StatusPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exact(status) => write!(f, "{status}"),
            Self::Class(class) => write!(f, "{class}xx"),
            Self::Range { low, high } => write!(f, "{low}-{high}"),
        }
    }
}

impl From<StatusPattern> for String {
    fn from(pattern: StatusPattern) -> Self {
        pattern.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> StatusPattern {
        text.parse().unwrap()
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(pattern("429"), StatusPattern::Exact(429));
        assert_eq!(pattern("5xx"), StatusPattern::Class(5));
        assert_eq!(pattern("4XX"), StatusPattern::Class(4));
        assert_eq!(
            pattern("500-504"),
            StatusPattern::Range {
                low: 500,
                high: 504
            }
        );
    }

    #[test]
    fn refuses_malformed_patterns() {
        for text in [
            "", "42", "4290", "600", "099", "6xx", "xx", "5x", "504-500", "abc", "5xx-",
        ] {
            assert!(text.parse::<StatusPattern>().is_err(), "{text:?}");
        }
    }

    #[test]
    fn matches_statuses() {
        assert!(pattern("5xx").matches(503));
        assert!(!pattern("5xx").matches(429));
        assert!(pattern("500-504").matches(500));
        assert!(pattern("500-504").matches(504));
        assert!(!pattern("500-504").matches(505));
        assert!(pattern("429").matches(429));
        assert!(!pattern("429").matches(428));
    }

    #[test]
    fn round_trips_through_json_as_text() {
        for text in ["429", "5xx", "500-504"] {
            let json = serde_json::to_string(&pattern(text)).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<StatusPattern>(&json).unwrap(),
                pattern(text)
            );
        }
        assert!(serde_json::from_str::<StatusPattern>("\"7xx\"").is_err());
    }
}
