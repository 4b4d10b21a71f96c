//! Delivers alerts as operator events (`alert.fired`, `alert.resolved`) and
//! keeps `alerts.url` as one operator endpoint defined in config: an endpoint of
//! the operator namespace (`_hookgate`), trusted, so it may point anywhere.

use tokio::sync::mpsc;

use super::Alert;
use crate::config::AlertsConfig;
use crate::operator_events::{OPERATOR_TENANT, OperatorEvent, OperatorEventType, OperatorEvents};
use crate::signing::SigningSecret;
use crate::store::{BreakerRecord, EndpointRecord, Store, StoreError, StoredSecret};

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
        .endpoint(&OPERATOR_TENANT.into(), &ALERT_ENDPOINT.into())
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
        tenant_id: OPERATOR_TENANT.into(),
        url,
        description: "hookgate alerts".to_owned(),
        event_types: cfg.event_types.clone(),
        policy: None,
        plugin: None,
        transform: None,
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
        updated_at_ms: now_ms,
        headers: Vec::new(),
        metadata: std::collections::BTreeMap::new(),
        uid: None,
        channels: Vec::new(),
        filter: None,
        signature: Default::default(),
        destination: None,
    };
    store.put_endpoint(&ep).await?;
    Ok(Some(ep))
}

/// Tells each alert as an operator event until the monitor goes away. Every
/// gateway of a cluster runs its own rules; the same incident seen by two within
/// one cool-down is told once.
pub(crate) async fn run(
    events: OperatorEvents,
    cooldown_ms: u64,
    mut alerts: mpsc::UnboundedReceiver<Alert>,
) {
    while let Some(alert) = alerts.recv().await {
        events.emit(as_operator_event(&alert, cooldown_ms));
    }
}

/// `alert` as the operator event `alert.fired` or `alert.resolved`.
pub(crate) fn as_operator_event(alert: &Alert, cooldown_ms: u64) -> OperatorEvent {
    let kind = if alert.state == "resolved" {
        OperatorEventType::AlertResolved
    } else {
        OperatorEventType::AlertFired
    };
    let subject = alert.endpoint_id.as_deref().unwrap_or_default();
    let period = alert.at_ms / cooldown_ms.max(1);
    OperatorEvent {
        kind,
        tenant_id: alert.tenant_id.as_deref().map(Into::into),
        data: serde_json::to_value(alert).unwrap_or_default(),
        at_ms: alert.at_ms,
        dedupe: Some(format!(
            "{}:{}:{subject}:{period}",
            kind.as_str(),
            alert.rule
        )),
    }
}
