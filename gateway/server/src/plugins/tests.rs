//! The service against a real store and host: a version the host disables is
//! reported once, and both listeners act on it (stored, counted and alerted); the
//! host's instance slots show on the metrics.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::alerts::AlertMonitor;
use crate::clock::ManualClock;
use crate::plugin_runtime::{DISABLE_AFTER_FAILURES, PluginBinding, PluginInput};
use crate::policy::{AttemptFacts, EffectivePolicy, Outcome};
use crate::store::NewPluginVersion;
use crate::store::testing::TestStore;
use crate::telemetry::Telemetry;

const NOW_MS: u64 = 1_700_000_000_000;

/// The `trap` fixture (it divides by zero in `classify`) as core-module bytes.
fn trap_module() -> Vec<u8> {
    let fixture = |name: &str| {
        let path = format!(
            "{}/../../tests/fixtures/plugins/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let text = format!(
        "(module\n{}\n{})",
        fixture("prelude.wat"),
        fixture("trap.wat")
    );
    wat::parse_str(text).unwrap()
}

async fn decide_once(host: &PluginHost) -> String {
    let outcome = Outcome::Status(500);
    let facts = AttemptFacts {
        outcome: &outcome,
        attempt: 1,
        first_attempt_at_ms: NOW_MS,
        now_ms: NOW_MS,
        retry_after: None,
        date: None,
        prev_delay_ms: None,
        seed: 7,
    };
    let input = PluginInput {
        headers: None,
        body: b"",
        event_type: "test.event",
        ..PluginInput::default()
    };
    let binding = PluginBinding::parse("acme", "trap").unwrap();
    let policy = EffectivePolicy::default_preset();
    host.decide(&binding, &policy, &facts, &input)
        .await
        .decided_by
}

#[tokio::test]
async fn a_disabled_version_is_stored_counted_alerted_and_told() {
    let store = TestStore::new().await;
    let bytes = trap_module();
    let stored = store
        .store
        .add_plugin_version(
            &TenantId::from("acme"),
            "trap",
            NewPluginVersion {
                bytes: &bytes,
                sha256: &"a".repeat(64),
                checks: None,
            },
            NOW_MS,
            10,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.active, 1);
    // Loaded from bytes here: the trap could never pass conformance as an upload.
    let host = Arc::new(PluginHost::new(512 * 1024).unwrap());
    assert_eq!(host.load("acme", "trap", &bytes).unwrap(), 1);
    let clock: Arc<dyn Clock> = ManualClock::new(NOW_MS);
    let limits = PluginLimits {
        plugins_per_tenant: 10,
        keep_versions: 10,
    };
    let dir = tempfile::tempdir().unwrap();
    let service = PluginService::start(
        host,
        store.store.clone(),
        Arc::clone(&clock),
        limits,
        dir.path(),
    )
    .await
    .unwrap();
    let (monitor, mut alerts) = AlertMonitor::new(crate::config::Config::default().alerts);
    let telemetry = Arc::new(Telemetry::new(false, monitor));
    let (operator, mut told) = crate::operator_events::OperatorEvents::channel();
    let recorder = service.spawn_disabled_recorder(operator);
    let watch =
        tokio::spawn(Arc::clone(&telemetry).watch_plugins(clock, service.host().subscribe()));

    for i in 1..=DISABLE_AFTER_FAILURES {
        assert_eq!(
            decide_once(service.host()).await,
            "fallback:trap",
            "failure {i}"
        );
    }
    assert_eq!(decide_once(service.host()).await, "fallback:disabled");

    let alert = tokio::time::timeout(Duration::from_secs(10), alerts.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (alert.rule, alert.tenant_id.as_deref()),
        ("plugin_disabled", Some("acme"))
    );
    assert!(alert.message.contains("plugin:trap@1"), "{}", alert.message);
    // The write that disabled it tells operators, once.
    let event = tokio::time::timeout(Duration::from_secs(10), told.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event.body()["type"], "plugin.disabled");
    assert_eq!(
        (&event.data["plugin"], &event.data["version"]),
        (&serde_json::json!("trap"), &serde_json::json!(1))
    );
    assert!(
        telemetry
            .render_metrics(0)
            .contains("hookgate_plugins_disabled_total 1\n"),
        "counted once"
    );
    // Shutdown: once the host closes its events, both listeners finish what was
    // sent and end; the flag is stored by then.
    service.host().close_events();
    for listener in [recorder, watch] {
        tokio::time::timeout(Duration::from_secs(10), listener)
            .await
            .expect("a listener ends once the events close")
            .unwrap();
    }
    let rec = store
        .store
        .plugin(&TenantId::from("acme"), "trap")
        .await
        .unwrap()
        .unwrap();
    assert!(rec.versions[0].disabled, "the disabled flag was stored");
}

#[tokio::test]
async fn the_plugin_pool_slots_show_on_metrics() {
    let host = PluginHost::with_slots(512 * 1024, 200).unwrap();
    // The trap must be final inline however slowly this machine runs it.
    host.set_inline_time(std::time::Duration::from_secs(60));
    host.load("acme", "trap", &trap_module()).unwrap();
    assert_eq!(decide_once(&host).await, "fallback:trap");
    let (monitor, _alerts) = AlertMonitor::new(crate::config::Config::default().alerts);
    let telemetry = Telemetry::new(false, monitor);
    telemetry
        .plugins()
        .observe(&host.pool_usage(), &host.decision_paths());
    telemetry
        .plugins()
        .observe(&host.pool_usage(), &host.decision_paths());
    let metrics = telemetry.render_metrics(0);
    // The decision's slot is free again, and kept warm for the plugin; the trap
    // was final inline, counted once however often the metrics are read.
    for sample in [
        "hookgate_plugin_decision_paths_total{path=\"inline\"} 1\n",
        "hookgate_plugin_decision_paths_total{path=\"escalated\"} 0\n",
        "hookgate_plugin_memory_slots{state=\"capacity\"} 200\n",
        "hookgate_plugin_memory_slots{state=\"in_use\"} 0\n",
        "hookgate_plugin_memory_slots{state=\"warm\"} 1\n",
    ] {
        assert!(metrics.contains(sample), "{sample} in:\n{metrics}");
    }
}
