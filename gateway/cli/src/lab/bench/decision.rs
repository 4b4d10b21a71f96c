//! The `decision` scenario: how long one retry decision takes with a plugin
//! bound, through the whole decision chain (input record, decision pool, fresh
//! store, instantiate, `decide` (or 0.1.0's `classify` and `next-delay`)),
//! against the built-in alone.
//! Decisions run one at a time, so the figures are latencies, not throughput.

use std::time::Instant;

use anyhow::Context as _;

use super::{Common, median, quantile};
use hookgate_server::policy::wasm::{PluginBinding, PluginHost, PluginInput};
use hookgate_server::policy::{AttemptFacts, EffectivePolicy, Outcome};

/// Latencies in µs of `n` decisions, sorted; `binding` selects the plugin, if any.
async fn decide_n(
    host: &PluginHost,
    binding: Option<&PluginBinding<'_>>,
    n: usize,
) -> anyhow::Result<Vec<f64>> {
    let policy = EffectivePolicy::default_preset();
    let outcome = Outcome::Status(503);
    let body = br#"{"error":"try_again"}"#;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let facts = AttemptFacts {
            outcome: &outcome,
            attempt: 1,
            first_attempt_at_ms: 1_000,
            now_ms: 1_010,
            retry_after: None,
            date: None,
            prev_delay_ms: None,
            seed: i as u64,
        };
        let input = PluginInput {
            headers: None,
            body,
            event_type: "bench.event",
        };
        let t = Instant::now();
        let plugin = binding.map(|b| host.bind(*b, &input));
        let decision = hookgate_server::policy::decide(&policy, &facts, plugin.as_ref()).await;
        out.push(t.elapsed().as_secs_f64() * 1e6);
        if binding.is_some() && !decision.decided_by.starts_with("plugin:") {
            anyhow::bail!("decision {i} fell back: {}", decision.decided_by);
        }
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// `hookgate bench decision --plugin FILE`.
pub(super) async fn decision(c: &Common, file: &std::path::Path) -> anyhow::Result<()> {
    let host = PluginHost::new(2 << 20)?;
    host.load_file("bench", "policy", file)
        .with_context(|| format!("loading {}", file.display()))?;
    let binding = PluginBinding::parse("bench", "policy").context("the binding")?;
    let n = if c.smoke { 200 } else { 20_000 };
    println!(
        "| run | decisions | plugin p50 µs | plugin p99 µs | built-in p50 µs | built-in p99 µs |"
    );
    println!("|---|---|---|---|---|---|");
    let (mut p50s, mut p99s) = (Vec::new(), Vec::new());
    for run in 1..=c.runs {
        // Warm the instance slot and the caches before measuring.
        decide_n(&host, Some(&binding), n / 10).await?;
        let plugin = decide_n(&host, Some(&binding), n).await?;
        let builtin = decide_n(&host, None, n).await?;
        let (p50, p99) = (quantile(&plugin, 0.5), quantile(&plugin, 0.99));
        println!(
            "| {run} | {n} | {p50:.1} | {p99:.1} | {:.1} | {:.1} |",
            quantile(&builtin, 0.5),
            quantile(&builtin, 0.99)
        );
        p50s.push(p50);
        p99s.push(p99);
    }
    println!(
        "| median | {n} | {:.1} | {:.1} | | |",
        median(p50s),
        median(p99s)
    );
    Ok(())
}
