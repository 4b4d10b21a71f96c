//! Delivers alerts as signed webhooks through hookgate's own queue: each alert is
//! ingested as an event for an internal endpoint (tenant [`ALERT_TENANT`]) at
//! `alerts.url`, so it is durable and retried like any delivery.

use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::{ALERT_TENANT, Alert};
use crate::config::AlertsConfig;
use crate::signing::SigningSecret;
use crate::store::{BreakerRecord, EndpointRecord, NewEvent, Store, StoreError, StoredSecret};

/// Where the sender queues each alert: the same ingest as the API's (the delivery
/// engine's, which counts it), seen only as far as this one call.
pub(crate) trait AlertIngest: Send + Sync + 'static {
    /// Ingests one alert event durably.
    fn ingest_alert<'a>(
        &'a self,
        event: NewEvent<'a>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'a;
}

/// The internal alert endpoint's id.
pub(crate) const ALERT_ENDPOINT: &str = "ep_hookgate_alerts";

/// Makes the internal alert endpoint match the config; `None` when alert delivery
/// is off. The secret is `alerts.secret`, else one generated once and kept in `meta`.
///
/// # Errors
/// On a storage failure.
pub(crate) async fn install(
    store: &Store,
    cfg: &AlertsConfig,
    now_ms: u64,
) -> Result<Option<EndpointRecord>, StoreError> {
    let existing = store
        .endpoint(&ALERT_TENANT.into(), &ALERT_ENDPOINT.into())
        .await?;
    let Some(url) = &cfg.url else {
        if let Some(ep) = existing {
            store.delete_endpoint(&ep, now_ms).await?;
        }
        return Ok(None);
    };
    let secret = match (&cfg.secret, store.meta_get("alerts_secret").await?) {
        (Some(s), _) => s.clone(),
        (None, Some(s)) => String::from_utf8_lossy(&s).into_owned(),
        (None, None) => {
            let s = SigningSecret::generate().as_str().to_owned();
            store.meta_put("alerts_secret", s.as_bytes()).await?;
            tracing::info!(
                "generated the alert signing secret; read it with the alerts.secret setting or the data dir"
            );
            s
        }
    };
    // Validated at config load; the operator's URL is trusted, so no address check.
    let url = crate::address_guard::normalize_endpoint_url(url, usize::MAX)
        .map_or_else(|_| url.clone(), |u| u.to_string());
    let ep = EndpointRecord {
        id: ALERT_ENDPOINT.into(),
        tenant_id: ALERT_TENANT.into(),
        url,
        description: "hookgate alerts".to_owned(),
        event_types: vec!["alert.*".to_owned()],
        policy: None,
        plugin: None,
        timeout_ms: 15_000,
        max_in_flight: 4,
        rate_limit_per_s: None,
        disabled: false,
        disabled_reason: None,
        disabled_at_ms: None,
        secrets: vec![StoredSecret {
            secret,
            expires_at_ms: None,
            signing_key: None,
        }],
        breaker: existing
            .as_ref()
            .map(|e| e.breaker.clone())
            .unwrap_or_else(BreakerRecord::default),
        trusted: true,
        last_success_ms: None,
        created_at_ms: existing.as_ref().map_or(now_ms, |e| e.created_at_ms),
        headers: Vec::new(),
        metadata: std::collections::BTreeMap::new(),
        uid: None,
        channels: Vec::new(),
        filter: None,
        signature: Default::default(),
    };
    store.put_endpoint(&ep).await?;
    Ok(Some(ep))
}

/// Ingests each alert as an `alert.fired` / `alert.resolved` event until the
/// monitor goes away, through the same ingest as the API's. Without an endpoint,
/// alerts only reach the log.
pub(crate) async fn run(
    writes: impl AlertIngest,
    endpoint: Option<EndpointRecord>,
    mut alerts: mpsc::UnboundedReceiver<Alert>,
) {
    while let Some(alert) = alerts.recv().await {
        let Some(ep) = &endpoint else { continue };
        let event_type = format!("alert.{}", alert.state);
        let Ok(payload) = serde_json::to_string(&alert).map(RawValue::from_string) else {
            continue;
        };
        let Ok(payload) = payload else { continue };
        let ingest = writes.ingest_alert(NewEvent {
            labels: Default::default(),
            tenant_id: ALERT_TENANT,
            event_type: &event_type,
            payload: &payload,
            idempotency: None,
            endpoints: vec![ep],
            now_ms: alert.at_ms,
        });
        if let Err(e) = ingest.await {
            tracing::error!(error = %e, rule = alert.rule, "could not queue the alert webhook");
        }
    }
}
