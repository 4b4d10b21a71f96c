//! The load the crash and cluster drills put on their gateways: paced ingest
//! senders that follow whichever gateway is up, and a receiver that is flaky
//! until healed.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::json;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::api::GatewayApi;
use super::receiver::{Behavior, Reply, ReplyBody};

/// The event type every sent event has.
const EVENT_TYPE: &str = "drill.crash";
/// Events sent at most, whatever the rate and duration.
const MAX_EVENTS: u64 = 100_000;

/// A random pause between `low` and `high` milliseconds.
pub(super) fn gap(rng: &mut StdRng, (low, high): (u64, u64)) -> Duration {
    Duration::from_millis(rng.random_range(low..=high.max(low)))
}

/// Flaky until healed: 25 % 503, 5 % 500, 10 % resets, the rest 200, with latency
/// drawn from `latency_ms`; then 200 at once.
pub(super) fn flaky(seed: u64, latency_ms: (u64, u64), healed: Arc<AtomicBool>) -> Behavior {
    let rng = Mutex::new(StdRng::seed_from_u64(seed ^ 0x5eed_f1a4));
    Arc::new(move |_| {
        if healed.load(Ordering::SeqCst) {
            return Reply::status(200);
        }
        let mut rng = rng.lock().unwrap_or_else(|p| p.into_inner());
        let (low, high) = latency_ms;
        let delay = Duration::from_millis(rng.random_range(low..=high.max(low)));
        let status = match rng.random_range(0..100) {
            0..25 => 503,
            25..30 => 500,
            30..40 => return Reply::Reset,
            _ => 200,
        };
        Reply::Answer {
            status,
            retry_after_s: None,
            delay,
            body: ReplyBody::Small,
        }
    })
}

/// One ingest sender: sends paced events to whichever gateway `current` names
/// (none while it is down) until stopped.
pub(super) struct Sender {
    pub(super) current: watch::Receiver<Option<GatewayApi>>,
    pub(super) stop: CancellationToken,
    pub(super) acked: Arc<Mutex<Vec<String>>>,
    pub(super) unacked: Arc<AtomicU64>,
    pub(super) seq: Arc<AtomicU64>,
    /// Calls awaiting their answer, over the senders that share it.
    pub(super) sending_now: Arc<AtomicUsize>,
    /// Woken whenever a call starts.
    pub(super) call_started: Arc<Notify>,
    pub(super) pace: Duration,
}

impl Sender {
    pub(super) async fn run(mut self, sender: u32) {
        while !self.stop.is_cancelled() {
            let api = self.current.borrow_and_update().clone();
            let Some(api) = api else {
                tokio::select! {
                    () = self.stop.cancelled() => return,
                    _ = self.current.changed() => {}
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            };
            let n = self.seq.fetch_add(1, Ordering::SeqCst);
            if n >= MAX_EVENTS {
                return;
            }
            let payload = json!({"seq": n, "sender": sender});
            self.sending_now.fetch_add(1, Ordering::SeqCst);
            self.call_started.notify_waiters();
            let sent = api.send_event(EVENT_TYPE, payload).await;
            self.sending_now.fetch_sub(1, Ordering::SeqCst);
            match sent {
                Ok(Some(id)) => self
                    .acked
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(id),
                Ok(None) | Err(_) => {
                    self.unacked.fetch_add(1, Ordering::SeqCst);
                }
            }
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(self.pace) => {}
            }
        }
    }
}
