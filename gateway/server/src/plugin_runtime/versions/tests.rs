//! The `hookgate:policy` versions through the host: detection from export names,
//! the conversions to older versions, and 0.1.0 and 0.2.0 WAT fixtures deciding
//! side by side (0.3.0 and the broker kinds: `plugin_runtime/broker_tests.rs`).

use super::super::bindings::Outcome as WitOutcome;
use super::super::bindings::v0_1::exports::hookgate::policy::decide as wit_0_1;
use super::super::bindings::v0_2::exports::hookgate::policy::decide as wit_0_2;
use super::super::chain::CallFailure;
use super::super::conformance::samples;
use super::super::tests::{facts, module, policy};
use super::*;
use crate::plugin_runtime::engine::Decide;
use crate::plugin_runtime::{PluginBinding, PluginError, PluginHost, PluginInput};
use crate::policy::{DeadReason, Decision, NextStep, Outcome, Verdict as HostVerdict};

const TENANT: &str = "acme";
const LIMIT: usize = 512 * 1024;

async fn decide(host: &PluginHost, name: &str, status: u16, body: &[u8]) -> Decision {
    let outcome = Outcome::Status(status);
    let input = PluginInput {
        headers: None,
        body,
        event_type: "test.event",
        ..PluginInput::default()
    };
    let bound = host.bind(PluginBinding::parse(TENANT, name).unwrap(), &input);
    crate::policy::decide(&policy(), &facts(&outcome, 7), Some(&bound)).await
}

#[test]
fn the_version_comes_from_export_names_the_newest_first() {
    let v1 = "hookgate:policy/decide@0.1.0#classify";
    let v2 = "hookgate:policy/decide@0.2.0#decide";
    let v3 = "hookgate:policy/decide@0.3.0#decide";
    assert_eq!(WitVersion::of_core_exports(&[v1]), Some(WitVersion::V0_1_0));
    assert_eq!(WitVersion::of_core_exports(&[v2]), Some(WitVersion::V0_2_0));
    assert_eq!(WitVersion::of_core_exports(&[v3]), Some(WitVersion::V0_3_0));
    assert_eq!(
        WitVersion::of_core_exports(&[v1, v2]),
        Some(WitVersion::V0_2_0)
    );
    assert_eq!(
        WitVersion::of_core_exports(&[v2, v3, v1]),
        Some(WitVersion::V0_3_0)
    );
    assert_eq!(WitVersion::of_core_exports(&["memory", "classify"]), None);
    assert_eq!(
        WitVersion::of_component_exports(&["hookgate:policy/decide@0.1.0"]),
        Some(WitVersion::V0_1_0)
    );
    assert_eq!(
        WitVersion::of_component_exports(&["hookgate:policy/decide@0.3.0"]),
        Some(WitVersion::V0_3_0)
    );
    assert_eq!(
        WitVersion::of_component_exports(&["hookgate:policy/decide@0.4.0"]),
        None
    );
    let names: Vec<String> = WitVersion::ALL.iter().map(|v| v.package()).collect();
    assert_eq!(
        names,
        [
            "hookgate:policy@0.3.0",
            "hookgate:policy@0.2.0",
            "hookgate:policy@0.1.0",
            "hookgate:transform@0.1.0"
        ]
    );
    assert_eq!(
        WitVersion::of_core_exports(&["hookgate:transform/transform@0.1.0#transform"]),
        Some(WitVersion::Transform0_1_0)
    );
    assert_eq!(WitVersion::Transform0_1_0.world_name(), "transform-plugin");
    assert_eq!(WitVersion::V0_2_0.world_name(), "plugin");
    assert_eq!(WitVersion::V0_3_0.world(), "hookgate:policy/plugin@0.3.0");
    assert_eq!(WitVersion::V0_3_0.functions(), ["decide"]);
}

