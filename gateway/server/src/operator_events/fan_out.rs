//! Ingests each operator event for the endpoints that listen for it: the
//! admin's (namespace `_hookgate`, with `alerts.url`'s) and, for an event about
//! a tenant, that tenant's own (`_ops.{tenant}`). An event is one stored event
//! per namespace, through the same ingest as the API's, so it is durable and
//! delivered by the normal engine. A namespace nobody listens in stores nothing.

use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{OPERATOR_TENANT, OperatorEvent, tenant_namespace};
use crate::event_type;
use crate::ids::TenantId;
use crate::store::{EndpointRecord, IngestOutcome, NewEvent, Store, StoreError};

/// Where the fan-out queues each event: the same ingest as the API's (the
/// delivery engine's, which counts it), seen only as far as this one call.
pub(crate) trait OperatorIngest: Send + Sync + 'static {
    /// Ingests one event durably.
    fn ingest_operator<'a>(
        &'a self,
        event: NewEvent<'a>,
    ) -> impl Future<Output = Result<IngestOutcome, StoreError>> + Send + 'a;
}

/// How often one namespace's ingest is tried when an endpoint is deleted
/// between reading the endpoints and writing.
const TRIES: usize = 3;

/// Ingests every event `events` brings until every handle is gone, or until
/// `stop`, after which what is already waiting is ingested before it returns.
pub(crate) async fn run(
    store: Store,
    writes: impl OperatorIngest,
    mut events: mpsc::Receiver<OperatorEvent>,
    stop: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = stop.cancelled() => events.try_recv().ok(),
        };
        let Some(event) = event else { return };
        let mut namespaces = vec![TenantId::from(OPERATOR_TENANT)];
        namespaces.extend(event.tenant_id.as_ref().map(tenant_namespace));
        for ns in &namespaces {
            if let Err(e) = deliver_in(&store, &writes, ns, &event).await {
                tracing::error!(error = %e, namespace = %ns, event_type = event.kind.as_str(),
                    "could not queue an operator event");
            }
        }
    }
}

/// Ingests `event` for the endpoints of namespace `ns` that listen for it.
async fn deliver_in(
    store: &Store,
    writes: &impl OperatorIngest,
    ns: &TenantId,
    event: &OperatorEvent,
) -> Result<(), StoreError> {
    let body = event.body().to_string();
    let Ok(payload) = RawValue::from_string(body) else {
        return Ok(()); // a serialized Value is always JSON
    };
    let key = event.dedupe.as_deref().map(|k| {
        // The key is the happening, not the body: two gateways that saw it
        // at different instants still store it once.
        (k, hex::encode(Sha256::digest(k.as_bytes())))
    });
    for _ in 0..TRIES {
        let all = store.endpoints_of(ns).await?;
        let listening: Vec<&EndpointRecord> = all
            .iter()
            .filter(|ep| {
                !ep.disabled && event_type::any_matches(&ep.event_types, event.kind.as_str())
            })
            .collect();
        if listening.is_empty() {
            return Ok(());
        }
        let outcome = writes
            .ingest_operator(NewEvent {
                labels: Default::default(),
                tenant_id: ns.as_str(),
                event_type: event.kind.as_str(),
                payload: &payload,
                idempotency: key.clone(),
                endpoints: listening,
                now_ms: event.at_ms,
            })
            .await?;
        if !matches!(outcome, IngestOutcome::EndpointsChanged) {
            return Ok(());
        }
    }
    Ok(())
}
