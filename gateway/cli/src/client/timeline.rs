//! A delivery as people read it: its state in one line and its attempt log as a
//! timeline table (attempt n of N, status, error, delay, `decided_by`, next attempt).

use serde_json::Value;

use super::table::{Table, cell, key_values, millis};

/// "n of N", with `?` when the delivery's endpoint (and so its policy) is gone.
fn n_of(n: &Value, max: &Value) -> String {
    let max = max
        .as_u64()
        .map_or_else(|| "?".to_owned(), |m| m.to_string());
    format!("{} of {max}", cell(n))
}

/// The delivery's state in one line: where it stands and what happens next.
pub(super) fn state_line(d: &Value) -> String {
    let attempts = d["attempts"].as_u64().unwrap_or(0);
    let tries = if attempts == 1 { "attempt" } else { "attempts" };
    let series = match d["series"].as_u64() {
        Some(s) if s > 1 => format!(" (series {s})"),
        _ => String::new(),
    };
    let next = || n_of(&Value::from(attempts + 1), &d["max_attempts"]);
    match d["state"].as_str().unwrap_or("?") {
        "succeeded" => format!("succeeded after {attempts} {tries}{series}"),
        "dead" => format!(
            "dead ({}) after {attempts} {tries}{series}",
            cell(&d["dead_reason"])
        ),
        "in_flight" => format!("in flight: attempt {} is being sent{series}", next()),
        "pending" if d["next_attempt_at"].is_string() => format!(
            "pending: attempt {} at {}{series}",
            next(),
            cell(&d["next_attempt_at"])
        ),
        other => format!("{other} after {attempts} {tries}{series}"),
    }
}

/// The attempt log as a table, oldest first; an empty log says so.
pub(super) fn timeline(d: &Value) -> String {
    let empty = Vec::new();
    let log = d["attempt_log"].as_array().unwrap_or(&empty);
    if log.is_empty() {
        return "no attempts yet\n".to_owned();
    }
    let many_series = log.iter().any(|a| a["series"].as_u64() > Some(1));
    let mut header = vec![
        "ATTEMPT",
        "STARTED",
        "TOOK",
        "STATUS",
        "ERROR",
        "VERDICT",
        "DELAY",
        "DECIDED BY",
        "NEXT ATTEMPT",
    ];
    if many_series {
        header.insert(0, "SERIES");
    }
    let mut table = Table::new(&header);
    for a in log {
        let next = match (&a["next_attempt_at"], &a["dead_reason"]) {
            (Value::String(at), _) => at.clone(),
            (_, Value::String(reason)) => format!("none: dead ({reason})"),
            _ => "-".to_owned(),
        };
        let mut row = vec![
            n_of(&a["attempt"], &d["max_attempts"]),
            cell(&a["started_at"]),
            a["duration_ms"].as_u64().map_or_else(|| "-".into(), millis),
            cell(&a["status"]),
            cell(&a["error_kind"]),
            cell(&a["verdict"]),
            a["delay_ms"].as_u64().map_or_else(|| "-".into(), millis),
            cell(&a["decided_by"]),
            next,
        ];
        if many_series {
            row.insert(0, cell(&a["series"]));
        }
        table.row(row);
    }
    table.render()
}

/// One delivery in full: its fields, its state line, then its timeline.
pub(super) fn render_delivery(d: &Value) -> String {
    let event = format!("{} ({})", cell(&d["event_id"]), cell(&d["event_type"]));
    let mut out = key_values(&[
        ("delivery", cell(&d["id"])),
        ("event", event),
        ("endpoint", cell(&d["endpoint_id"])),
        ("state", state_line(d)),
        ("created", cell(&d["created_at"])),
    ]);
    out.push('\n');
    out.push_str(&timeline(d));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attempt(n: u64, status: u16, verdict: &str, next: Option<&str>) -> Value {
        json!({"series": 1, "attempt": n, "started_at": "2025-01-01T00:00:00.000Z",
               "duration_ms": 3, "status": status, "error_kind": null, "verdict": verdict,
               "delay_ms": next.map(|_| 100), "next_attempt_at": next, "dead_reason": null,
               "decided_by": "builtin"})
    }

    #[test]
    fn three_attempts_read_as_a_timeline() {
        let d = json!({"id": "dlv_1", "event_id": "evt_1", "event_type": "t", "endpoint_id": "ep_1",
        "state": "succeeded", "series": 1, "attempts": 3, "max_attempts": 5,
        "next_attempt_at": null, "created_at": "2025-01-01T00:00:00.000Z",
        "attempt_log": [
            attempt(1, 503, "retry", Some("2025-01-01T00:00:00.103Z")),
            attempt(2, 503, "retry", Some("2025-01-01T00:00:00.206Z")),
            attempt(3, 200, "delivered", None),
        ]});
        let text = render_delivery(&d);
        assert!(text.contains("succeeded after 3 attempts"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("ATTEMPT")).unwrap();
        assert!(lines[header + 1].starts_with("1 of 5"), "{text}");
        assert!(lines[header + 1].contains("503") && lines[header + 1].contains("100ms"));
        assert!(lines[header + 3].starts_with("3 of 5") && lines[header + 3].contains("delivered"));
        let last: Vec<&str> = lines[header + 3].split_whitespace().rev().take(2).collect();
        assert_eq!(last, ["-", "builtin"], "{text}");
    }

    #[test]
    fn dead_and_pending_deliveries_say_what_is_next() {
        let dead = json!({"state": "dead", "attempts": 1, "max_attempts": 1, "dead_reason": "give_up",
            "attempt_log": [{"attempt": 1, "status": 400, "verdict": "give_up", "dead_reason": "give_up",
            "decided_by": "builtin"}]});
        assert_eq!(state_line(&dead), "dead (give_up) after 1 attempt");
        assert!(timeline(&dead).contains("none: dead (give_up)"));
        let pending = json!({"state": "pending", "attempts": 1, "max_attempts": null, "series": 2,
            "next_attempt_at": "2025-01-01T00:00:01.000Z", "attempt_log": []});
        assert_eq!(
            state_line(&pending),
            "pending: attempt 2 of ? at 2025-01-01T00:00:01.000Z (series 2)"
        );
        assert_eq!(timeline(&pending), "no attempts yet\n");
    }
}
