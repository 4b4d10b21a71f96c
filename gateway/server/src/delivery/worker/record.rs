//! The record of an attempt: the delivery's new state and its attempt log
//! entry, written under the lease (and counted on a shared breaker in the same
//! transaction), then logged and counted (in the metrics and the endpoint's
//! stats). An outcome whose lease had passed on changes nothing, but its
//! attempt is logged, marked late, and counted in neither.

use super::{Answer, AttemptReport, DeliveryWorker, Finished};
use crate::delivery::breaker::RawOutcome;
use crate::delivery::client::SendFailure;
use crate::endpoint_stats::CountedAttempt;
use crate::ids::AttemptId;
use crate::operator_events::OperatorEvent;
use crate::policy::{ErrorKind, NextStep, Outcome, Verdict};
use crate::store::{
    AttemptOf, AttemptRecord, AttemptWrite, DeliveryRecord, DeliveryState, StoreError, WriteResult,
};
use crate::telemetry::AttemptObservation;

/// The first this-many bytes of a response are kept in the attempt log.
const SNIPPET_BYTES: usize = 1024;

/// Writes `worker`'s finished attempt: the delivery's new state and its log entry
/// under the lease, then the log line and the counts.
pub(super) async fn record(
    worker: &DeliveryWorker,
    mut d: DeliveryRecord,
    f: Finished<'_>,
) -> Result<AttemptReport, StoreError> {
    let Finished {
        attempt,
        started,
        ended,
        duration_ms,
        result,
        outcome,
        decision,
        policy_label,
        plugin_decision_us,
        sent,
        transform,
    } = f;
    let (expected_series, expected_attempts) = (d.series, d.attempts);
    let (status, error_kind, snippet) = match result {
        Ok(Answer::Published(receipt)) => (None, None, receipt.clone()),
        Ok(Answer::Skipped(reason)) => (None, None, reason.clone()),
        Ok(Answer::Http(r)) => {
            let snip =
                String::from_utf8_lossy(&r.body[..r.body.len().min(SNIPPET_BYTES)]).into_owned();
            (
                Some(r.status),
                outcome.and_then(Outcome::error_kind).map(ErrorKind::from),
                snip,
            )
        }
        Err(SendFailure::Transport { kind, message }) => {
            (None, Some(ErrorKind::from(*kind)), message.clone())
        }
        Err(SendFailure::Blocked(why)) => (None, Some(ErrorKind::BlockedAddress), why.clone()),
    };
    let (delay_ms, next_due, dead_reason) = match &decision.next {
        NextStep::Done => (None, None, None),
        NextStep::RetryAt { delay_ms } => {
            (Some(*delay_ms), Some(ended.saturating_add(*delay_ms)), None)
        }
        NextStep::Dead(r) => (None, None, Some(*r)),
        NextStep::Skipped => (None, None, None),
    };
    d.attempts = attempt;
    d.first_attempt_at_ms.get_or_insert(started);
    d.last_status = status;
    d.last_error = error_kind.map(Into::into);
    d.last_delay_ms = delay_ms.or(d.last_delay_ms);
    d.next_attempt_at_ms = next_due;
    d.dead_reason = dead_reason.map(Into::into);
    d.updated_at_ms = ended;
    d.state = match decision.next {
        NextStep::Done => DeliveryState::Succeeded,
        NextStep::RetryAt { .. } => DeliveryState::Pending,
        NextStep::Dead(_) => DeliveryState::Dead,
        NextStep::Skipped => DeliveryState::Skipped,
    };
    let log = AttemptRecord {
        id: Some(AttemptId::generate(started)),
        of: Some(AttemptOf {
            delivery_id: d.id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            event_id: d.event_id.clone(),
            event_type: d.event_type.clone(),
            test: d.test,
        }),
        sent,
        series: d.series,
        attempt,
        started_at_ms: started,
        duration_ms,
        status,
        error_kind: error_kind.map(Into::into),
        response_snippet: snippet,
        verdict: decision.verdict.kind().into(),
        delay_ms,
        next_attempt_at_ms: next_due,
        dead_reason: dead_reason.map(Into::into),
        decided_by: decision.decided_by.clone(),
        policy: policy_label.to_owned(),
        node_id: Some(worker.ctx.store.node_id().to_owned()),
        late: false,
        transform,
    };
    tracing::info!(
        node_id = worker.ctx.store.node_id(),
        event_id = %d.event_id,
        delivery_id = %d.id,
        endpoint_id = %d.endpoint_id,
        attempt,
        // 0: no status (a transport failure; see `error`).
        status = status.unwrap_or(0),
        error = error_kind.map_or("", ErrorKind::as_str),
        verdict = %decision.verdict.as_str(),
        delay_ms = delay_ms.unwrap_or(0),
        latency_ms = log.duration_ms,
        decided_by = %log.decided_by,
        "attempt"
    );
    let disable = matches!(decision.verdict, Verdict::DisableEndpoint).then(|| "gone".to_owned());
    let mut report = AttemptReport {
        endpoint_changed: disable.is_some(),
        outcome: match result {
            // Nothing reached the receiver: not its doing.
            _ if !reached_receiver(result) => RawOutcome::Neutral,
            _ if outcome.is_some_and(Outcome::delivered) => RawOutcome::Success,
            _ => RawOutcome::Failure,
        },
        shared: None,
    };
    let write = AttemptWrite {
        delivery: &d,
        expected_series,
        expected_attempts,
        attempt: &log,
        lease: &worker.entry,
        next_due_ms: next_due,
        disable_endpoint: disable,
    };
    let store = &worker.ctx.store;
    let recorded = match &worker.shared {
        // Counted on the shared breaker in the outcome's own transaction, only
        // if the fenced write succeeds, and before this node gives up its place.
        Some(shared) if shared.counts(report.outcome) => {
            let count = shared.count(report.outcome, ended);
            store
                .record_counted_attempt(write, count)
                .await
                .map(|(written, counted)| {
                    report.shared = counted;
                    written
                })
        }
        _ => store.record_attempt(write).await,
    };
    let written = recorded.inspect_err(|_| {
        // Sent, but not recorded: it will be sent again once storage works.
        worker.ctx.telemetry.internal_error("outcome_unrecorded");
    })?;
    if written == WriteResult::Stale && reached_receiver(result) {
        // It was sent, and its outcome came after its lease had passed on
        // (its node was paused): logged as late, changing nothing else.
        tracing::warn!(
            node_id = store.node_id(),
            delivery_id = %d.id,
            attempt,
            "late attempt: its lease had passed to another attempt; logged as late"
        );
        store.record_late_attempt(&d.tenant_id, &d.id, &log).await?;
    }
    if written == WriteResult::Written {
        worker.ctx.stats.count(CountedAttempt {
            tenant_id: &d.tenant_id,
            endpoint_id: &d.endpoint_id,
            started_ms: started,
            duration_ms: log.duration_ms,
            delivered: outcome.is_some_and(Outcome::delivered),
        });
        let date = result
            .as_ref()
            .ok()
            .and_then(Answer::http)
            .and_then(|r| r.headers.get("date"))
            .and_then(|v| v.to_str().ok());
        worker.ctx.telemetry.observe_attempt(&AttemptObservation {
            tenant_id: &d.tenant_id,
            endpoint_id: &d.endpoint_id,
            status,
            error_kind,
            duration_ms: log.duration_ms,
            attempt,
            created_at_ms: d.created_at_ms,
            now_ms: ended,
            verdict: &decision.verdict,
            next: &decision.next,
            decided_by: &log.decided_by,
            plugin_decision_us,
            clock_skew_ms: date.and_then(|v| clock_skew_ms(v, ended)),
        });
        let delivered = outcome.is_some_and(Outcome::delivered);
        tell_operators(worker, &d, delivered, report.endpoint_changed, ended).await;
    }
    Ok(report)
}
/// Whether the attempt sent anything: not when the address was blocked, nor
/// when the endpoint's transform skipped or failed.
fn reached_receiver(result: &Result<Answer, SendFailure>) -> bool {
    !matches!(
        result,
        Err(SendFailure::Blocked(_)
            | SendFailure::Transport {
                kind: crate::policy::FailureKind::TransformFailed,
                ..
            })
            | Ok(Answer::Skipped(_))
    )
}

/// Tells operator endpoints what the written attempt did: a delivery failing,
/// exhausted or recovered, and an endpoint a 410 disabled (read back, so every
/// gateway names the same disabling by its first time).
async fn tell_operators(
    worker: &DeliveryWorker,
    d: &DeliveryRecord,
    delivered: bool,
    disabled: bool,
    now: u64,
) {
    let events = &worker.ctx.operator_events;
    if let Some(event) = OperatorEvent::after_attempt(d, delivered) {
        events.emit(event);
    }
    if disabled
        && let Ok(Some(ep)) = worker
            .ctx
            .store
            .endpoint(&d.tenant_id, &d.endpoint_id)
            .await
        && ep.disabled
    {
        events.emit(OperatorEvent::endpoint_disabled(&ep, now));
    }
}

/// Receiver clock minus ours, from a `Date` header (whole seconds, so ±1 s).
pub(super) fn clock_skew_ms(date: &str, now_ms: u64) -> Option<i64> {
    let t = httpdate::parse_http_date(date).ok()?;
    let ms = i64::try_from(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()?;
    Some(ms - i64::try_from(now_ms).ok()?)
}
