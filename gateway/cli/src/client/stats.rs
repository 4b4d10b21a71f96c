//! `hookgate stats [--tenant T]`: delivery statistics for the whole gateway (admin
//! token) or one tenant. A gateway without the stats routes says so plainly.

use clap::Args;
use http::Method;
use serde_json::Value;

use super::Session;
use super::api_client::ApiRequest;
use super::error::CliError;
use super::table::{cell, key_values};

/// Which statistics to show.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// One tenant's statistics; without it, the whole gateway's (admin token).
    #[arg(long)]
    tenant: Option<String>,
}

/// Runs `stats`.
///
/// # Errors
/// Any [`CliError`] from the API, and "not supported yet" from a gateway without stats.
pub(super) async fn run(s: &Session, args: StatsArgs) -> Result<(), CliError> {
    let req = match &args.tenant {
        Some(t) => ApiRequest::new(Method::GET, &["tenants", t, "stats"]),
        None => ApiRequest::new(Method::GET, &["stats"]),
    };
    let reply = s.send(req).await.map_err(|e| e.feature("stats"))?;
    s.show(&reply, render);
    Ok(())
}

/// Every leaf of the stats object as `a.b: value`, sorted by key.
fn render(v: &Value) -> String {
    let mut pairs = Vec::new();
    flatten("", v, &mut pairs);
    let borrowed: Vec<(&str, String)> =
        pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    key_values(&borrowed)
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, child, out);
            }
        }
        leaf => out.push((prefix.to_owned(), leaf_text(prefix, leaf))),
    }
}

/// Rates as percentages, latencies in milliseconds, other numbers as sent.
fn leaf_text(key: &str, v: &Value) -> String {
    match v.as_f64() {
        Some(rate) if key.ends_with("_rate") => format!("{:.1}%", rate * 100.0),
        Some(x) if key.starts_with("avg_") => format!("{x:.2}"),
        _ if key.contains("latency_ms") && !v.is_null() => format!("{}ms", cell(v)),
        _ => cell(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_stats_flatten_to_dotted_keys() {
        let text = render(&json!({"success_rate": 0.5, "avg_attempts": 1.5,
            "latency_ms": {"p95": 12, "p99": ">60000"}, "retry_rate": null}));
        let expected = "avg_attempts:    1.50\nlatency_ms.p95:  12ms\nlatency_ms.p99:  >60000ms\n\
            retry_rate:      -\nsuccess_rate:    50.0%\n";
        assert_eq!(text, expected);
    }
}
