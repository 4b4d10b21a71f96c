//! `POST /v1/policy/simulate`: the herd simulator of `hookgate policy simulate`, for
//! any authenticated caller, bounded so that one request costs at most about a
//! second and a half of one core.
//!
//! The bounds: at most [`MAX_EVENTS`] events and a [`MAX_OUTAGE_MS`] outage, refused
//! up front with 422 naming the field; then the run itself, on the blocking pool, within
//! a [`SimulationBudget`] of [`MAX_SIMULATED_ATTEMPTS`] attempts and [`TIME_BUDGET`].
//! The parameters alone cannot bound the cost (it is events × attempts per delivery,
//! and the policy and the outage decide the attempts), and refusing from the worst
//! case would refuse ordinary runs; so the simulator counts its attempts. A run over
//! budget is 422 `simulation_too_large`, never a partial report: one cut short would
//! miss the later retry waves and understate the herd. At most
//! [`SIMULATIONS_AT_ONCE`] runs go at once, so that many callers together cannot take
//! the cores the deliveries need; one more is 503 `busy`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use crate::context::AppContext;
use crate::policy::{
    DEFAULT_ATTEMPT_MS, EffectivePolicy, PRESET_NAMES, PolicyError, PolicySpec, PresetName,
    SimulationBudget, SimulationConfig, SimulationReport, deserialize_opt_ms, simulate_within,
};
use crate::simulation_slots::{
    NoSlot, SIMULATIONS_AT_ONCE, SIMULATIONS_PER_CALLER, SimulationSlots,
};

/// Events when none are given, as `hookgate policy simulate --events`.
pub(super) const DEFAULT_EVENTS: u64 = 1_000;
/// The most events one request may simulate, as the CLI allows.
pub(super) const MAX_EVENTS: u64 = 100_000;
/// The outage when none is given, as `hookgate policy simulate --outage 10m`.
pub(super) const DEFAULT_OUTAGE_MS: u64 = 10 * 60 * 1_000;
/// The longest outage one request may simulate: 7 days.
pub(super) const MAX_OUTAGE_MS: u64 = 7 * 24 * 60 * 60 * 1_000;
/// The seed when none is given, as the CLI's.
pub(super) const DEFAULT_SEED: u64 = 1;
/// Attempts one run may make: well under a second of a release build, and 16 MB of
/// retry times at most.
pub(super) const MAX_SIMULATED_ATTEMPTS: usize = 1_000_000;
/// How long one run may take however slow its attempts are (a debug build, a busy
/// host); counted from when it starts on the blocking pool.
pub(super) const TIME_BUDGET: Duration = Duration::from_millis(1_500);

/// The request: a policy (an endpoint's `"policy"` object) or a preset name, and the
/// simulation's parameters under the CLI's names; every field is optional.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"preset": "svix", "events": 1000, "outage": "10m", "seed": 1}))]
pub(super) struct SimulateRequest {
    /// A preset to simulate as it is; not with `policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<PresetName>)]
    pub(super) preset: Option<String>,
    /// A policy object, laid over the config's `[policy.default]` as an endpoint's is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<PolicySpec>)]
    pub(super) policy: Option<Value>,
    /// Deliveries that fail together at t=0: 1 to 100 000, default 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 100_000, example = 1000)]
    pub(super) events: Option<u64>,
    /// How long the receiver answers 503: integer ms or a duration string such as
    /// `"10m"`; at most 7 days, default 10 minutes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms"
    )]
    #[schema(value_type = Option<OutageMs>)]
    pub(super) outage: Option<u64>,
    /// Seed of the jitter draws, default 1; the same seed gives the same report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(maximum = 9_223_372_036_854_775_807_u64)]
    pub(super) seed: Option<u64>,
}

/// The API schema of `outage`: integer ms up to 7 days, or a duration string. Only
/// described, never built.
pub(super) enum OutageMs {}

impl utoipa::PartialSchema for OutageMs {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .maximum(Some(MAX_OUTAGE_MS)),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .description(Some("a duration such as \"10m\" or \"2h\"")),
            )
            .description(Some(
                "integer milliseconds or a duration string; at most 7 days",
            ))
            .into()
    }
}

impl utoipa::ToSchema for OutageMs {}

