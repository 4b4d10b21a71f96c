//! Event types and the patterns endpoints subscribe with.
//!
//! A pattern is `*` (everything), an exact type, or a prefix ending in `.*`:
//! `order.*` matches `order.paid` and `order.x.y`, but not `order`.

/// Why an event type or pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EventTypeError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters")]
    TooLong { max: usize },
    #[error("may contain only letters, digits and . _ - :")]
    BadChar,
    #[error("`*` may only stand alone or as the last segment after a `.`")]
    BadWildcard,
}

fn check_chars(s: &str, max: usize) -> Result<(), EventTypeError> {
    if s.is_empty() {
        return Err(EventTypeError::Empty);
    }
    if s.len() > max {
        return Err(EventTypeError::TooLong { max });
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
    {
        return Err(EventTypeError::BadChar);
    }
    Ok(())
}

/// Validates an event type given at ingest.
///
/// # Errors
/// If it is empty, longer than `max`, or has a character outside the allowed set.
pub(crate) fn validate_type(t: &str, max: usize) -> Result<(), EventTypeError> {
    check_chars(t, max)
}

/// Whether `p`, a valid subscription, is a pattern (`*`, or `prefix.*`) rather
/// than one type's name.
pub(crate) fn is_pattern(p: &str) -> bool {
    p == "*" || p.ends_with(".*")
}

/// Validates a subscription pattern.
///
/// # Errors
/// As [`validate_type`], plus a misplaced `*`.
pub(crate) fn validate_pattern(p: &str, max: usize) -> Result<(), EventTypeError> {
    if p == "*" {
        return Ok(());
    }
    if p.len() > max {
        return Err(EventTypeError::TooLong { max });
    }
    let body = p.strip_suffix(".*").unwrap_or(p);
    if body.contains('*') {
        return Err(EventTypeError::BadWildcard);
    }
    check_chars(body, max)
}

/// Whether `event_type` matches `pattern`.
pub(crate) fn matches(pattern: &str, event_type: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match pattern.strip_suffix(".*") {
        Some(prefix) => event_type
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('.')),
        None => pattern == event_type,
    }
}

/// Whether any of `patterns` matches `event_type`.
pub(crate) fn any_matches(patterns: &[String], event_type: &str) -> bool {
    patterns.iter().any(|p| matches(p, event_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_patterns_match_deeper_types_only() {
        assert!(matches("*", "anything.at.all"));
        assert!(matches("order.*", "order.paid"));
        assert!(matches("order.*", "order.x.y"));
        assert!(!matches("order.*", "order"));
        assert!(!matches("order.*", "order."));
        assert!(!matches("order.*", "orders.paid"));
        assert!(matches("order.paid", "order.paid"));
        assert!(!matches("order.paid", "order.paid.late"));
        assert!(any_matches(&["a".into(), "b.*".into()], "b.c"));
        assert!(!any_matches(&[], "b.c"));
    }

    #[test]
    fn types_and_patterns_are_validated() {
        assert_eq!(validate_type("", 10), Err(EventTypeError::Empty));
        assert_eq!(
            validate_type("a".repeat(11).as_str(), 10),
            Err(EventTypeError::TooLong { max: 10 })
        );
        assert_eq!(validate_type("a b", 10), Err(EventTypeError::BadChar));
        assert_eq!(validate_type("a*", 10), Err(EventTypeError::BadChar));
        assert!(validate_type("order.paid:v2", 20).is_ok());
        assert!(validate_pattern("*", 10).is_ok());
        assert!(validate_pattern("order.*", 10).is_ok());
        assert_eq!(
            validate_pattern("or*er", 10),
            Err(EventTypeError::BadWildcard)
        );
        assert_eq!(
            validate_pattern("*.paid", 10),
            Err(EventTypeError::BadWildcard)
        );
        assert_eq!(
            validate_pattern("a.*.*", 10),
            Err(EventTypeError::BadWildcard)
        );
        assert_eq!(validate_pattern(".*", 10), Err(EventTypeError::Empty));
        assert_eq!(
            validate_pattern("abcdefghij.*", 10),
            Err(EventTypeError::TooLong { max: 10 })
        );
    }
}
