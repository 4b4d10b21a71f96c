//! OpenTelemetry traces: one tracer provider per gateway (never the process's
//! global one, so gateways sharing a process never see each other's spans),
//! exported over OTLP/HTTP by `export_queue.rs`, and the W3C trace context an
//! event keeps from its ingest to every attempt (`propagation.rs`).
//!
//! Off (no `telemetry.otlp.endpoint`), no span is made; a trace context the
//! sender gave is still kept and passed on to the receiver unchanged.

mod export_queue;
mod propagation;

use std::sync::Arc;
use std::time::Duration;

use http::HeaderMap;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_http::HttpClient;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider, SpanExporter as _};
use prometheus_client::metrics::counter::Counter;

use crate::config::OtlpConfig;
use crate::store::TraceContext;
use export_queue::{ExportQueue, QueueProcessor};

/// Why traces could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error("telemetry.otlp: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// Where dropped spans are counted: a full queue, a failed export.
#[derive(Clone, Debug, Default)]
pub(crate) struct DropCounters {
    pub(crate) queue_full: Counter,
    pub(crate) export_failed: Counter,
}

/// The gateway's traces; cheap to clone. Off, every call is a no-op.
#[derive(Clone, Default)]
pub(crate) struct Traces(Option<Arc<Exporting>>);

struct Exporting {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
    queue: ExportQueue,
}

/// A span being recorded, or nothing when traces are off or it was not
/// sampled. Ended when dropped, or by [`TraceSpan::end`].
#[derive(Default)]
pub(crate) struct TraceSpan(Option<Context>);

impl Traces {
    /// Starts exporting to `cfg`'s endpoint, or answers off when it has none.
    /// `client` carries the export requests (the operator's collector is
    /// trusted, like `alerts.url`); must run inside the tokio runtime.
    ///
    /// # Errors
    /// If the OTLP exporter cannot be built from `cfg`.
    pub(crate) fn start(
        cfg: &OtlpConfig,
        node_id: &str,
        client: impl HttpClient + 'static,
        dropped: DropCounters,
    ) -> Result<Self, TracesError> {
        let Some(url) = cfg.traces_url() else {
            return Ok(Self::default());
        };
        let timeout = Duration::from_millis(cfg.timeout);
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .with_timeout(timeout)
            .build()?;
        // Built here, not from the process's `OTEL_RESOURCE_ATTRIBUTES`.
        let resource = Resource::builder_empty()
            .with_service_name(cfg.service_name.clone())
            .with_attributes([
                KeyValue::new("service.instance.id", node_id.to_owned()),
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            ])
            .build();
        exporter.set_resource(&resource);
        let (processor, queue) = QueueProcessor::start(exporter, cfg, dropped);
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("hookgate");
        Ok(Self(Some(Arc::new(Exporting {
            tracer,
            provider,
            queue,
        }))))
    }

    /// The span of an ingest request, continuing the trace its `traceparent`
    /// names (or starting one), and the trace context the event keeps: the
    /// span's, or off, the sender's as it came.
    pub(crate) fn ingest(&self, headers: &HeaderMap) -> (TraceSpan, Option<TraceContext>) {
        let Some(on) = &self.0 else {
            return (TraceSpan::default(), propagation::from_headers(headers));
        };
        let parent = propagation::parent_of_request(headers);
        let span = on.start("ingest", SpanKind::Server, &parent);
        let kept = propagation::to_stored(span.span().span_context());
        (TraceSpan(Some(span)), kept)
    }

    /// The span of one attempt, a child of the event's kept trace context (or
    /// the start of a trace), and the context to send the receiver with it.
    pub(crate) fn attempt(&self, kept: Option<&TraceContext>) -> (TraceSpan, Option<TraceContext>) {
        let Some(on) = &self.0 else {
            return (TraceSpan::default(), kept.cloned());
        };
        let parent = kept.map_or_else(Context::new, propagation::parent_of_stored);
        let span = on.start("attempt", SpanKind::Client, &parent);
        let sent = propagation::to_stored(span.span().span_context());
        (TraceSpan(Some(span)), sent)
    }

    /// A span inside `parent` (a plugin's decision, a store commit); nothing
    /// when `parent` is nothing.
    pub(crate) fn child(&self, parent: &TraceSpan, name: &'static str) -> TraceSpan {
        match (&self.0, &parent.0) {
            (Some(on), Some(cx)) => TraceSpan(Some(on.start(name, SpanKind::Internal, cx))),
            _ => TraceSpan::default(),
        }
    }

    /// Exports what has ended, within the export timeout, and stops. Spans
    /// ended later are not exported.
    pub(crate) async fn shutdown(&self) {
        if let Some(on) = &self.0 {
            on.queue.drain().await;
            if let Err(e) = on.provider.shutdown() {
                tracing::debug!(error = %e, "tracer provider shutdown");
            }
        }
    }
}

impl Exporting {
    fn start(&self, name: &'static str, kind: SpanKind, parent: &Context) -> Context {
        let builder = self.tracer.span_builder(name).with_kind(kind);
        let span = self.tracer.build_with_context(builder, parent);
        parent.with_span(span)
    }
}

impl TraceSpan {
    /// Whether attributes set on it are kept; check before building costly ones.
    pub(crate) fn is_recording(&self) -> bool {
        self.0.as_ref().is_some_and(|cx| cx.span().is_recording())
    }

    /// Sets one attribute.
    pub(crate) fn set(&self, key: &'static str, value: impl Into<Value>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// Sets a string attribute, copied only when recording.
    pub(crate) fn set_str(&self, key: &'static str, value: &str) {
        if self.is_recording() {
            self.set(key, value.to_owned());
        }
    }

    /// Marks it failed.
    pub(crate) fn fail(&self, message: impl ToString) {
        if let Some(cx) = &self.0 {
            cx.span().set_status(Status::error(message.to_string()));
        }
    }

    /// Ends it now.
    pub(crate) fn end(self) {
        if let Some(cx) = self.0 {
            cx.span().end();
        }
    }
}

#[cfg(test)]
mod tests;
