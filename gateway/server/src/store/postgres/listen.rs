//! Wake-ups across gateways. Changes this gateway commits are sent to the others
//! with `NOTIFY` after commit, coalesced (never inside the ingest transaction);
//! one dedicated connection (not pooled: a pool drives its connections itself
//! and would drop notifications) `LISTEN`s for theirs, reconnecting after a drop.
//! A lost notification costs at most [`POLL_INTERVAL`]: each poll reports the
//! queue rows that came due since the last one (a lease that expired, work
//! another gateway added), so nothing waits on a message.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_util::sync::CancellationToken;

use super::statements::PRESENCE_LOCK_CLASS;
use super::{PgStore, PgTarget, ms, pg_error, unms};
use crate::clock::{Clock, SystemClock};
use crate::store::{Change, ChangeFeed, StoreError};

/// The notification channel.
const CHANNEL: &str = "hookgate_changes";

/// How often the queue is polled for work that came due without a message.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long changes are gathered before one `NOTIFY` carries them.
const COALESCE: Duration = Duration::from_millis(5);

/// Most bytes of one notification (PostgreSQL's limit is 8000).
const MAX_PAYLOAD: usize = 7_000;

/// One notification: who sent it and what changed.
#[derive(Serialize, Deserialize)]
struct Message {
    node: String,
    changes: Vec<Change>,
}

/// Starts sending, listening and polling; returns once `stop` is cancelled.
pub(super) fn start(
    store: PgStore,
    target: PgTarget,
    tls: MakeRustlsConnect,
    feed: ChangeFeed,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let (outbox, sent) = mpsc::unbounded_channel();
    feed.send_out(outbox);
    tokio::spawn(async move {
        let notify = tokio::spawn(send_loop(store.clone(), sent, stop.clone()));
        let poll = tokio::spawn(poll_loop(store.clone(), feed.clone(), stop.clone()));
        listen_loop(&store, &target, tls, &feed, &stop).await;
        let _ = notify.await;
        let _ = poll.await;
    })
}

/// Gathers this gateway's changes and sends them out.
async fn send_loop(
    store: PgStore,
    mut changes: mpsc::UnboundedReceiver<Change>,
    stop: CancellationToken,
) {
    loop {
        let first = tokio::select! {
            () = stop.cancelled() => return,
            c = changes.recv() => match c { Some(c) => c, None => return },
        };
        tokio::time::sleep(COALESCE).await;
        let mut batch = vec![first];
        while let Ok(c) = changes.try_recv() {
            batch.push(c);
        }
        for payload in payloads(store.node_id(), coalesce(batch)) {
            if let Err(e) = super::stats::counted(store.notify(&payload).await) {
                tracing::debug!(error = %e, "cannot notify other gateways; their poll will find the work");
            }
        }
    }
}

/// Keeps one `Due` per endpoint (the earliest) and drops repeats of the rest.
fn coalesce(batch: Vec<Change>) -> Vec<Change> {
    let mut due: BTreeMap<String, u64> = BTreeMap::new();
    let mut other: Vec<Change> = Vec::new();
    for c in batch {
        match c {
            Change::Due {
                endpoint_id,
                due_ms,
            } => {
                let at = due.entry(endpoint_id.to_string()).or_insert(due_ms);
                *at = (*at).min(due_ms);
            }
            c if !other.contains(&c) => other.push(c),
            _ => {}
        }
    }
    let due = due.into_iter().map(|(endpoint_id, due_ms)| Change::Due {
        endpoint_id: endpoint_id.into(),
        due_ms,
    });
    due.chain(other).collect()
}

