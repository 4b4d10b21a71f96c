//! One attempt of one delivery: sign, send, decide, record (`worker/record.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::breaker::RawOutcome;
use super::client::{DeliveryClient, SendFailure};
use super::endpoint_policy::EndpointPolicy;
use crate::clock::Clock;
use crate::destination::ConnectRefusal;
use crate::plugin_runtime::{PluginHost, PluginInput};
use crate::policy::{
    AttemptFacts, BUILTIN_DECIDER, DeadReason, Decision, FailureKind, NextStep, Outcome, Verdict,
};
use crate::store::{
    DeliveryRecord, EndpointRecord, Interrupted, Interruption, SentRequest, Store, StoreError,
    TransformNote,
};
use crate::telemetry::TraceSpan;

/// What every worker shares.
pub(crate) struct EngineContext {
    pub(crate) store: Store,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) client: DeliveryClient,
    /// The client for trusted (alert) endpoints.
    pub(crate) trusted_client: DeliveryClient,
    /// Runs the decision of endpoints with a plugin bound.
    pub(crate) decider: Arc<PluginHost>,
    /// The config's `[policy.default]`, under each endpoint's own policy.
    pub(crate) default_policy: crate::policy::PolicySpec,
    /// Metrics, stats and alert rules.
    pub(crate) telemetry: Arc<crate::telemetry::Telemetry>,
    /// Runs before each request is sent (tests inject failures here).
    pub(crate) before_attempt: Option<crate::delivery::BeforeAttempt>,
    /// Where turns mark the endpoints their own limits hold.
    pub(crate) holds: Arc<crate::delivery::EndpointHolds>,
    /// Counts each recorded attempt in its endpoint's stats.
    pub(crate) stats: Arc<crate::endpoint_stats::StatsRecorder>,
    /// This gateway's traces.
    pub(crate) traces: crate::telemetry::Traces,
    /// Where attempts, breakers and disablings are told to operator endpoints.
    pub(crate) operator_events: crate::operator_events::OperatorEvents,
}

/// What the scheduler learns from a finished attempt.
#[derive(Debug, Clone)]
pub(crate) struct AttemptReport {
    /// The attempt changed the endpoint (a 410 disabled it): reload it.
    pub(crate) endpoint_changed: bool,
    /// The raw outcome, for the breaker.
    pub(crate) outcome: RawOutcome,
    /// The shared breaker after counting the outcome, where gateways share it.
    pub(crate) shared: Option<super::shared_breaker::SharedOutcome>,
}

impl Default for AttemptReport {
    fn default() -> Self {
        Self {
            endpoint_changed: false,
            outcome: RawOutcome::Neutral,
            shared: None,
        }
    }
}

/// What one attempt produced, and the decision on it.
struct Finished<'a> {
    attempt: u32,
    started: u64,
    ended: u64,
    /// Measured on the monotonic clock: the wall clock may jump meanwhile.
    duration_ms: u64,
    result: &'a Result<Answer, SendFailure>,
    outcome: Option<&'a Outcome>,
    decision: Decision,
    /// Names the policy that decided (`endpoint:svix`, ...).
    policy_label: &'a str,
    /// How long a bound plugin's decision took.
    plugin_decision_us: Option<u64>,
    /// What the attempt log keeps of the request; `None` when nothing was sent.
    sent: Option<SentRequest>,
    /// What the endpoint's transform did, when one ran.
    transform: Option<TransformNote>,
}

/// Makes one attempt of the delivery named by a due schedule entry.
pub(crate) struct DeliveryWorker {
    pub(crate) ctx: Arc<EngineContext>,
    pub(crate) endpoint: Arc<EndpointRecord>,
    /// The endpoint's policy and plugin binding, resolved when it was loaded.
    pub(crate) policy: Arc<EndpointPolicy>,
    pub(crate) entry: crate::store::Lease,
    /// Where gateways share the breaker: how to count the outcome on it.
    pub(crate) shared: Option<super::shared_breaker::SharedBreaker>,
}

