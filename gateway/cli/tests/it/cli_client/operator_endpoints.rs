//! `operator-endpoints` from the command line: the admin adds one for every
//! tenant's events, a tenant one for its own; creating an endpoint is told to
//! both as `endpoint.created`; a name that is no operator event type and a
//! tenant using the admin's list are refused with the API's message; update
//! and delete work on either.

use serde_json::{Value, json};

use super::body_of;
use crate::common::{ADMIN, CliClient, Gateway, RawReceiver, wait_until};

#[test]
fn operator_endpoints_are_managed_and_hear_endpoint_changes() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    let (ops_rx, acme_rx) = (RawReceiver::start(&[200]), RawReceiver::start(&[200]));
    let created = admin
        .ok(&format!(
            "operator-endpoints create --endpoint-url {} --event-type endpoint.* --description on-call --json",
            ops_rx.url
        ))
        .json();
    assert!(
        created["secret"].as_str().unwrap().starts_with("whsec_"),
        "{created}"
    );
    let shown = acme.ok(&format!(
        "operator-endpoints create --tenant acme --endpoint-url {} --event-type endpoint.created",
        acme_rx.url
    ));
    assert!(shown.stdout.contains("secret: whsec_"), "{}", shown.stdout);
    acme.fails("operator-endpoints list", 1, "admin token");
    acme.fails(
        &format!(
            "operator-endpoints create --tenant acme --endpoint-url {} --event-type order.paid",
            acme_rx.url
        ),
        1,
        "names no operator event type",
    );
    let list = acme
        .ok("operator-endpoints list --tenant acme --json")
        .json();
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list["data"][0]["event_types"], json!(["endpoint.created"]));

    let rx = RawReceiver::start(&[200]);
    let ep = acme.create_endpoint(&rx.url, "");
    for receiver in [&ops_rx, &acme_rx] {
        let body: Value = serde_json::from_slice(&body_of(&receiver.first())).unwrap();
        assert_eq!(
            (&body["type"], &body["data"]["endpoint_id"]),
            (&json!("endpoint.created"), &json!(ep)),
            "{body}"
        );
    }

    let id = created["id"].as_str().unwrap();
    let updated = admin.ok(&format!(
        "operator-endpoints update {id} --data '{{\"disabled\": true}}'"
    ));
    assert!(
        updated.stdout.contains("disabled: true"),
        "{}",
        updated.stdout
    );
    admin.ok(&format!("operator-endpoints delete {id}"));
    admin.fails(&format!("operator-endpoints show {id}"), 1, "not found");
    wait_until("the admin's list to empty", || {
        let list = admin.ok("operator-endpoints list --json").json();
        list["data"]
            .as_array()
            .is_some_and(Vec::is_empty)
            .then_some(())
    });
}