/// The changes as notification payloads, each under [`MAX_PAYLOAD`] bytes.
fn payloads(node: &str, changes: Vec<Change>) -> Vec<String> {
    let mut out = Vec::new();
    let mut chunk: Vec<Change> = Vec::new();
    let mut size = 0;
    for c in changes {
        let len = serde_json::to_string(&c).map_or(0, |s| s.len()) + 1;
        if size + len > MAX_PAYLOAD && !chunk.is_empty() {
            out.push(std::mem::take(&mut chunk));
            size = 0;
        }
        size += len;
        chunk.push(c);
    }
    if !chunk.is_empty() {
        out.push(chunk);
    }
    out.into_iter()
        .filter_map(|changes| {
            let m = Message {
                node: node.to_owned(),
                changes,
            };
            serde_json::to_string(&m).ok()
        })
        .collect()
}

/// Listens on a dedicated connection until `stop`, reconnecting with backoff.
async fn listen_loop(
    store: &PgStore,
    target: &PgTarget,
    tls: MakeRustlsConnect,
    feed: &ChangeFeed,
    stop: &CancellationToken,
) {
    let mut backoff = Duration::from_millis(100);
    while !stop.is_cancelled() {
        match super::stats::counted(listen_once(store, target, tls.clone(), feed, stop).await) {
            Ok(()) => backoff = Duration::from_millis(100),
            Err(e) => tracing::debug!(error = %e, "change listener lost its connection"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// One connection's life: `LISTEN`, then hand on what other gateways send.
async fn listen_once(
    store: &PgStore,
    target: &PgTarget,
    tls: MakeRustlsConnect,
    feed: &ChangeFeed,
    stop: &CancellationToken,
) -> Result<(), StoreError> {
    let (client, mut connection) = target.config.connect(tls).await.map_err(pg_error)?;
    let (tx, mut notes) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message
                && tx.send(n.payload().to_owned()).is_err()
            {
                return;
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await
        .map_err(pg_error)?;
    // The node's presence lock, held for as long as this session lives: while
    // it is held, a lease of this node that ended still holds its place for the
    // others (the node may be paused with a request open at the receiver).
    let present: bool = client
        .query_one(
            "SELECT pg_try_advisory_lock($1, hashtext($2))",
            &[&PRESENCE_LOCK_CLASS, &store.node_id()],
        )
        .await
        .map_err(pg_error)?
        .get(0);
    if !present {
        tracing::warn!(
            node_id = store.node_id(),
            "another session holds this node id's presence lock (a paused gateway with the same cluster.node_id?)"
        );
    }
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            note = notes.recv() => match note {
                Some(payload) => {
                    if let Ok(m) = serde_json::from_str::<Message>(&payload)
                        && m.node != store.node_id()
                    {
                        for change in &m.changes {
                            store.inner.cache.forget(change);
                        }
                        feed.publish_remote(m.changes);
                    }
                }
                None => break,
            },
        }
    }
    driver.abort();
    Ok(())
}

/// Each [`POLL_INTERVAL`], reports the endpoints with queue rows that came due
/// since the last poll.
async fn poll_loop(store: PgStore, feed: ChangeFeed, stop: CancellationToken) {
    // What was due before this gateway started is read at start (the
    // scheduler asks every endpoint), not here.
    let mut since = SystemClock.now_ms();
    let mut tick = tokio::time::interval(POLL_INTERVAL);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = SystemClock.now_ms();
        match super::stats::counted(store.came_due(since, now).await) {
            Ok(due) => {
                feed.publish_remote(due);
                // Overlap a little: a row written with a slightly older time
                // than the last poll's clock is still found.
                since = now.saturating_sub(POLL_INTERVAL.as_millis() as u64);
            }
            Err(e) => tracing::debug!(error = %e, "cannot poll the queue"),
        }
    }
}

impl PgStore {
    async fn notify(&self, payload: &str) -> Result<(), StoreError> {
        self.client()
            .await?
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    /// The earliest row of each endpoint that came due in `(since, now]`.
    async fn came_due(&self, since: u64, now: u64) -> Result<Vec<Change>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT endpoint_id, min(due_ms) FROM queue
                 WHERE due_ms > $1 AND due_ms <= $2 GROUP BY endpoint_id",
                &[&ms(since), &ms(now)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| Change::Due {
                endpoint_id: r.get(0),
                due_ms: unms(r.get(1)),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
