//! The chaos receiver's answers, on the lab's raw-socket receiver: each request is
//! counted in the [`Tally`], verified against the signing secrets if any, then given
//! the [`Fault`] its arrival number draws. A request whose signature fails is
//! answered 401, as a verifying receiver would, unless its fault is a reset or a
//! hang.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::plan::{Fault, FaultPlan};
use super::tally::{Outcome as TallyOutcome, Tally};
use crate::lab::raw_receiver::{
    Action, Outcome, RawRequest, ReadLimits, ReplyBody, Responder, Response, Then,
};
pub use crate::lab::raw_receiver::{ReceiverListener, ReceiverSocket};
use hookgate_server::{SigningSecret, verify};

/// What the chaos receiver reads at most, and how long it waits.
pub const CHAOS_LIMITS: ReadLimits = ReadLimits {
    max_head: 64 * 1024,
    max_body: 4 * 1024 * 1024,
    idle: Duration::from_secs(60),
    read: Duration::from_secs(60),
};
/// How far `webhook-timestamp` may be from now, as Standard Webhooks verifiers check.
const TOLERANCE_S: i64 = 5 * 60;

/// What every connection shares.
#[derive(Debug)]
pub struct ReceiverContext {
    /// The faults to apply.
    pub plan: FaultPlan,
    /// Secrets to verify signatures with; empty means no check.
    pub secrets: Vec<SigningSecret>,
    /// The counters.
    pub tally: Arc<Tally>,
    arrivals: AtomicU64,
}

impl ReceiverContext {
    /// A context whose first request is number 1.
    pub fn new(plan: FaultPlan, secrets: Vec<SigningSecret>, tally: Arc<Tally>) -> Self {
        Self {
            plan,
            secrets,
            tally,
            arrivals: AtomicU64::new(0),
        }
    }
}

impl Responder for ReceiverContext {
    fn respond(&self, request: &RawRequest) -> Action {
        let n = self.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
        let id = request.header("webhook-id");
        let signature_ok = (!self.secrets.is_empty()).then(|| signed(&self.secrets, request));
        self.tally.arrived(id, signature_ok);
        match self.plan.fault(n) {
            Fault::Reset { delay } => Action {
                delay,
                then: Then::Reset,
            },
            Fault::Hang => Action {
                delay: Duration::ZERO,
                then: Then::Hang(None),
            },
            Fault::Respond { status, delay } => {
                let status = if signature_ok == Some(false) {
                    401
                } else {
                    status
                };
                let mut answer = answer(status);
                answer.retry_after_s = self.plan.retry_after(status);
                Action {
                    delay,
                    then: Then::Answer(answer),
                }
            }
        }
    }

    fn settled(&self, request: &RawRequest, outcome: Outcome) {
        let outcome = match outcome {
            Outcome::Status(status) => TallyOutcome::Status(status),
            Outcome::Reset => TallyOutcome::Reset,
            Outcome::Hang => TallyOutcome::Hang,
        };
        self.tally.ended(request.header("webhook-id"), outcome);
    }

    fn bad_request(&self, status: u16) -> Response {
        answer(status)
    }
}

/// `status` with a body naming it.
fn answer(status: u16) -> Response {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    Response {
        status,
        retry_after_s: None,
        close: false,
        body: ReplyBody::Text(format!("chaos-receiver: {status} {reason}\n")),
    }
}

/// Whether the Standard Webhooks headers verify with any secret, within the
/// timestamp tolerance.
fn signed(secrets: &[SigningSecret], request: &RawRequest) -> bool {
    let (Some(id), Some(ts), Some(sig)) = (
        request.header("webhook-id"),
        request.header("webhook-timestamp"),
        request.header("webhook-signature"),
    ) else {
        return false;
    };
    let Ok(ts) = ts.trim().parse::<i64>() else {
        return false;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    if (now - ts).abs() > TOLERANCE_S {
        return false;
    }
    secrets
        .iter()
        .any(|s| verify(s, id, ts, &request.body, sig))
}
