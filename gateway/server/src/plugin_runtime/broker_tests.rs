//! `hookgate:policy@0.3.0` and the brokers' failure kinds through the host: a
//! 0.3.0 plugin is told the destination's kind, the error text and the kind,
//! and its answer is used; a 0.1.0 or 0.2.0 plugin is never asked about a kind
//! its version cannot name, so the built-in decides those alone.

use super::conformance::samples;
use super::tests::{TENANT, facts, fixture, module, policy};
use super::*;
use crate::destination::DestinationKind;
use crate::plugin_runtime::engine::Decide;
use crate::policy::{
    BuiltinPolicy, DeadReason, Decision, FailureKind, NextStep, Outcome, RetryDecider, Verdict,
};

/// A 0.3.0 core-module fragment for `prelude.wat` (kept here, beside the only
/// tests that use it). The `attempt` record is 0.2.0's (see
/// `tests/fixtures/plugins/README.md`) with `destination` at 96 (an enum: http
/// 0, rabbitmq 1, nats 2, redis 3, ...) and `error-message` at 100/104; in
/// `outcome` (16), `failure` is discriminant 1 and its kind the byte at 18
/// (auth-refused 7, too-large 9). It retries an auth refusal by RabbitMQ after
/// 30 s, gives up on a message too large with the error text as its reason, and
/// leaves everything else to the built-in.
const BROKER_0_3: &str = r#"
  (func (export "hookgate:policy/decide@0.3.0#decide") (param $a i32) (result i32)
    (if (i32.eq (i32.load8_u offset=16 (local.get $a)) (i32.const 1))
      (then
        (if (i32.and
              (i32.eq (i32.load8_u offset=18 (local.get $a)) (i32.const 7))
              (i32.eq (i32.load8_u offset=96 (local.get $a)) (i32.const 1)))
          (then
            (drop (call $verdict (i32.const 1)))
            (drop (call $after_ms (i64.const 30000)))
            (return (i32.const 16))))
        (if (i32.eq (i32.load8_u offset=18 (local.get $a)) (i32.const 9))
          (then
            (drop (call $give_up
              (i32.load offset=100 (local.get $a))
              (i32.load offset=104 (local.get $a))))
            (drop (call $delay_default))
            (return (i32.const 16))))))
    (drop (call $verdict (i32.const 3)))
    (drop (call $delay_default))
    (i32.const 16))
"#;

const LIMIT: usize = 512 * 1024;

fn broker_module() -> Vec<u8> {
    let text = format!("(module\n{}\n{BROKER_0_3})", fixture("prelude.wat"));
    wat::parse_str(text).unwrap()
}

/// A host with the 0.3.0 fixture as `broker`, 0.2.0's `once_0_2` as `once` and
/// 0.1.0's `seeded` as `seeded` (both of which always retry, on their own delay).
fn host() -> PluginHost {
    let host = PluginHost::new(LIMIT).unwrap();
    // Which path a decision takes must not depend on how busy the machine is.
    host.set_inline_time(std::time::Duration::from_secs(60));
    host.load(TENANT, "broker", &broker_module()).unwrap();
    host.load(TENANT, "once", &module("once_0_2", "")).unwrap();
    host.load(TENANT, "seeded", &module("seeded", "")).unwrap();
    host
}

/// Decides attempt 1 failing with `kind` at `destination`, as the worker would.
async fn decide_failure(
    host: &PluginHost,
    plugin: &str,
    kind: FailureKind,
    destination: DestinationKind,
    error_message: &str,
) -> Decision {
    let outcome = Outcome::Failure(kind);
    let input = PluginInput {
        event_type: "order.paid",
        destination,
        error_message,
        ..PluginInput::default()
    };
    let bound = host.bind(PluginBinding::parse(TENANT, plugin).unwrap(), &input);
    crate::policy::decide(&policy(), &facts(&outcome, 7), Some(&bound)).await
}

fn plugin_runs(host: &PluginHost) -> u64 {
    let paths = host.decision_paths();
    paths.inline + paths.escalated + paths.pool
}

#[tokio::test]
async fn a_0_3_0_plugin_sees_the_destination_the_error_text_and_the_broker_kind() {
    let host = host();
    let version = host
        .installs
        .loaded(TENANT, "broker", None)
        .unwrap()
        .pre
        .version();
    assert_eq!(version, WitVersion::V0_3_0);

    // An auth refusal by RabbitMQ: the plugin's retry after 30 s.
    let refused = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN";
    let d = decide_failure(
        &host,
        "broker",
        FailureKind::AuthRefused,
        DestinationKind::Rabbitmq,
        refused,
    )
    .await;
    assert_eq!(d.decided_by, "plugin:broker@1");
    assert_eq!(
        (d.verdict, d.next),
        (Verdict::Retry, NextStep::RetryAt { delay_ms: 30_000 })
    );

    // The same kind from NATS: the plugin reads the destination and defers.
    let d = decide_failure(
        &host,
        "broker",
        FailureKind::AuthRefused,
        DestinationKind::Nats,
        "authorization violation",
    )
    .await;
    assert_eq!(d.decided_by, "builtin");
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 2_000 });

    // Too large: the plugin gives up with the broker's own words as the reason.
    let too_large = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    let d = decide_failure(
        &host,
        "broker",
        FailureKind::TooLarge,
        DestinationKind::Redis,
        too_large,
    )
    .await;
    assert_eq!(d.decided_by, "plugin:broker@1");
    assert_eq!(
        d.verdict,
        Verdict::GiveUp {
            reason: too_large.into()
        }
    );
    assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp));

    // The error text reaches the plugin cut at 1 KiB, and its reason at 256 bytes.
    let long = "é".repeat(1_000);
    let d = decide_failure(
        &host,
        "broker",
        FailureKind::TooLarge,
        DestinationKind::Redis,
        &long,
    )
    .await;
    assert_eq!(
        d.verdict,
        Verdict::GiveUp {
            reason: "é".repeat(128)
        }
    );

    // A timeout at RabbitMQ is not one the plugin takes: the built-in's.
    let d = decide_failure(
        &host,
        "broker",
        FailureKind::Timeout,
        DestinationKind::Rabbitmq,
        "no confirm within 30000 ms",
    )
    .await;
    assert_eq!(d.decided_by, "builtin");
    assert_eq!(
        host.status(TENANT, "broker").unwrap().consecutive_failures,
        0
    );
}

