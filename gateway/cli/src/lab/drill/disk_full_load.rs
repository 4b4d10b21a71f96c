//! The disk-full drill's ingest: a few paced senders that post events to the one
//! gateway throughout the drill and log every answer with when it was sent and
//! when it came: a 202 with its event id, a 503 with its error code, anything
//! else (another status, or no answer at all) as it was.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use serde_json::json;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::api::{GatewayApi, TENANT};

/// The event type every sent event has.
const EVENT_TYPE: &str = "drill.disk_full";
/// Events sent at most, whatever the rate and duration.
const MAX_EVENTS: u64 = 100_000;
/// Padding in each event, so that events take some room in the store.
const PAD_BYTES: usize = 512;

/// What one ingest call got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// 202, with the event's id.
    Acked(String),
    /// 503, with the error code of its body.
    Refused(String),
    /// Any other status, with its body.
    Other(u16, String),
    /// No answer: the call failed.
    NoAnswer(String),
}

/// One ingest call.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    /// The event's `seq` in its payload.
    pub(super) seq: u64,
    pub(super) sent: Instant,
    pub(super) answered: Instant,
    pub(super) outcome: Outcome,
}

/// The senders at work; [`Load::stop`] ends them and hands over the log.
pub(super) struct Load {
    log: Arc<Mutex<Vec<Answer>>>,
    stop: CancellationToken,
    senders: JoinSet<()>,
}

impl Load {
    /// Starts `senders` senders posting `rate` events a second in all.
    pub(super) fn start(api: &GatewayApi, senders: u32, rate: u32) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let pace = Duration::from_micros(1_000_000 * u64::from(senders) / u64::from(rate.max(1)));
        let seq = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut running = JoinSet::new();
        for sender in 0..senders {
            let (api, log, stop, seq) = (
                api.clone(),
                Arc::clone(&log),
                stop.clone(),
                Arc::clone(&seq),
            );
            running.spawn(async move {
                while !stop.is_cancelled() {
                    let n = seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if n >= MAX_EVENTS {
                        return;
                    }
                    let answer = send_one(&api, sender, n).await;
                    log.lock().unwrap_or_else(|p| p.into_inner()).push(answer);
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(pace) => {}
                    }
                }
            });
        }
        Self {
            log,
            stop,
            senders: running,
        }
    }

    /// The log so far.
    pub(super) fn answers(&self) -> Vec<Answer> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How long after `since` the first 202 to a call sent at or after it came,
    /// waiting for one until `deadline` (`None`: none by then).
    pub(super) async fn first_ack_after(
        &self,
        since: Instant,
        deadline: Instant,
    ) -> Option<Duration> {
        loop {
            let found = self
                .answers()
                .iter()
                .filter(|a| a.sent >= since && matches!(a.outcome, Outcome::Acked(_)))
                .map(|a| a.answered)
                .min();
            if let Some(at) = found {
                return Some(at.saturating_duration_since(since));
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the senders (each finishes its call under way); the whole log.
    pub(super) async fn stop(mut self) -> Vec<Answer> {
        self.stop.cancel();
        while self.senders.join_next().await.is_some() {}
        self.answers()
    }
}

/// Posts event `n` of `sender` and says what came back.
async fn send_one(api: &GatewayApi, sender: u32, n: u64) -> Answer {
    let event = json!({
        "event_type": EVENT_TYPE,
        "payload": {"seq": n, "sender": sender, "pad": "x".repeat(PAD_BYTES)},
    });
    let path = format!("/v1/tenants/{TENANT}/events");
    let sent = Instant::now();
    let outcome = match api.call(Method::POST, &path, Some(&event)).await {
        Ok((StatusCode::ACCEPTED, body)) => match body["id"].as_str() {
            Some(id) => Outcome::Acked(id.to_owned()),
            None => Outcome::Other(202, body.to_string()),
        },
        Ok((StatusCode::SERVICE_UNAVAILABLE, body)) => {
            Outcome::Refused(body["error"]["code"].as_str().unwrap_or("").to_owned())
        }
        Ok((status, body)) => Outcome::Other(status.as_u16(), body.to_string()),
        Err(e) => Outcome::NoAnswer(e.to_string()),
    };
    Answer {
        seq: n,
        sent,
        answered: Instant::now(),
        outcome,
    }
}
