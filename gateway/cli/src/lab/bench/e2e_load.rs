//! The load of `hookgate bench e2e` and what arrives of it: closed-loop clients
//! posting for a fixed time, an open-loop sender at a fixed rate, and a bounded
//! wait for every accepted event's first arrival at the receiver (by
//! `webhook-id`, which is the event's id).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::json;

use super::harness::{CountingReceiver, HttpClient};

/// The event posted: about 500 bytes on the wire with its headers.
pub(super) fn small_event() -> Bytes {
    let body = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(380)}});
    Bytes::from(body.to_string())
}

/// What a closed-loop load got: the ids of the events accepted (202), how many
/// answers were anything else, how long it ran and when it ended.
pub(super) struct Load {
    pub(super) accepted: Vec<String>,
    pub(super) refused: usize,
    pub(super) secs: f64,
    pub(super) ended: Instant,
}

/// The id of an accepted event, from the 202's body.
#[derive(serde::Deserialize)]
struct Accepted {
    id: String,
}

/// Posts one event; `Some(id)` if it was accepted, `None` if it was answered otherwise.
async fn post(
    http: &HttpClient,
    url: &str,
    key: &str,
    body: Bytes,
) -> anyhow::Result<Option<String>> {
    let req = http::Request::post(url)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(Full::new(body))?;
    let resp = http.request(req).await?;
    let status = resp.status().as_u16();
    let answer = resp.into_body().collect().await?.to_bytes();
    if status != 202 {
        return Ok(None);
    }
    Ok(Some(serde_json::from_slice::<Accepted>(&answer)?.id))
}

/// `clients` closed-loop clients (each posts its next event when the last is
/// answered) post for `secs`.
pub(super) async fn closed_loop(
    http: &HttpClient,
    url: &str,
    key: &str,
    clients: usize,
    secs: f64,
) -> anyhow::Result<Load> {
    closed_loop_with(http, url, key, small_event(), clients, secs).await
}

/// [`closed_loop`] with `body` as each event.
pub(super) async fn closed_loop_with(
    http: &HttpClient,
    url: &str,
    key: &str,
    body: Bytes,
    clients: usize,
    secs: f64,
) -> anyhow::Result<Load> {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, url, key, body, stop) = (
            http.clone(),
            url.to_owned(),
            key.to_owned(),
            body.clone(),
            Arc::clone(&stop),
        );
        tasks.push(tokio::spawn(async move {
            let (mut ids, mut refused) = (Vec::new(), 0usize);
            while !stop.load(Ordering::Relaxed) {
                match post(&http, &url, &key, body.clone()).await? {
                    Some(id) => ids.push(id),
                    None => refused += 1,
                }
            }
            anyhow::Ok((ids, refused))
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut accepted, mut refused) = (Vec::new(), 0);
    for t in tasks {
        let (ids, r) = t.await??;
        accepted.extend(ids);
        refused += r;
    }
    let ended = Instant::now();
    Ok(Load {
        accepted,
        refused,
        secs: ended.duration_since(started).as_secs_f64(),
        ended,
    })
}

/// Posts `rate` events a second for `secs`, each on its own task whatever the
/// answers' pace (open loop); returns each accepted event's id and send time.
pub(super) async fn open_loop(
    http: &HttpClient,
    url: &str,
    key: &str,
    rate: f64,
    secs: f64,
) -> anyhow::Result<Vec<(String, Instant)>> {
    let body = small_event();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(0.001)));
    let mut tasks = Vec::new();
    for _ in 0..((rate * secs).round() as usize).max(1) {
        tick.tick().await;
        let (http, url, key, body) = (http.clone(), url.to_owned(), key.to_owned(), body.clone());
        tasks.push(tokio::spawn(async move {
            let sent = Instant::now();
            let id = post(&http, &url, &key, body).await?;
            anyhow::Ok(id.map(|id| (id, sent)))
        }));
    }
    let mut sent = Vec::new();
    for t in tasks {
        sent.extend(t.await??);
    }
    Ok(sent)
}

/// Forgets what the receiver has seen so far (leftovers of an earlier phase).
pub(super) fn forget_arrivals(rx: &CountingReceiver) {
    if let Ok(mut a) = rx.arrivals.lock() {
        a.clear();
    }
}

/// Waits, at most `bound`, until each of `ids` has arrived at `rx`; returns the
/// first arrival of each one that did. Arrivals of other ids are ignored.
pub(super) async fn await_arrivals<'a>(
    rx: &CountingReceiver,
    ids: impl IntoIterator<Item = &'a String>,
    bound: Duration,
) -> HashMap<String, Instant> {
    let mut pending: HashSet<&str> = ids.into_iter().map(String::as_str).collect();
    let mut arrived = HashMap::with_capacity(pending.len());
    let deadline = Instant::now() + bound;
    loop {
        let batch = rx
            .arrivals
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default();
        for (at, id) in batch {
            if pending.remove(id.as_str()) {
                arrived.insert(id, at);
            }
        }
        if pending.is_empty() || Instant::now() >= deadline {
            return arrived;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