#[tokio::test]
async fn older_plugins_are_not_asked_about_broker_kinds_but_still_about_timeouts() {
    let host = host();
    let policy = policy();
    for (plugin, version) in [("once", WitVersion::V0_2_0), ("seeded", WitVersion::V0_1_0)] {
        let loaded = host.installs.loaded(TENANT, plugin, None).unwrap();
        assert_eq!(loaded.pre.version(), version);
        for kind in FailureKind::ALL
            .into_iter()
            .filter(|k| k.from_broker_only())
        {
            let runs = plugin_runs(&host);
            let d = decide_failure(&host, plugin, kind, DestinationKind::Rabbitmq, "nope").await;
            let outcome = Outcome::Failure(kind);
            let builtin = BuiltinPolicy.decide(&policy, &facts(&outcome, 7));
            assert_eq!(d, builtin, "{plugin}: {kind:?}");
            assert_eq!(d.decided_by, "builtin", "{plugin}: {kind:?}");
            assert_eq!(plugin_runs(&host), runs, "{plugin} ran for {kind:?}");
        }
        // A kind its version names is still the plugin's, from a broker too.
        for destination in [DestinationKind::Http, DestinationKind::Rabbitmq] {
            let runs = plugin_runs(&host);
            let d = decide_failure(&host, plugin, FailureKind::Timeout, destination, "").await;
            assert_eq!(
                d.decided_by,
                format!("plugin:{plugin}@1"),
                "{destination:?}"
            );
            assert_eq!(plugin_runs(&host), runs + 1, "{plugin}: {destination:?}");
        }
        let status = host.status(TENANT, plugin).unwrap();
        assert_eq!(status.consecutive_failures, 0, "{plugin}");
    }
    // `once` retries after 5 s whatever it is told.
    let d = decide_failure(
        &host,
        "once",
        FailureKind::Timeout,
        DestinationKind::Nats,
        "",
    )
    .await;
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 5_000 });
}

#[test]
fn upload_checks_run_the_broker_samples_for_0_3_0_plugins_only() {
    let host = PluginHost::new(LIMIT).unwrap();
    let checked = host.check(&broker_module()).unwrap();
    assert_eq!(
        (checked.wit, checked.componentized),
        (WitVersion::V0_3_0, true)
    );
    let answer = |name: &str| {
        let sample = checked.conformance.samples.iter().find(|s| s.name == name);
        sample
            .unwrap_or_else(|| panic!("no sample {name}"))
            .answer
            .clone()
    };
    assert_eq!(answer("rabbitmq auth_refused"), "retry, after-ms(30000)");
    assert_eq!(answer("nats not_found"), "use-default, use-default");
    assert_eq!(answer("rabbitmq timeout"), "use-default, use-default");
    // A long reason is shown cut.
    let too_large = answer("redis too_large, 1 KiB error text");
    let shown = format!("ERR {}", "x".repeat(60));
    assert_eq!(too_large, format!("give-up({shown:?}...)"));
    // The plugin read the sample's whole 1 KiB of error text.
    let (name, attempt, retry) = samples()
        .into_iter()
        .find(|(name, _, _)| name.starts_with("redis too_large"))
        .unwrap();
    let pre = host
        .sandbox
        .prepare(&prepare(&broker_module(), LIMIT).unwrap().component)
        .unwrap();
    let (run, _) = host.sandbox.run_measured(
        &pre,
        &Decide {
            attempt: pre.attempt(attempt).unwrap(),
            builtin_retry: retry,
        },
    );
    let reason = format!("ERR {}", "x".repeat(1_020));
    assert_eq!(
        run.unwrap().verdict,
        bindings::Verdict::GiveUp(reason),
        "{name}"
    );

    let older = host.check(&module("tryagain_0_2", "")).unwrap();
    let broker_only = [
        "auth_refused",
        "not_found",
        "too_large",
        "throttled",
        "rejected",
    ];
    let names: Vec<&str> = older
        .conformance
        .samples
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| broker_only.iter().any(|k| n.contains(k))),
        "{names:?}"
    );
    assert!(names.contains(&"rabbitmq timeout"), "{names:?}");
    let skipped = checked.conformance.samples.len() - names.len();
    assert_eq!(skipped, 6, "{names:?}");

    // A 0.3.0 component is taken as is and still detected, from its exports.
    let component = prepare(&broker_module(), LIMIT).unwrap().component;
    let again = host.check(&component).unwrap();
    assert_eq!(
        (again.wit, again.componentized),
        (WitVersion::V0_3_0, false)
    );
}
