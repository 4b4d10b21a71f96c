//! Rules on error kinds: what an attempt that ended without a status (a
//! transport or broker error) leads to, beside the status rules.
//!
//! A policy's `error_rules` maps an error kind to `"retry"`, `"give_up"` or
//! `{"give_up_after": n}`; a kind it leaves out follows [`default_rule`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FailureKind, Verdict};

/// How many attempts a kind that rarely heals by itself (`auth_refused`,
/// `not_found`) gets by default before the delivery gives up.
pub(crate) const DEFAULT_GIVE_UP_AFTER: u32 = 3;

/// What one error kind leads to: `retry`, `give_up`, or `{"give_up_after": n}`
/// (retry until n attempts of the series have failed so, then give up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorRule {
    /// Retry, within the policy's limits.
    Retry,
    /// Give up at once: the delivery goes dead.
    GiveUp,
    // Retry until this many attempts of the series have failed so, then give
    // up. (A doc comment here would wrap the count's schema in an `allOf`.)
    GiveUpAfter(#[schema(inline)] Attempts),
}

/// A number of attempts, from 1 to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Attempts(pub u32);

impl utoipa::PartialSchema for Attempts {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Integer)
            .minimum(Some(1))
            .maximum(Some(100))
            .into()
    }
}

impl utoipa::ToSchema for Attempts {}

/// A policy's rules, by error kind; a kind not named follows [`default_rule`].
pub type ErrorRules = BTreeMap<FailureKind, ErrorRule>;

/// The documented default for `kind`: `too_large` gives up at once,
/// `auth_refused`, `not_found` and `transform_failed` after
/// [`DEFAULT_GIVE_UP_AFTER`] attempts, and every other kind retries
/// (`throttled` honouring the service's hint).
pub(crate) fn default_rule(kind: FailureKind) -> ErrorRule {
    match kind {
        FailureKind::TooLarge => ErrorRule::GiveUp,
        FailureKind::AuthRefused | FailureKind::NotFound | FailureKind::TransformFailed => {
            ErrorRule::GiveUpAfter(Attempts(DEFAULT_GIVE_UP_AFTER))
        }
        _ => ErrorRule::Retry,
    }
}

/// The verdict on attempt number `attempt` failing with `kind` under `rules`.
pub(crate) fn verdict(rules: &ErrorRules, kind: FailureKind, attempt: u32) -> Verdict {
    let (rule, source) = match rules.get(&kind) {
        Some(rule) => (*rule, "error_rules"),
        None => (default_rule(kind), "the default"),
    };
    let name = kind.as_str();
    match rule {
        ErrorRule::Retry => Verdict::Retry,
        ErrorRule::GiveUp => Verdict::GiveUp {
            reason: format!("{name}: {source} gives up at once"),
        },
        ErrorRule::GiveUpAfter(Attempts(n)) if attempt >= n => Verdict::GiveUp {
            reason: format!("{name} on {attempt} attempts: {source} gives up after {n}"),
        },
        ErrorRule::GiveUpAfter(_) => Verdict::Retry,
    }
}

/// Reads `error_rules` from its JSON object, naming what is wrong.
pub(crate) fn from_json(value: &Value) -> Result<ErrorRules, String> {
    let Value::Object(fields) = value else {
        return Err("must be an object mapping an error kind to a rule".into());
    };
    let mut rules = ErrorRules::new();
    for (name, rule) in fields {
        let kind = FailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<_> = FailureKind::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "unknown error kind {name:?}; known kinds: {}",
                    known.join(", ")
                )
            })?;
        let rule: ErrorRule = serde_json::from_value(rule.clone()).map_err(|_| {
            format!("{name}: a rule is \"retry\", \"give_up\" or {{\"give_up_after\": n}}")
        })?;
        if let ErrorRule::GiveUpAfter(Attempts(n)) = rule
            && !(1..=100).contains(&n)
        {
            return Err(format!("{name}: give_up_after must be from 1 to 100"));
        }
        rules.insert(kind, rule);
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_read_as_documented() {
        let none = ErrorRules::new();
        let name = |kind, attempt| verdict(&none, kind, attempt).as_str();
        assert_eq!(name(FailureKind::TooLarge, 1), "give_up");
        assert_eq!(name(FailureKind::AuthRefused, 2), "retry");
        assert_eq!(name(FailureKind::AuthRefused, 3), "give_up");
        assert_eq!(name(FailureKind::NotFound, 3), "give_up");
        assert_eq!(name(FailureKind::TransformFailed, 2), "retry");
        assert_eq!(name(FailureKind::TransformFailed, 3), "give_up");
        for kind in [
            FailureKind::Timeout,
            FailureKind::Connect,
            FailureKind::Throttled,
            FailureKind::Rejected,
        ] {
            assert_eq!(name(kind, 50), "retry", "{kind:?}");
        }
    }

    #[test]
    fn a_rule_overrides_the_default_and_says_so() {
        let rules = from_json(&serde_json::json!({
            "too_large": "retry", "timeout": {"give_up_after": 2}, "auth_refused": "give_up"
        }))
        .unwrap();
        assert_eq!(verdict(&rules, FailureKind::TooLarge, 9), Verdict::Retry);
        assert_eq!(verdict(&rules, FailureKind::Timeout, 1), Verdict::Retry);
        let Verdict::GiveUp { reason } = verdict(&rules, FailureKind::Timeout, 2) else {
            panic!("expected a give-up");
        };
        assert_eq!(
            reason,
            "timeout on 2 attempts: error_rules gives up after 2"
        );
        let Verdict::GiveUp { reason } = verdict(&rules, FailureKind::AuthRefused, 1) else {
            panic!("expected a give-up");
        };
        assert_eq!(reason, "auth_refused: error_rules gives up at once");
    }

    #[test]
    fn bad_rules_are_named() {
        let err = |v| from_json(&v).unwrap_err();
        assert!(err(serde_json::json!({"nope": "retry"})).contains("unknown error kind \"nope\""));
        assert!(err(serde_json::json!({"timeout": "later"})).contains("timeout: a rule is"));
        assert!(err(serde_json::json!({"timeout": {"give_up_after": 0}})).contains("1 to 100"));
        assert!(err(serde_json::json!(["timeout"])).contains("must be an object"));
    }
}