/// Deterministic per-attempt randomness: sha256(delivery_id, series, attempt)[..8].
fn attempt_seed(delivery_id: &str, series: u32, attempt: u32) -> u64 {
    let mut h = Sha256::new();
    h.update(delivery_id.as_bytes());
    h.update(series.to_be_bytes());
    h.update(attempt.to_be_bytes());
    let digest = h.finalize();
    u64::from_be_bytes(digest[..8].try_into().unwrap_or_default())
}

impl DeliveryWorker {
    /// Runs the attempt and reports what the scheduler needs to know. A storage
    /// error leaves the delivery pending and scheduled, and the store in its
    /// failing state: the attempt is made again once storage works, not before
    /// (the scheduler starts nothing meanwhile); nothing is lost.
    pub(crate) async fn run(self) -> AttemptReport {
        match self.attempt().await {
            Ok(report) => report,
            Err(e) => {
                tracing::warn!(delivery_id = %self.entry.delivery_id(), error = %e, "attempt not recorded; will retry");
                AttemptReport::default()
            }
        }
    }

    async fn attempt(&self) -> Result<AttemptReport, StoreError> {
        let (ctx, ep) = (&self.ctx, &self.endpoint);
        // A stale entry (the scan raced a finishing attempt) must not start an early retry.
        let Some(d) = ctx.store.due_delivery(&ep.tenant_id, &self.entry).await? else {
            return Ok(AttemptReport::default());
        };
        let Some(body) = ctx.store.event_payload(&ep.tenant_id, &d.event_id).await? else {
            let why = format!("event {} is missing from the store", d.event_id);
            return self.end(DeadReason::EventMissing, &why).await;
        };
        let (payload, seen) = (body.payload, body.seen);
        if payload == crate::store::EXPUNGED {
            let why = format!("event {}'s payload was expunged", d.event_id);
            return self.end(DeadReason::PayloadExpunged, &why).await;
        }
        if let Some(hook) = &ctx.before_attempt {
            hook(&d);
        }
        let started = ctx.clock.now_ms();
        // The receiver's trace continues the event's, under this attempt's span.
        let (span, trace) = ctx.traces.attempt(body.trace.as_ref());
        let (shaped, transform) = match self.shape(&d, &payload, seen).await? {
            Shaping::Plain => (None, None),
            Shaping::Send(request, target, note) => (Some((request, target)), Some(note)),
            // Nothing is sent: the attempt is recorded as what the transform did.
            Shaping::Skip(reason, note) => {
                let result = Ok(Answer::Skipped(reason));
                return self
                    .finish(d, started, 0, result, None, None, Some(note), span)
                    .await;
            }
            Shaping::Failed(message, note) => {
                let kind = FailureKind::TransformFailed;
                let result = Err(SendFailure::Transport { kind, message });
                return self
                    .finish(d, started, 0, result, None, None, Some(note), span)
                    .await;
            }
        };
        let (outgoing, sent) = match self.outgoing(&d, payload, shaped, started, trace) {
            Ok(r) => r,
            Err(e) => {
                let why = format!("no valid request for {}: {e}", ep.url);
                return self.end(DeadReason::InvalidRequest, &why).await;
            }
        };
        // A node paused past its lease (its monotonic clock says so) sends
        // nothing: another node may hold the endpoint's place by now.
        let timeout = Duration::from_millis(ep.timeout_ms);
        let Some(timeout) = self.entry.time_left(Instant::now(), timeout) else {
            tracing::warn!(delivery_id = %d.id, "lease ended before the request was sent: not sent");
            return Ok(AttemptReport::default());
        };
        let sent_at = Instant::now();
        let (result, retry_hint) = self.send(outgoing, timeout).await;
        let duration_ms = u64::try_from(sent_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.finish(
            d,
            started,
            duration_ms,
            result,
            retry_hint,
            Some(sent),
            transform,
            span,
        )
        .await
    }

    /// Decides on an attempt's `result` and records it.
    #[allow(
        clippy::too_many_arguments,
        reason = "one attempt's parts, each distinct"
    )]
    async fn finish(
        &self,
        d: DeliveryRecord,
        started: u64,
        duration_ms: u64,
        result: Result<Answer, SendFailure>,
        retry_hint: Option<String>,
        sent: Option<SentRequest>,
        transform: Option<TransformNote>,
        span: TraceSpan,
    ) -> Result<AttemptReport, StoreError> {
        let (ctx, ep) = (&self.ctx, &self.endpoint);
        let ended = ctx.clock.now_ms();
        let attempt = d.attempts + 1;
        let policy = &self.policy.effective;
        let (outcome, response) = match &result {
            Ok(Answer::Http(r)) => (Some(Outcome::Status(r.status)), Some(r)),
            Ok(Answer::Published(_)) => (Some(Outcome::Published), None),
            Err(SendFailure::Transport { kind, .. }) => (Some(Outcome::Failure(*kind)), None),
            Err(SendFailure::Blocked(_)) | Ok(Answer::Skipped(_)) => (None, None),
        };
        let mut plugin_decision_us = None;
        let decision = match &outcome {
            // A skip is the transform's decision: the delivery ends, skipped.
            None if let Ok(Answer::Skipped(reason)) = &result => Decision {
                verdict: Verdict::Skipped {
                    reason: reason.clone(),
                },
                next: NextStep::Skipped,
                decided_by: transform.as_ref().map_or_else(
                    || "transform".to_owned(),
                    |t| format!("transform:{}", t.plugin),
                ),
            },
            // The host alone decides a blocked address: dead, not counted by the breaker.
            None => Decision {
                verdict: Verdict::GiveUp {
                    reason: "blocked address".into(),
                },
                next: NextStep::Dead(DeadReason::BlockedAddress),
                decided_by: BUILTIN_DECIDER.into(),
            },
            Some(outcome) => {
                let header = |name: &str| {
                    response
                        .and_then(|r| r.headers.get(name))
                        .and_then(|v| v.to_str().ok())
                };
                let facts = AttemptFacts {
                    outcome,
                    attempt,
                    first_attempt_at_ms: d.first_attempt_at_ms.unwrap_or(started),
                    now_ms: ended,
                    retry_after: header("retry-after").or(retry_hint.as_deref()),
                    date: header("date"),
                    prev_delay_ms: d.last_delay_ms,
                    seed: attempt_seed(&d.id, d.series, attempt),
                };
                let error_message = match &result {
                    Err(SendFailure::Transport { message, .. }) => message.as_str(),
                    _ => "",
                };
                let input = PluginInput {
                    headers: response.map(|r| &r.headers),
                    body: response.map_or(&[][..], |r| &r.body[..]),
                    event_type: &d.event_type,
                    destination: ep.destination_kind(),
                    error_message,
                };
                let plugin = self.policy.plugin().map(|b| ctx.decider.bind(b, &input));
                let timer = plugin.is_some().then(std::time::Instant::now);
                let plugin_span = match plugin {
                    Some(_) => ctx.traces.child(&span, "plugin.decide"),
                    None => TraceSpan::default(),
                };
                let decision = crate::policy::decide(policy, &facts, plugin.as_ref()).await;
                plugin_decision_us =
                    timer.map(|t| u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX));
                plugin_span.set_str("hookgate.decided_by", &decision.decided_by);
                if let Some(us) = plugin_decision_us {
                    plugin_span.set(
                        "hookgate.decision_us",
                        i64::try_from(us).unwrap_or(i64::MAX),
                    );
                }
                plugin_span.end();
                decision
            }
        };
        let finished = Finished {
            attempt,
            started,
            ended,
            duration_ms,
            result: &result,
            outcome: outcome.as_ref(),
            decision,
            policy_label: &self.policy.label,
            plugin_decision_us,
            sent,
            transform,
        };
        describe_attempt(&span, &d, ep, &finished);
        let commit = ctx.traces.child(&span, "store.commit");
        commit.set("hookgate.write", "attempt");
        let recorded = record::record(self, d, finished).await;
        if let Err(e) = &recorded {
            commit.fail(e);
        }
        commit.end();
        span.end();
        recorded
    }

    /// Ends the delivery without an attempt, loudly: nothing was sent, and
    /// sending an empty or different request instead would be a silent lie.
    async fn end(&self, reason: DeadReason, why: &str) -> Result<AttemptReport, StoreError> {
        let (ctx, ep) = (&self.ctx, &self.endpoint);
        tracing::error!(
            delivery_id = %self.entry.delivery_id(),
            endpoint_id = %ep.id,
            reason = reason.as_str(),
            "delivery ended without an attempt: {why}"
        );
        ctx.telemetry.internal_error(reason.as_str());
        let now = ctx.clock.now_ms();
        let done = ctx
            .store
            .interrupt(&ep.tenant_id, &self.entry, now, Interruption::End(reason))
            .await?;
        if let Interrupted::Ended(reason) = done {
            ctx.telemetry.ended_without_attempt(&ep.tenant_id, reason);
        }
        Ok(AttemptReport::default())
    }

    /// Sends `outgoing` within `timeout`: over HTTP, or to the endpoint's
    /// broker. Also returns a broker's back-off hint, in seconds.
    async fn send(
        &self,
        outgoing: Outgoing,
        timeout: Duration,
    ) -> (Result<Answer, SendFailure>, Option<String>) {
        let (ctx, ep) = (&self.ctx, &self.endpoint);
        let request = match outgoing {
            Outgoing::Http(request) => request,
            Outgoing::Broker(message) => {
                let Some(destination) = &ep.destination else {
                    let why = "a broker message for an http endpoint".to_owned();
                    return (Err(SendFailure::Blocked(why)), None);
                };
                let deadline = tokio::time::Instant::now() + timeout;
                let published = ctx
                    .client
                    .publishers()
                    .publish(ep.id.as_str(), destination, &message, deadline)
                    .await;
                return match published {
                    Ok(receipt) => (Ok(Answer::Published(receipt)), None),
                    Err(ConnectRefusal::Blocked(why)) => (Err(SendFailure::Blocked(why)), None),
                    Err(ConnectRefusal::Failed(f)) => {
                        let hint = f.retry_after_s.map(|s| s.to_string());
                        let failure = SendFailure::Transport {
                            kind: f.kind,
                            message: f.message,
                        };
                        (Err(failure), hint)
                    }
                };
            }
        };
        let client = if ep.trusted {
            &ctx.trusted_client
        } else {
            &ctx.client
        };
        (client.send(request, timeout).await.map(Answer::Http), None)
    }
}

