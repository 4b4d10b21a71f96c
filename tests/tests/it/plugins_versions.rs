//! The `hookgate:policy` versions in a running gateway: the SDK-built examples
//! target 0.3.0 (one `decide` call), the WAT fixtures 0.1.0 (`classify`, then
//! `next-delay`) and 0.2.0, and a gateway takes and runs them side by side.

use std::time::Duration;

use hookgate_server::{
    AttemptFacts, BuiltinPolicy, DeadReason, DestinationKind, EffectivePolicy, FailureKind,
    NextStep, Outcome, PluginBinding, PluginHost, PluginInput, RetryDecider, WitVersion,
};
use hookgate_tests::{
    Backend, TestGateway, body_receiver, fixture_module, is_final, plugin_wasm, upload_example,
};
use serde_json::json;

hookgate_tests::on_each_backend! {
    a_0_1_0_and_a_0_3_0_plugin_each_decide_their_deliveries,
}

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn sdk_examples_target_0_3_0_and_older_fixtures_still_pass_the_checks() {
    let host = PluginHost::new(512 * 1024).unwrap();
    for example in [
        "ladder",
        "json-error-code",
        "event-type-cap",
        "tutorial",
        "broker-aware",
    ] {
        let checked = host.check(&plugin_wasm(example)).unwrap();
        assert_eq!(checked.wit, WitVersion::V0_3_0, "{example}");
        assert!(checked.componentized, "{example}");
    }
    for (fixture, version) in [
        ("tryagain", WitVersion::V0_1_0),
        ("tryagain_0_2", WitVersion::V0_2_0),
    ] {
        let checked = host.check(&fixture_module(fixture)).unwrap();
        assert_eq!(checked.wit, version, "{fixture}");
    }
}

/// What `plugin` decides on attempt `attempt` failing with `kind` at
/// `destination`, whose broker said `error`, as the delivery worker asks it:
/// `decided_by`, the next step, and the verdict as debug text.
async fn decide_failure(
    host: &PluginHost,
    plugin: &str,
    (kind, attempt): (FailureKind, u32),
    destination: DestinationKind,
    error: &str,
) -> (String, NextStep, String) {
    let outcome = Outcome::Failure(kind);
    let input = PluginInput {
        event_type: "order.paid",
        destination,
        error_message: error,
        ..PluginInput::default()
    };
    let bound = host.bind(PluginBinding::parse("acme", plugin).unwrap(), &input);
    let policy = EffectivePolicy::default_preset();
    let d = hookgate_server::decide(&policy, &failed(&outcome, attempt), Some(&bound)).await;
    (d.decided_by, d.next, format!("{:?}", d.verdict))
}

fn failed(outcome: &Outcome, attempt: u32) -> AttemptFacts<'_> {
    AttemptFacts {
        outcome,
        attempt,
        first_attempt_at_ms: 1_000,
        now_ms: 2_000,
        retry_after: None,
        date: None,
        prev_delay_ms: None,
        seed: 7,
    }
}

#[tokio::test]
async fn the_sdks_0_3_0_plugin_decides_broker_failures_a_0_2_0_one_is_not_asked() {
    let host = PluginHost::new(512 * 1024).unwrap();
    host.load("acme", "broker", &plugin_wasm("broker-aware"))
        .unwrap();
    host.load("acme", "old", &fixture_module("once_0_2"))
        .unwrap();
    let runs = || {
        let paths = host.decision_paths();
        paths.inline + paths.escalated + paths.pool
    };

    // `broker-aware`, built with the SDK, reads the kind, the destination and
    // the broker's words. A third RabbitMQ auth refusal, which the built-in
    // alone gives up on, it retries after 30 s.
    let policy = EffectivePolicy::default_preset();
    let outcome = Outcome::Failure(FailureKind::AuthRefused);
    let alone = BuiltinPolicy.decide(&policy, &failed(&outcome, 3));
    assert_eq!(alone.next, NextStep::Dead(DeadReason::GiveUp));
    let third = (FailureKind::AuthRefused, 3);
    let rabbitmq = DestinationKind::Rabbitmq;
    let (by, next, _) = decide_failure(&host, "broker", third, rabbitmq, "ACCESS_REFUSED").await;
    assert_eq!(
        (by.as_str(), next),
        ("plugin:broker@1", NextStep::RetryAt { delay_ms: 30_000 })
    );
    // From NATS the same refusal is the built-in's call.
    let (by, next, _) = decide_failure(&host, "broker", third, DestinationKind::Nats, "").await;
    assert_eq!((by.as_str(), next), ("builtin", alone.next));
    // Too large: given up in the broker's own words.
    let error = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    let too_large = (FailureKind::TooLarge, 1);
    let (by, next, verdict) =
        decide_failure(&host, "broker", too_large, DestinationKind::Redis, error).await;
    assert_eq!(
        (by.as_str(), next),
        ("plugin:broker@1", NextStep::Dead(DeadReason::GiveUp))
    );
    let reason = format!("redis refused the message as too large: {error}");
    assert!(verdict.contains(&reason), "{verdict}");
    assert_eq!(runs(), 3);

    // `once_0_2` (0.2.0) retries after 5 s whatever it is asked. It is not
    // asked about a broker's kind, which 0.2.0 cannot name, but still about a
    // timeout, from a broker too.
    for kind in FailureKind::ALL
        .into_iter()
        .filter(|k| k.from_broker_only())
    {
        let (by, _, _) = decide_failure(&host, "old", (kind, 1), rabbitmq, "x").await;
        assert_eq!(by, "builtin", "{kind:?}");
    }
    assert_eq!(runs(), 3, "the 0.2.0 plugin ran for a broker kind");
    let timeout = (FailureKind::Timeout, 1);
    let (by, next, _) = decide_failure(&host, "old", timeout, rabbitmq, "").await;
    assert_eq!(
        (by.as_str(), next),
        ("plugin:old@1", NextStep::RetryAt { delay_ms: 5_000 })
    );
    assert_eq!(runs(), 4);
}

async fn a_0_1_0_and_a_0_3_0_plugin_each_decide_their_deliveries(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let (s, b) = gw
        .upload_plugin("acme", &key, "old", fixture_module("tryagain"))
        .await;
    assert_eq!(s, 201, "{b}");
    upload_example(&gw, &key, "new", "json-error-code", 1).await;
    for plugin in ["old", "new"] {
        let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
        let body = json!({"url": url, "plugin": plugin, "event_types": [plugin]});
        gw.endpoint("acme", &key, body).await;
        let ev = gw.event("acme", &key, plugin, json!({"n": 1})).await;
        let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
        let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
        assert_eq!(
            (d["state"].as_str(), d["attempts"].as_u64()),
            (Some("succeeded"), Some(2)),
            "{plugin}: {d}"
        );
        let first = &d["attempt_log"][0];
        assert_eq!(
            (first["verdict"].as_str(), first["decided_by"].as_str()),
            (Some("retry"), Some(format!("plugin:{plugin}@1").as_str())),
            "{plugin}: {d}"
        );
    }
}