#[test]
fn a_0_2_0_delay_counts_only_when_the_final_verdict_is_retry() {
    let decision = |verdict| wit_0_2::Decision {
        verdict,
        delay: wit_0_2::Delay::AfterMs(9_000),
    };
    let retry = answer_0_2(decision(wit_0_2::Verdict::Retry), false);
    assert_eq!(
        (retry.verdict, retry.delay),
        (Verdict::Retry, Some(Delay::AfterMs(9_000)))
    );
    let gave_up = answer_0_2(decision(wit_0_2::Verdict::GiveUp("no".into())), true);
    assert_eq!(
        (gave_up.verdict, gave_up.delay),
        (Verdict::GiveUp("no".into()), None)
    );
    let default = |builtin_retry| answer_0_2(decision(wit_0_2::Verdict::UseDefault), builtin_retry);
    assert_eq!(default(true).delay, Some(Delay::AfterMs(9_000)));
    assert_eq!(default(false).delay, None);
}

/// What an attempt converted to an older version must keep, field by field.
macro_rules! assert_carried {
    ($name:expr, $a:expr, $b:expr, $wit:ident) => {{
        let (name, a, b) = ($name, $a, $b);
        let outcome = match a.outcome {
            WitOutcome::Status(s) => $wit::Outcome::Status(s),
            WitOutcome::Failure(FailureKind::Timeout) => {
                $wit::Outcome::Failure($wit::FailureKind::Timeout)
            }
            WitOutcome::Failure(FailureKind::Connect) => {
                $wit::Outcome::Failure($wit::FailureKind::Connect)
            }
            WitOutcome::Failure(other) => panic!("{name}: {other:?} should not convert"),
        };
        assert_eq!(b.outcome, outcome, "{name}");
        assert_eq!(
            (b.attempt, b.max_attempts, b.elapsed_ms, b.retry_after_ms),
            (a.attempt, a.max_attempts, a.elapsed_ms, a.retry_after_ms),
            "{name}"
        );
        assert_eq!((&b.headers, &b.body), (&a.headers, &a.body), "{name}");
        assert_eq!(
            (&b.event_type, b.builtin_delay_ms, b.seed),
            (&a.event_type, a.builtin_delay_ms, a.seed),
            "{name}"
        );
        let retry = matches!(b.builtin_verdict, $wit::Verdict::Retry);
        assert_eq!(retry, a.builtin_verdict == Verdict::Retry, "{name}");
    }};
}

#[test]
fn older_versions_get_every_field_they_have_and_no_broker_kind() {
    let mut broker = 0;
    for (name, a, _) in samples() {
        let broker_only = matches!(
            a.outcome,
            WitOutcome::Failure(
                FailureKind::AuthRefused
                    | FailureKind::NotFound
                    | FailureKind::TooLarge
                    | FailureKind::Throttled
                    | FailureKind::Rejected
            )
        );
        let (v1, v2) = (attempt_0_1(a.clone()), attempt_0_2(a.clone()));
        if broker_only {
            broker += 1;
            assert!(v1.is_none() && v2.is_none(), "{name}: no name for its kind");
            continue;
        }
        assert_carried!(&name, &a, v1.unwrap(), wit_0_1);
        assert_carried!(&name, &a, v2.unwrap(), wit_0_2);
    }
    assert!(broker >= 5, "the samples hold every broker kind: {broker}");
}

#[tokio::test]
async fn both_versions_decide_through_the_host_and_name_the_plugin() {
    let host = PluginHost::new(LIMIT).unwrap();
    for name in ["tryagain", "tryagain_0_2"] {
        host.load(TENANT, name, &module(name, "")).unwrap();
        let d = decide(&host, name, 400, br#"{"error":"try_again"}"#).await;
        assert_eq!(d.decided_by, format!("plugin:{name}@1"));
        assert_eq!(
            (d.verdict, d.next),
            (HostVerdict::Retry, NextStep::RetryAt { delay_ms: 1_000 }),
            "{name}"
        );
        let d = decide(&host, name, 400, br#"{"error":"bad_request"}"#).await;
        assert_eq!(d.decided_by, "builtin", "{name}: use-default both times");
        assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp), "{name}");
    }
    let version = |name: &str| {
        host.installs
            .loaded(TENANT, name, None)
            .unwrap()
            .pre
            .version()
    };
    assert_eq!(version("tryagain"), WitVersion::V0_1_0);
    assert_eq!(version("tryagain_0_2"), WitVersion::V0_2_0);
}

