//! The span processor: ended spans go into a bounded queue without waiting
//! (a full queue drops the span and counts it), and one task on the runtime
//! exports them in batches, so export never holds up ingest or delivery.
//! The SDK's own batch processor exports from a thread of its own with a
//! blocking client and counts nothing an operator can read; this one uses the
//! gateway's async client and its metrics.

use std::sync::Mutex;
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::DropCounters;
use crate::config::OtlpConfig;

/// Hands ended spans to the export task.
#[derive(Debug)]
pub(super) struct QueueProcessor {
    queue: mpsc::Sender<SpanData>,
    dropped: DropCounters,
}

/// The export task, to drain at shutdown.
pub(super) struct ExportQueue {
    stop: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
    /// How long draining may take.
    grace: Duration,
}

impl QueueProcessor {
    /// The processor and its export task, started on the current runtime.
    pub(super) fn start<E: SpanExporter + 'static>(
        exporter: E,
        cfg: &OtlpConfig,
        dropped: DropCounters,
    ) -> (Self, ExportQueue) {
        let (queue, spans) = mpsc::channel(cfg.queue_spans);
        let stop = CancellationToken::new();
        let batch = Batching {
            size: cfg.batch_spans,
            interval: Duration::from_millis(cfg.export_interval),
            failed: dropped.export_failed.clone(),
        };
        let task = tokio::spawn(export(exporter, spans, batch, stop.clone()));
        let grace = Duration::from_millis(cfg.timeout).saturating_mul(2);
        let queue_handle = ExportQueue {
            stop,
            task: Mutex::new(Some(task)),
            grace,
        };
        (Self { queue, dropped }, queue_handle)
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if span.span_context.is_sampled() && self.queue.try_send(span).is_err() {
            self.dropped.queue_full.inc();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        // The export task flushes on its own interval; nothing blocks here.
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        // Draining is async, in `ExportQueue::drain`.
        Ok(())
    }
}

impl ExportQueue {
    /// Exports every span queued so far and stops the task, within the grace.
    pub(super) async fn drain(&self) {
        self.stop.cancel();
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let abort = task.abort_handle();
            if tokio::time::timeout(self.grace, task).await.is_err() {
                tracing::warn!("trace export did not finish at shutdown; spans left were dropped");
                abort.abort();
            }
        }
    }
}

struct Batching {
    size: usize,
    interval: Duration,
    failed: prometheus_client::metrics::counter::Counter,
}

/// Gathers up to a batch, for at most an interval after its first span, and
/// exports it; once stopped, exports what is queued and ends.
async fn export<E: SpanExporter>(
    exporter: E,
    mut spans: mpsc::Receiver<SpanData>,
    batch: Batching,
    stop: CancellationToken,
) {
    let mut buf = Vec::with_capacity(batch.size);
    loop {
        let first = tokio::select! {
            span = spans.recv() => span,
            () = stop.cancelled() => None,
        };
        let Some(first) = first else { break };
        buf.push(first);
        let deadline = Instant::now() + batch.interval;
        while buf.len() < batch.size {
            tokio::select! {
                span = spans.recv() => match span {
                    Some(span) => buf.push(span),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
                () = stop.cancelled() => break,
            }
        }
        send(&exporter, &mut buf, &batch).await;
    }
    // Stopped: what is queued now goes out, then nothing more.
    while let Ok(span) = spans.try_recv() {
        buf.push(span);
        if buf.len() == batch.size {
            send(&exporter, &mut buf, &batch).await;
        }
    }
    send(&exporter, &mut buf, &batch).await;
}

async fn send<E: SpanExporter>(exporter: &E, buf: &mut Vec<SpanData>, batch: &Batching) {
    if buf.is_empty() {
        return;
    }
    let n = buf.len() as u64;
    if let Err(e) = exporter.export(std::mem::take(buf)).await {
        batch.failed.inc_by(n);
        tracing::warn!(error = %e, spans = n, "trace export failed; the spans were dropped");
    }
}
