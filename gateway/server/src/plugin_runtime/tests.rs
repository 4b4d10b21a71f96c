//! The plugin host against real (hostile and well-behaved) plugins, written in WAT
//! under `tests/fixtures/plugins/` and loaded through the host's own path.

use super::host::BoundPlugin;
use super::*;
use crate::policy::{
    AttemptFacts, DeadReason, Decision, EffectivePolicy, Jitter, NextStep, Outcome, RetryDecider,
    Strategy, Verdict,
};

pub(super) const TENANT: &str = "acme";
const START_MS: u64 = 1_614_297_600_000;

pub(super) fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/plugins/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fixture fragment wrapped with the prelude, as core-module bytes.
pub(super) fn module(name: &str, extra: &str) -> Vec<u8> {
    let text = format!(
        "(module\n{}\n{}\n{extra})",
        fixture("prelude.wat"),
        fixture(&format!("{name}.wat"))
    );
    wat::parse_str(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub(super) fn host(plugins: &[&str]) -> PluginHost {
    let host = PluginHost::new(512 * 1024).unwrap();
    // Which path a decision takes must not depend on how busy the machine is.
    host.set_inline_time(std::time::Duration::from_secs(60));
    for name in plugins {
        host.load(TENANT, name, &module(name, ""))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    host
}

pub(super) fn policy() -> EffectivePolicy {
    EffectivePolicy {
        strategy: Strategy::Fixed { base_ms: 2_000 },
        jitter: Jitter::None,
        max_delay_ms: 60_000,
        ..EffectivePolicy::default_preset()
    }
}

pub(super) fn facts(outcome: &Outcome, seed: u64) -> AttemptFacts<'_> {
    AttemptFacts {
        outcome,
        attempt: 1,
        first_attempt_at_ms: START_MS,
        now_ms: START_MS + 100,
        retry_after: None,
        date: None,
        prev_delay_ms: None,
        seed,
    }
}

pub(super) async fn decide_with(
    host: &PluginHost,
    spec: &str,
    status: u16,
    body: &[u8],
) -> Decision {
    let outcome = Outcome::Status(status);
    let binding = PluginBinding::parse(TENANT, spec).unwrap();
    let input = PluginInput {
        headers: None,
        body,
        event_type: "test.event",
        ..PluginInput::default()
    };
    let bound = host.bind(binding, &input);
    crate::policy::decide(&policy(), &facts(&outcome, 7), Some(&bound)).await
}

#[test]
fn core_modules_become_components_of_the_host_world() {
    let prepared = prepare(&module("tryagain", ""), 512 * 1024).unwrap();
    assert!(prepared.componentized);
    assert!(wasmparser::Parser::is_component(&prepared.component));
    assert_eq!(prepared.sha256.len(), 64);
    // A module's own component-type sections are stripped, never trusted.
    let lying = module(
        "tryagain",
        r#"(@custom "component-type:mine" "not metadata")"#,
    );
    PluginHost::new(512 * 1024)
        .unwrap()
        .load(TENANT, "lying", &lying)
        .unwrap();
    // A component is taken as is.
    let again = prepare(&prepared.component, 512 * 1024).unwrap();
    assert!(!again.componentized);
    assert_eq!(again.component, prepared.component);
}

#[test]
fn plugins_importing_anything_are_refused_at_load() {
    let host = host(&[]);
    let wasi_module = wat::parse_str(fixture("wasi.wat")).unwrap();
    let err = host.load(TENANT, "wasi", &wasi_module).unwrap_err();
    assert!(
        matches!(&err, PluginError::Imports(i) if i.contains("wasi_snapshot_preview1")),
        "{err}"
    );
    let wasi_component = wat::parse_str(fixture("wasi_component.wat")).unwrap();
    let err = host.load(TENANT, "wasi", &wasi_component).unwrap_err();
    assert!(
        matches!(&err, PluginError::Imports(i) if i.contains("wasi:random/random")),
        "{err}"
    );
    assert!(host.resolve(TENANT, "wasi").is_none());
}

#[test]
fn plugins_starting_beyond_the_memory_limit_are_refused_at_load() {
    // 257 pages is one past 16 MiB.
    let text = fixture("tryagain.wat");
    let big = format!(
        "(module\n{}\n{text})",
        fixture("prelude.wat").replace(
            r#"(memory (export "memory") 1)"#,
            r#"(memory (export "memory") 257)"#
        )
    );
    let err = host(&[])
        .load(TENANT, "big", &wat::parse_str(big).unwrap())
        .unwrap_err();
    // The pooling allocator already refuses it at compile; the resources check backs it.
    assert!(
        matches!(err, PluginError::Compile(_) | PluginError::Resources(_)),
        "{err}"
    );
    assert!(err.to_string().contains("memory"), "{err}");
}

#[tokio::test]
async fn hostile_plugins_fall_back_with_their_reason() {
    let cases = [
        ("loop", "out_of_fuel"),
        ("memory_bomb", "memory_limit"),
        ("trap", "trap"),
        ("unreachable", "trap"),
        ("invalid_output", "invalid_output"),
    ];
    let host = host(&cases.map(|(name, _)| name));
    let builtin = crate::policy::BuiltinPolicy.decide(&policy(), &facts(&Outcome::Status(500), 7));
    for (name, reason) in cases {
        let d = decide_with(&host, name, 500, b"").await;
        // On a loaded machine the epoch deadline (the backstop) can stop a loop
        // before its fuel runs out; either way it falls back.
        let backstop = name == "loop" && d.decided_by == "fallback:epoch_deadline";
        if !backstop {
            assert_eq!(d.decided_by, format!("fallback:{reason}"), "{name}");
        }
        assert_eq!(
            (&d.verdict, d.next),
            (&builtin.verdict, builtin.next),
            "{name}"
        );
        let status = host.status(TENANT, name).unwrap();
        // A starved epoch deadline does not count toward disabling; one the loop
        // spent on the CPU would, so the backstop leaves either count.
        assert!(!status.disabled, "{name}");
        if !backstop {
            assert_eq!(status.consecutive_failures, 1, "{name}");
        }
    }
    // The host keeps serving: a well-behaved plugin in the same engine still decides.
    host.load(TENANT, "seeded", &module("seeded", "")).unwrap();
    let d = decide_with(&host, "seeded", 500, b"").await;
    assert_eq!(d.decided_by, "plugin:seeded@1");
}

#[tokio::test]
async fn an_epoch_deadline_spent_spinning_counts_toward_disabling() {
    // Fuel normally stops a loop long before the deadline; without it, the epoch
    // deadline (5 ticks of 10 ms) is the backstop. The loop spends it on the CPU,
    // so it counts (issue 18 item 3); starvation would not (see `chain_tests`).
    // A low threshold: the loop's thread counts as spinning on however busy a
    // machine; the production threshold is tested with injected numbers.
    let spinning = std::time::Duration::from_millis(5);
    let host = PluginHost::with_limits(512 * 1024, u64::MAX / 2, 2, 2, spinning).unwrap();
    host.load(TENANT, "loop", &module("loop", "")).unwrap();
    let mut deadlines = 0;
    // A generous bound: on a very busy machine some deadlines may still be starved.
    while !host.status(TENANT, "loop").unwrap().disabled && deadlines < 2_000 {
        let d = decide_with(&host, "loop", 503, b"").await;
        assert_eq!(d.decided_by, "fallback:epoch_deadline");
        deadlines += 1;
    }
    let status = host.status(TENANT, "loop").unwrap();
    assert!(status.disabled, "{deadlines} deadlines: {status:?}");
    assert!(deadlines >= DISABLE_AFTER_FAILURES, "{deadlines}");
    assert_eq!(
        decide_with(&host, "loop", 503, b"").await.decided_by,
        "fallback:disabled"
    );
}

#[tokio::test]
async fn an_absurd_delay_is_clamped_to_max_delay() {
    let host = host(&["absurd_delay"]);
    let d = decide_with(&host, "absurd_delay", 500, b"").await;
    assert_eq!(d.decided_by, "plugin:absurd_delay@1");
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 60_000 });
}