#[tokio::test]
async fn a_0_2_0_decision_calls_decide_exactly_once() {
    // `once_0_2` traps on a second call in one instance, and exports no
    // `classify` or `next-delay`: a plugin decision from it is one `decide`.
    let host = PluginHost::new(LIMIT).unwrap();
    host.load(TENANT, "once", &module("once_0_2", "")).unwrap();
    for status in [500, 503, 400] {
        let d = decide(&host, "once", status, b"").await;
        assert_eq!(d.decided_by, "plugin:once@1", "{status}");
        assert_eq!(d.next, NextStep::RetryAt { delay_ms: 5_000 }, "{status}");
    }
    // The fixture does catch a second call: in a reused instance it traps.
    let plugin = host.installs.loaded(TENANT, "once", None).unwrap();
    let attempts: Vec<_> = samples()
        .into_iter()
        .map(|(_, a, r)| Decide {
            attempt: plugin.pre.attempt(a).unwrap(),
            builtin_retry: r,
        })
        .take(2)
        .collect();
    let reused = host.sandbox.run_reused(&plugin.pre, &attempts);
    assert!(
        matches!(&reused, Err((1, CallFailure::Trap(_)))),
        "{reused:?}"
    );
    // Which is why upload refuses it: conformance runs the samples again in one
    // reused instance.
    let err = host.check(&module("once_0_2", "")).unwrap_err();
    assert_eq!(err.check(), Some("9 conformance"), "{err}");
}

#[test]
fn upload_checks_pass_a_0_2_0_module_and_say_its_version() {
    let host = PluginHost::new(LIMIT).unwrap();
    let checked = host.check(&module("tryagain_0_2", "")).unwrap();
    assert_eq!(
        (checked.wit, checked.componentized),
        (WitVersion::V0_2_0, true)
    );
    let try_again = checked
        .conformance
        .samples
        .iter()
        .find(|s| s.name.contains("try_again"))
        .unwrap();
    assert_eq!(try_again.answer, "retry, after-ms(1000)");
    assert_eq!(
        host.check(&module("tryagain", "")).unwrap().wit,
        WitVersion::V0_1_0
    );
    // A 0.2.0 component is taken as is and still detected, from its exports.
    let component = crate::plugin_runtime::prepare(&module("tryagain_0_2", ""), LIMIT)
        .unwrap()
        .component;
    let again = host.check(&component).unwrap();
    assert_eq!(
        (again.wit, again.componentized),
        (WitVersion::V0_2_0, false)
    );
}

#[test]
fn a_module_exporting_both_versions_is_made_a_0_2_0_plugin() {
    let tryagain_0_1 = std::fs::read_to_string(format!(
        "{}/../../tests/fixtures/plugins/tryagain.wat",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let both = module("tryagain_0_2", &tryagain_0_1);
    let checked = PluginHost::new(LIMIT).unwrap().check(&both);
    assert_eq!(checked.map(|c| c.wit).ok(), Some(WitVersion::V0_2_0));
}

#[test]
fn plugins_exporting_neither_version_are_refused_naming_both() {
    let host = PluginHost::new(LIMIT).unwrap();
    let refusal = |bytes: &[u8]| host.check(bytes).unwrap_err();
    let memory_only = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
    let err = refusal(&memory_only);
    assert_eq!(err.check(), Some("4 componentize"));
    let message = err.to_string();
    for name in [
        "hookgate:policy/decide@0.3.0#decide",
        "hookgate:policy/decide@0.2.0#decide",
        "hookgate:policy/decide@0.1.0#classify",
    ] {
        assert!(message.contains(name), "{message}");
    }
    let err = refusal(&wat::parse_str("(component)").unwrap());
    assert!(
        matches!(&err, PluginError::Exports(m) if m == "it exports nothing"),
        "{err}"
    );
    let message = err.to_string();
    for name in [
        "hookgate:policy/decide@0.3.0",
        "hookgate:policy/decide@0.2.0",
        "hookgate:policy/decide@0.1.0",
    ] {
        assert!(message.contains(name), "{message}");
    }
    // A 0.2.0 `decide` of the wrong type does not fit its world.
    let bad_types = r#"(module (memory (export "memory") 1) (func (export "hookgate:policy/decide@0.2.0#decide") (param i64) (result i64) local.get 0) (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 0))"#;
    let err = refusal(&wat::parse_str(bad_types).unwrap());
    assert_eq!(err.check(), Some("4 componentize"), "{err}");
}
