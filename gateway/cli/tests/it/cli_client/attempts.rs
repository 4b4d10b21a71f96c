//! `attempts list|show` from the command line: a failed then delivered
//! delivery lists its two attempts (filtered by outcome and status class), and
//! one shows the request headers it sent, the sensitive one masked.

use super::field_of;
use crate::common::{ADMIN, CliClient, Gateway, RawReceiver, wait_until};

/// The answer status of each listed attempt.
fn statuses(list: &serde_json::Value) -> Vec<u64> {
    let items = list["data"].as_array().unwrap().iter();
    items.map(|a| a["status"].as_u64().unwrap()).collect()
}

#[test]
fn attempts_are_listed_filtered_and_shown_with_their_headers() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    // A 503 then a 200: one retry, then delivered.
    let rx = RawReceiver::start(&[503, 200]);
    let ep = acme.create_endpoint(
        &rx.url,
        "--header x-api-key=cli-secret-9 --header x-team=ops --sensitive-header x-api-key \
         --policy '{\"base_ms\":50,\"jitter\":\"none\"}'",
    );
    acme.ok("events send --tenant acme --type order.paid --data {}");
    let all = wait_until("two attempts", || {
        let list = acme.ok("attempts list --tenant acme --json").json();
        (field_of(&list, "id").len() == 2).then_some(list)
    });
    let human = acme.ok("attempts list --tenant acme");
    assert_eq!(human.line("read "), "read 2 stored attempts");
    let retried = acme
        .ok("attempts list --tenant acme --outcome retry --json")
        .json();
    assert_eq!(statuses(&retried), vec![503], "{retried}");
    let ok = acme
        .ok(&format!(
            "attempts list --tenant acme --endpoint {ep} --status-class 2xx --json"
        ))
        .json();
    assert_eq!(statuses(&ok), vec![200], "{ok}");
    let id = field_of(&all, "id").pop().unwrap();
    let shown = acme.ok(&format!("attempts show --tenant acme {id}"));
    assert!(
        shown.stdout.contains("x-api-key: ********"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("x-team: ops"), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("webhook-signature: v1,"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("cli-secret-9"), "{}", shown.stdout);
    acme.fails(
        "attempts list --tenant acme --since yesterday",
        2,
        "--since",
    );
    acme.fails(
        "attempts show --tenant acme atm_01KBX0000000000000000000AB",
        1,
        "attempt not found",
    );
}
