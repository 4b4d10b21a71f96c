//! `hookgate endpoints stats`: the endpoint's states, totals and latest buckets
//! with attempts as a table, the API's answer unchanged with `--json`, a bad
//! time refused before any request and an unknown endpoint named.

use crate::common::{ADMIN, CliClient, Gateway, wait_until};

#[test]
fn endpoint_stats_show_states_totals_and_the_buckets_with_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[("HOOKGATE_STATS__FLUSH_MS", "50")]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    let ep = acme.create_endpoint("http://127.0.0.1:9/down", "--policy '{\"max_attempts\":1}'");
    for n in 0..3 {
        acme.ok(&format!(
            "events send --tenant acme --type order.paid --data '{{\"n\":{n}}}'"
        ));
    }
    // Each attempt fails to connect; with one attempt allowed, each delivery dies.
    let stats = wait_until("three attempts counted, their deliveries dead", || {
        let v = acme
            .ok(&format!("endpoints stats --tenant acme {ep} --json"))
            .json();
        (v["totals"]["attempts"] == 3 && v["states"]["dead"] == 3).then_some(v)
    });
    assert_eq!(
        (&stats["endpoint_id"], &stats["totals"]["failed"]),
        (&serde_json::json!(ep), &serde_json::json!(3)),
        "{stats}"
    );
    let active: Vec<&serde_json::Value> = stats["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["attempts"].as_u64() > Some(0))
        .collect();

    let shown = acme.ok(&format!("endpoints stats --tenant acme {ep} --since 1h"));
    assert_eq!(shown.line("endpoint:"), format!("endpoint:  {ep}"));
    assert_eq!(shown.line("pending:"), "pending:   0");
    assert_eq!(shown.line("dead:"), "dead:      3");
    assert_eq!(
        shown.line("attempts:"),
        "attempts:  3 (0 delivered, 3 failed, 0.0% delivered)"
    );
    assert!(shown.line("BUCKET").ends_with("P99"), "{}", shown.stdout);
    for b in &active {
        let start = b["start"].as_str().unwrap();
        let row: Vec<String> = shown
            .line(start)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let counts = [&b["attempts"], &b["delivered"], &b["failed"]].map(|n| n.to_string());
        assert_eq!(row[1..4], counts, "{}", shown.stdout);
    }

    acme.fails(
        &format!("endpoints stats --tenant acme {ep} --since yesterday"),
        2,
        "yesterday",
    );
    acme.fails("endpoints stats --tenant acme ep_nope", 1, "not found");
}
