//! The `decision` scenario: how long one retry decision takes with a plugin
//! bound, through the whole decision chain (input record, fresh store,
//! instantiate, `decide`, or 0.1.0's `classify` and `next-delay`), against the
//! built-in alone. Each run measures the plugin twice: as the gateway runs it (inline on the caller
//! first) and sent straight to the decision pool, the path every decision took
//! before inline runs. Decisions run one at a time, so the figures are
//! latencies, not throughput.

use std::time::Instant;

use anyhow::Context as _;

use super::{Common, median, quantile};
use hookgate_server::{AttemptFacts, EffectivePolicy, Outcome};
use hookgate_server::{PluginBinding, PluginHost, PluginInput};

/// Latencies in µs of `n` decisions, sorted; `binding` selects the plugin, if any.
pub(super) async fn decide_n(
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
            ..PluginInput::default()
        };
        let t = Instant::now();
        let plugin = binding.map(|b| host.bind(*b, &input));
        let decision = hookgate_server::decide(&policy, &facts, plugin.as_ref()).await;
        out.push(t.elapsed().as_secs_f64() * 1e6);
        if binding.is_some() && !decision.decided_by.starts_with("plugin:") {
            anyhow::bail!("decision {i} fell back: {}", decision.decided_by);
        }
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// Which way `bench decision` runs the plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecisionPath {
    /// Inline first, as the gateway runs it.
    Inline,
    /// Straight on the decision pool.
    Pool,
    /// Both, one after the other.
    Both,
}

/// p50 and p99 of `n` decisions with the plugin, inline first or not; `None`
/// when `path` leaves that way out.
async fn plugin_quantiles(
    host: &PluginHost,
    binding: &PluginBinding<'_>,
    n: usize,
    inline_first: bool,
    path: DecisionPath,
) -> anyhow::Result<Option<(f64, f64)>> {
    let wanted = match path {
        DecisionPath::Both => true,
        DecisionPath::Inline => inline_first,
        DecisionPath::Pool => !inline_first,
    };
    if !wanted {
        return Ok(None);
    }
    host.set_inline_first(inline_first);
    let latencies = decide_n(host, Some(binding), n).await;
    host.set_inline_first(true);
    let latencies = latencies?;
    Ok(Some((
        quantile(&latencies, 0.5),
        quantile(&latencies, 0.99),
    )))
}

/// A cell of the table: the value, or `-` for a way left out.
fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

/// `hookgate bench decision --plugin FILE [--path WAY]`.
pub(super) async fn decision(
    c: &Common,
    file: &std::path::Path,
    path: DecisionPath,
) -> anyhow::Result<()> {
    let host = PluginHost::new(2 << 20)?;
    host.load_file("bench", "policy", file)
        .with_context(|| format!("loading {}", file.display()))?;
    let binding = PluginBinding::parse("bench", "policy").context("the binding")?;
    let n = if c.smoke { 200 } else { 20_000 };
    println!(
        "| run | decisions | plugin p50 µs | plugin p99 µs | pool only p50 µs | pool only p99 µs | built-in p50 µs | built-in p99 µs |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut medians = [const { Vec::new() }; 4];
    for run in 1..=c.runs {
        // Warm the instance slot and the caches before measuring.
        decide_n(&host, Some(&binding), n / 10).await?;
        let inline = plugin_quantiles(&host, &binding, n, true, path).await?;
        let pool = plugin_quantiles(&host, &binding, n, false, path).await?;
        let builtin = decide_n(&host, None, n).await?;
        let row = [
            inline.map(|q| q.0),
            inline.map(|q| q.1),
            pool.map(|q| q.0),
            pool.map(|q| q.1),
        ];
        println!(
            "| {run} | {n} | {} | {} | {} | {} | {:.1} | {:.1} |",
            cell(row[0]),
            cell(row[1]),
            cell(row[2]),
            cell(row[3]),
            quantile(&builtin, 0.5),
            quantile(&builtin, 0.99)
        );
        for (all, value) in medians.iter_mut().zip(row) {
            all.extend(value);
        }
    }
    let [a, b, p, q] = medians.map(|all| (!all.is_empty()).then(|| median(all)));
    println!(
        "| median | {n} | {} | {} | {} | {} | | |",
        cell(a),
        cell(b),
        cell(p),
        cell(q)
    );
    let paths = host.decision_paths();
    println!(
        "\nplugin decisions: {} inline, {} escalated, {} straight to the pool",
        paths.inline, paths.escalated, paths.pool
    );
    Ok(())
}