#[tokio::test]
async fn a_plugin_retries_a_400_that_says_try_again() {
    let host = host(&["tryagain"]);
    let d = decide_with(&host, "tryagain", 400, br#"{"error":"try_again"}"#).await;
    assert_eq!(d.decided_by, "plugin:tryagain@1");
    assert_eq!(
        (d.verdict, d.next),
        (Verdict::Retry, NextStep::RetryAt { delay_ms: 1_000 })
    );
    let d = decide_with(&host, "tryagain", 400, br#"{"error":"bad_request"}"#).await;
    assert_eq!(d.decided_by, "builtin", "use-default both times");
    assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp));
}

#[tokio::test]
async fn a_give_up_reason_comes_through() {
    let host = host(&["giveup"]);
    let d = decide_with(&host, "giveup", 503, b"").await;
    assert_eq!(d.decided_by, "plugin:giveup@1");
    assert_eq!(
        d.verdict,
        Verdict::GiveUp {
            reason: "no thanks".into()
        }
    );
    assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp));
}

#[tokio::test]
async fn the_same_attempt_and_seed_give_the_same_decision() {
    let host = host(&["seeded"]);
    let outcome = Outcome::Status(502);
    let binding = PluginBinding::parse(TENANT, "seeded").unwrap();
    let input = PluginInput::default();
    let run = |seed| {
        let f = facts(&outcome, seed);
        let (host, binding, input) = (&host, &binding, &input);
        async move { host.decide(binding, &policy(), &f, input).await }
    };
    let (first, second) = (run(123_456).await, run(123_456).await);
    assert_eq!(first, second);
    assert_eq!(
        first.next,
        NextStep::RetryAt {
            delay_ms: 1_000 + 123_456 % 60_000
        }
    );
    assert_ne!(run(777).await, first);
}

