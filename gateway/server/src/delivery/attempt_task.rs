//! One attempt as its own task, with what must happen however it ends.
//!
//! A panic inside an attempt is a bug in hookgate, not the receiver's failure. The
//! delivery still leaves the in-flight set and the scheduler still hears back (with a neutral
//! outcome, so a half-open probe may go again). The delivery is retried a minute
//! later without the failure counting as an attempt, and the third such failure in
//! a series ends it `internal_error`.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use tokio::sync::mpsc;

use super::DeliveryHandle;
use super::worker::{AttemptReport, DeliveryWorker, EngineContext};
use crate::ids::EndpointId;
use crate::store::{EndpointRecord, Interrupted, Interruption, Lease};

/// How long after a panic the delivery is tried again.
pub(crate) const INTERNAL_ERROR_RETRY_MS: u64 = 60_000;
/// Panics in one series that end the delivery.
pub(crate) const MAX_INTERNAL_ERRORS: u32 = 3;

/// Takes the delivery out of the in-flight set however the task ends
/// (finished, panicked or aborted).
struct InFlightMark {
    handle: DeliveryHandle,
    delivery_id: String,
}

impl Drop for InFlightMark {
    fn drop(&mut self) {
        self.handle.clear_in_flight(&self.delivery_id);
    }
}

/// Runs `worker` and reports to the scheduler through `done`. The `places`
/// the attempt holds are given back before the report is sent, so an
/// endpoint waiting for one is served once the report is taken; `kept` goes
/// with the report, so the endpoint's own place is free only once the
/// scheduler has counted the outcome (on its breaker): otherwise a turn taken
/// in between could start an attempt the outcome should have held back.
pub(crate) async fn run_attempt<P: Send, K: Send>(
    worker: DeliveryWorker,
    handle: DeliveryHandle,
    done: mpsc::UnboundedSender<(EndpointId, AttemptReport, K)>,
    places: P,
    kept: K,
) {
    let (ctx, endpoint, entry) = (
        Arc::clone(&worker.ctx),
        Arc::clone(&worker.endpoint),
        worker.entry.clone(),
    );
    let held = InFlightMark {
        handle,
        delivery_id: entry.delivery_id().to_owned(),
    };
    let report = match AssertUnwindSafe(worker.run()).catch_unwind().await {
        Ok(report) => report,
        Err(panic) => {
            internal_error(&ctx, &endpoint, &entry, &panic_message(&*panic)).await;
            AttemptReport::default()
        }
    };
    // The store moved the delivery on before it leaves the in-flight set, so the
    // scheduler never starts the entry the panic left behind again.
    drop(held);
    drop(places);
    let _ = done.send((endpoint.id.clone(), report, kept));
}

/// Settles the delivery after a panic: requeued a minute later, or ended.
async fn internal_error(
    ctx: &EngineContext,
    endpoint: &EndpointRecord,
    entry: &Lease,
    message: &str,
) {
    let now = ctx.clock.now_ms();
    ctx.telemetry.internal_error("panic");
    let what = Interruption::InternalError {
        retry_at_ms: now.saturating_add(INTERNAL_ERROR_RETRY_MS),
        max: MAX_INTERNAL_ERRORS,
    };
    let delivery_id = entry.delivery_id();
    match ctx
        .store
        .interrupt(&endpoint.tenant_id, entry, now, what)
        .await
    {
        Ok(Interrupted::Ended(reason)) => {
            tracing::error!(
                delivery_id = %delivery_id,
                endpoint_id = %endpoint.id,
                panic = message,
                "attempt panicked {MAX_INTERNAL_ERRORS} times: delivery ended {reason}"
            );
            ctx.telemetry
                .ended_without_attempt(&endpoint.tenant_id, reason);
        }
        Ok(Interrupted::Requeued { due_ms }) => tracing::error!(
            delivery_id = %delivery_id,
            endpoint_id = %endpoint.id,
            panic = message,
            next_attempt_at_ms = due_ms,
            "attempt panicked: not counted as an attempt, retried later"
        ),
        Ok(Interrupted::NotCurrent) => tracing::error!(
            delivery_id = %delivery_id,
            panic = message,
            "attempt panicked after its outcome was written"
        ),
        Err(e) => tracing::error!(
            delivery_id = %delivery_id,
            panic = message,
            error = %e,
            "attempt panicked and could not be requeued; it is retried when due"
        ),
    }
}

/// The text a panic was raised with.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_are_read_from_either_payload() {
        let p = std::panic::catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(&*p), "static");
        let n = 3;
        let p = std::panic::catch_unwind(|| panic!("formatted {n}")).unwrap_err();
        assert_eq!(panic_message(&*p), "formatted 3");
    }
}