/// The attempt's span attributes: what was sent where, what came back, and
/// what was decided.
fn describe_attempt(span: &TraceSpan, d: &DeliveryRecord, ep: &EndpointRecord, f: &Finished<'_>) {
    if !span.is_recording() {
        return;
    }
    span.set_str("hookgate.tenant", &ep.tenant_id);
    span.set_str("hookgate.event_id", &d.event_id);
    span.set_str("hookgate.event_type", &d.event_type);
    span.set_str("hookgate.delivery_id", &d.id);
    span.set_str("hookgate.endpoint_id", &ep.id);
    // The host only: a URL's path or query may hold the receiver's token.
    if let Some(host) = url::Url::parse(&ep.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
    {
        span.set("server.address", host);
    }
    span.set("hookgate.attempt", i64::from(f.attempt));
    span.set(
        "hookgate.duration_ms",
        i64::try_from(f.duration_ms).unwrap_or(i64::MAX),
    );
    span.set("hookgate.destination", ep.destination_kind().as_str());
    match f.result {
        Ok(Answer::Http(r)) => span.set("http.response.status_code", i64::from(r.status)),
        Ok(Answer::Published(receipt)) => span.set_str("hookgate.receipt", receipt),
        Ok(Answer::Skipped(reason)) => span.set_str("hookgate.skipped", reason),
        Err(SendFailure::Transport { kind, message }) => {
            span.set("error.type", kind.as_str());
            span.fail(message);
        }
        Err(SendFailure::Blocked(what)) => {
            span.set("error.type", "blocked_address");
            span.fail(what);
        }
    }
    span.set("hookgate.verdict", f.decision.verdict.as_str());
    span.set_str("hookgate.decided_by", &f.decision.decided_by);
}

mod outgoing;
mod record;
mod shaping;
pub(crate) use outgoing::{Answer, Outgoing};
#[cfg(test)]
use record::clock_skew_ms;
use shaping::Shaping;

#[cfg(test)]
mod tests;