#[tokio::test]
async fn twenty_counted_failures_disable_a_plugin() {
    let host = host(&["trap", "seeded"]);
    for i in 1..=DISABLE_AFTER_FAILURES {
        let d = decide_with(&host, "trap", 500, b"").await;
        assert_eq!(d.decided_by, "fallback:trap", "failure {i}");
    }
    let status = host.status(TENANT, "trap").unwrap();
    assert!(status.disabled);
    assert_eq!(status.consecutive_failures, DISABLE_AFTER_FAILURES);
    let d = decide_with(&host, "trap", 500, b"").await;
    assert_eq!(d.decided_by, "fallback:disabled");
    // Other plugins are untouched.
    assert!(!host.status(TENANT, "seeded").unwrap().disabled);
    assert_eq!(
        decide_with(&host, "seeded", 500, b"").await.decided_by,
        "plugin:seeded@1"
    );
}

#[tokio::test]
async fn the_host_alone_decides_2xx_and_410_and_unbound_endpoints() {
    let host = host(&["unreachable"]);
    let ok = decide_with(&host, "unreachable", 200, b"").await;
    assert_eq!(
        (ok.decided_by.as_str(), ok.next),
        ("builtin", NextStep::Done)
    );
    let gone = decide_with(&host, "unreachable", 410, b"").await;
    assert_eq!(gone.decided_by, "builtin");
    assert_eq!(gone.next, NextStep::Dead(DeadReason::EndpointDisabled));
    assert_eq!(
        host.status(TENANT, "unreachable")
            .unwrap()
            .consecutive_failures,
        0
    );
    let outcome = Outcome::Status(500);
    let unbound =
        crate::policy::decide::<BoundPlugin<'_>>(&policy(), &facts(&outcome, 1), None).await;
    assert_eq!(unbound.decided_by, "builtin");
    let missing = decide_with(&host, "unreachable@2", 500, b"").await;
    assert_eq!(missing.decided_by, "fallback:not_loaded");
}

#[test]
fn bindings_name_a_plugin_and_maybe_a_version() {
    let host = host(&["seeded", "seeded"]);
    assert_eq!(host.resolve(TENANT, "seeded"), Some(("seeded".into(), 2)));
    assert_eq!(host.resolve(TENANT, "seeded@1"), Some(("seeded".into(), 1)));
    assert_eq!(host.resolve(TENANT, "seeded@3"), None);
    assert_eq!(host.resolve("other", "seeded"), None);
    assert_eq!(host.status(TENANT, "seeded").unwrap().version, 2);
    assert_eq!(host.version_status(TENANT, "seeded", 1).unwrap().version, 1);
    for bad in ["", "@1", "x@", "x@0", "x@one", "x@-1"] {
        assert_eq!(PluginBinding::parse(TENANT, bad), None, "{bad:?}");
    }
    assert_eq!(
        PluginBinding::parse(TENANT, "p@12"),
        Some(PluginBinding {
            tenant: TENANT,
            name: "p",
            version: Some(12)
        })
    );
}
