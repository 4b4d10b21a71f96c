//! How the resolved policy reads in the API's schema: one flat object, as it is
//! serialised. Its Rust shape nests the strategy and the jitter as tagged enums
//! flattened into it; described that way the schema would be an `allOf` of
//! `oneOf`s, which client generators cannot turn into a type.

use serde::Serialize;
use utoipa::ToSchema;

use super::{EffectivePolicy, ErrorRule, FailureKind, JitterKind, StatusPattern, StrategyKind};

/// The resolved policy: every value concrete, durations in integer ms. Which of
/// the strategy's and the jitter's fields are present follows `strategy` and
/// `jitter`.
#[derive(Serialize, ToSchema)]
#[schema(as = EffectivePolicy)]
#[allow(dead_code, reason = "described only; EffectivePolicy is what is built")]
struct EffectivePolicyShape {
    /// The preset the values started from.
    preset: String,
    strategy: StrategyKind,
    /// First delay of `exponential`, `linear` and `fixed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_ms: Option<u64>,
    /// Growth per attempt of `exponential`.
    #[serde(skip_serializing_if = "Option::is_none")]
    factor: Option<f64>,
    /// Increment of `linear`.
    #[serde(skip_serializing_if = "Option::is_none")]
    step_ms: Option<u64>,
    /// Delays of `schedule`; the last repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule_ms: Option<Vec<u64>>,
    /// Cap on every delay.
    max_delay_ms: u64,
    /// Attempts per series, the first included.
    max_attempts: u32,
    /// How long after the first attempt retries may still be scheduled.
    retry_window_ms: u64,
    jitter: JitterKind,
    /// r of `proportional` jitter.
    #[serde(skip_serializing_if = "Option::is_none")]
    jitter_ratio: Option<f64>,
    /// Retry every non-2xx status, overriding the table.
    retry_all_non_2xx: bool,
    /// Treat `Retry-After` on 429 and 503 as a floor.
    honor_retry_after: bool,
    /// Statuses to retry, overriding the table.
    retry_on: Vec<StatusPattern>,
    /// Statuses to give up on; beats every other rule but 2xx.
    give_up_on: Vec<StatusPattern>,
    /// What a failure without a status leads to, by error kind; only the kinds
    /// set (the others follow the documented defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    error_rules: Option<std::collections::BTreeMap<FailureKind, ErrorRule>>,
}

impl utoipa::PartialSchema for EffectivePolicy {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        EffectivePolicyShape::schema()
    }
}

impl ToSchema for EffectivePolicy {
    fn name() -> std::borrow::Cow<'static, str> {
        EffectivePolicyShape::name()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        EffectivePolicyShape::schemas(schemas);
    }
}