impl SimulateRequest {
    /// The run this request asks for, with the defaults filled in and the bounds checked.
    ///
    /// # Errors
    /// 422 `validation_failed` naming `preset`, `policy.<field>`, `events` or `outage`.
    pub(super) fn into_config(self, default: &PolicySpec) -> Result<SimulationConfig, ApiError> {
        let policy = policy_to_simulate(self.preset.as_deref(), self.policy.as_ref(), default)?;
        let events = self.events.unwrap_or(DEFAULT_EVENTS);
        if !(1..=MAX_EVENTS).contains(&events) {
            return Err(ApiError::validation(
                "events",
                format!("events must be from 1 to {MAX_EVENTS}"),
            ));
        }
        let outage_ms = self.outage.unwrap_or(DEFAULT_OUTAGE_MS);
        if outage_ms > MAX_OUTAGE_MS {
            return Err(ApiError::validation(
                "outage",
                format!("outage must be at most 7 days ({MAX_OUTAGE_MS} ms)"),
            ));
        }
        // The document declares an int64, as most clients read a JSON integer.
        let seed = self.seed.unwrap_or(DEFAULT_SEED);
        if i64::try_from(seed).is_err() {
            return Err(ApiError::validation(
                "seed",
                format!("seed must be from 0 to {}", i64::MAX),
            ));
        }
        Ok(SimulationConfig {
            policy,
            events: usize::try_from(events).unwrap_or(usize::MAX),
            outage_ms,
            seed,
            attempt_ms: DEFAULT_ATTEMPT_MS,
        })
    }
}

/// The preset as it is, or the policy object (none: the config's default) resolved as
/// an endpoint's, so the run follows what an endpoint with it would do here.
fn policy_to_simulate(
    preset: Option<&str>,
    policy: Option<&Value>,
    default: &PolicySpec,
) -> Result<EffectivePolicy, ApiError> {
    let invalid = |e: PolicyError| ApiError::validation(e.field, e.message);
    match (preset, policy) {
        (Some(_), Some(_)) => Err(ApiError::validation(
            "preset",
            "give preset or policy, not both (a policy may name its own \"preset\")",
        )),
        (Some(name), None) => EffectivePolicy::preset(name).ok_or_else(|| {
            let known = PRESET_NAMES.join(", ");
            ApiError::validation(
                "preset",
                format!("unknown preset {name:?}; expected one of {known}"),
            )
        }),
        (None, given) => {
            let own = match given {
                Some(value) => PolicySpec::from_json(value).map_err(invalid)?,
                None => PolicySpec::default(),
            };
            own.layered_over(default).resolve().map_err(invalid)
        }
    }
}

/// Runs `config` on the blocking pool within the budget, in one of `slots`.
///
/// # Errors
/// 503 `busy` when every slot is taken; 422 `simulation_too_large` over budget; 500
/// if the run panicked.
pub(super) async fn run_bounded(
    slots: &SimulationSlots,
    caller: &Principal,
    config: SimulationConfig,
) -> Result<SimulationReport, ApiError> {
    let caller = match caller {
        Principal::Admin => "admin".to_owned(),
        Principal::Tenant(t) => format!("tenant:{t}"),
        Principal::Portal(s) => format!("tenant:{}", s.tenant_id),
    };
    let slot = slots.try_take(&caller).map_err(|why| match why {
        NoSlot::CallerBusy => ApiError::busy(format!(
            "you are running {SIMULATIONS_PER_CALLER} policy simulation(s) already, the most \
             one caller may; retry when it ends"
        )),
        NoSlot::AllBusy => ApiError::busy(format!(
            "{SIMULATIONS_AT_ONCE} policy simulations are already running; retry shortly"
        )),
    })?;
    let run = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let budget = SimulationBudget {
            max_attempts: MAX_SIMULATED_ATTEMPTS,
            deadline: Some(Instant::now() + TIME_BUDGET),
        };
        simulate_within(&config, &budget)
    });
    let report = run.await.map_err(|e| {
        tracing::error!(error = %e, "the policy simulation failed");
        ApiError::internal()
    })??;
    Ok(report)
}

/// Simulates a retry herd: `events` deliveries fail together while the receiver is
/// down for `outage`, then recover; answers the retry waves, the per-second arrivals
/// and the recovery peak.
#[utoipa::path(post, path = "/v1/policy/simulate", tag = "policy", operation_id = "simulate_policy",
    request_body = SimulateRequest,
    responses((status = 200, description = "The simulation's report", body = SimulationReport)))]
pub(super) async fn simulate(
    State(ctx): State<Arc<AppContext>>,
    caller: Principal,
    body: Body,
) -> Result<Json<SimulationReport>, ApiError> {
    let bytes = read_limited(body, ctx.config.limits.json_body_bytes).await?;
    let request: SimulateRequest = parse_json(&bytes)?;
    let config = request.into_config(&ctx.config.policy.default)?;
    Ok(Json(run_bounded(&ctx.simulations, &caller, config).await?))
}

#[cfg(test)]
mod tests;
