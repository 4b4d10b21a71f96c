//! How an endpoint's stats read in human output (`hookgate endpoints stats`):
//! its deliveries by state, the totals over the range, and a table of the
//! latest buckets that had attempts, oldest of them first.

use serde_json::Value;

use super::table::{Table, cell, key_values, millis};

/// A percentile as the API gives it (the upper bound of its latency slot).
fn percentile(v: &Value) -> String {
    v.as_u64().map_or_else(|| "-".to_owned(), millis)
}

/// `n (d delivered, f failed)`, with the share delivered when there were any.
fn attempts(counts: &Value) -> String {
    let n = counts["attempts"].as_u64().unwrap_or(0);
    let delivered = counts["delivered"].as_u64().unwrap_or(0);
    let mut text = format!(
        "{n} ({delivered} delivered, {} failed",
        cell(&counts["failed"])
    );
    if n > 0 {
        text.push_str(&format!(
            ", {:.1}% delivered",
            delivered as f64 * 100.0 / n as f64
        ));
    }
    text.push(')');
    text
}

/// The stats answer `v`, with at most `last` buckets listed.
pub(super) fn render_stats(v: &Value, last: usize) -> String {
    let totals = &v["totals"];
    let seconds = v["bucket_seconds"].as_u64().unwrap_or(0);
    let mut out = key_values(&[
        ("endpoint", cell(&v["endpoint_id"])),
        (
            "range",
            format!(
                "{} to {} ({} buckets)",
                cell(&v["since"]),
                cell(&v["until"]),
                millis(seconds * 1_000)
            ),
        ),
        ("pending", cell(&v["states"]["pending"])),
        ("dead", cell(&v["states"]["dead"])),
        ("attempts", attempts(totals)),
        (
            "latency",
            format!(
                "p50 {}, p99 {} (upper bounds of latency slots)",
                percentile(&totals["p50_ms"]),
                percentile(&totals["p99_ms"])
            ),
        ),
    ]);
    let active: Vec<&Value> = v["buckets"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter(|b| b["attempts"].as_u64() > Some(0))
                .collect()
        })
        .unwrap_or_default();
    out.push('\n');
    if active.is_empty() {
        out.push_str("no attempts in this range\n");
        return out;
    }
    let mut table = Table::new(&["BUCKET", "ATTEMPTS", "DELIVERED", "FAILED", "P50", "P99"]);
    let shown = &active[active.len().saturating_sub(last)..];
    for b in shown {
        table.row(vec![
            cell(&b["start"]),
            cell(&b["attempts"]),
            cell(&b["delivered"]),
            cell(&b["failed"]),
            percentile(&b["p50_ms"]),
            percentile(&b["p99_ms"]),
        ]);
    }
    out.push_str(&table.render());
    if shown.len() < active.len() {
        out.push_str(&format!(
            "{} earlier buckets with attempts: see --buckets or --json\n",
            active.len() - shown.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bucket(start: &str, attempts: u64, delivered: u64, p50: Option<u64>) -> Value {
        json!({"start": start, "attempts": attempts, "delivered": delivered,
            "failed": attempts - delivered, "p50_ms": p50, "p99_ms": p50})
    }

    #[test]
    fn totals_and_the_latest_buckets_with_attempts_are_shown() {
        let v = json!({
            "endpoint_id": "ep_1", "bucket_seconds": 300,
            "since": "2026-12-04T10:00:00.000Z", "until": "2026-12-04T10:20:00.000Z",
            "states": {"pending": 2, "dead": 1},
            "totals": {"attempts": 8, "delivered": 6, "failed": 2, "p50_ms": 20, "p99_ms": 2000},
            "buckets": [
                bucket("2026-12-04T10:00:00.000Z", 3, 3, Some(5)),
                bucket("2026-12-04T10:05:00.000Z", 0, 0, None),
                bucket("2026-12-04T10:10:00.000Z", 4, 2, Some(20)),
                bucket("2026-12-04T10:15:00.000Z", 1, 1, Some(2000)),
            ]
        });
        let text = render_stats(&v, 2);
        let expected = "\
endpoint:  ep_1
range:     2026-12-04T10:00:00.000Z to 2026-12-04T10:20:00.000Z (5m buckets)
pending:   2
dead:      1
attempts:  8 (6 delivered, 2 failed, 75.0% delivered)
latency:   p50 20ms, p99 2s (upper bounds of latency slots)

BUCKET                    ATTEMPTS  DELIVERED  FAILED  P50   P99
2026-12-04T10:10:00.000Z  4         2          2       20ms  20ms
2026-12-04T10:15:00.000Z  1         1          0       2s    2s
1 earlier buckets with attempts: see --buckets or --json
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_range_without_attempts_says_so() {
        let v = json!({
            "endpoint_id": "ep_1", "bucket_seconds": 300,
            "since": "a", "until": "b", "states": {"pending": 0, "dead": 0},
            "totals": {"attempts": 0, "delivered": 0, "failed": 0, "p50_ms": null, "p99_ms": null},
            "buckets": [bucket("a", 0, 0, None)]
        });
        let text = render_stats(&v, 12);
        assert!(
            text.contains("attempts:  0 (0 delivered, 0 failed)\n"),
            "{text}"
        );
        assert!(text.contains("latency:   p50 -, p99 -"), "{text}");
        assert!(text.ends_with("\nno attempts in this range\n"), "{text}");
    }
}
