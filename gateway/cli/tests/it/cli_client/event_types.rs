//! `event-types` and `endpoints send-example` from the command line: the admin
//! creates a validating type and imports more from an OpenAPI document; a
//! tenant reads the catalog, is refused a payload the schema does not accept,
//! and sends a type's example to its endpoint; archiving hides a type from the
//! list; a tenant cannot write.

use serde_json::json;

use super::{body_of, field_of};
use crate::common::{ADMIN, CliClient, Gateway, RawReceiver};

#[test]
fn the_catalog_is_written_imported_read_and_an_example_sent() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    admin.ok(
        "event-types create order.paid --description 'An order was paid' --group orders \
         --schema '{\"type\":\"object\",\"required\":[\"amount\"]}' \
         --example '{\"amount\":250}' --validate",
    );
    let shown = acme.ok("event-types show order.paid");
    assert!(
        shown.stdout.contains("flags: validating"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("example: {\"amount\":250}"),
        "{}",
        shown.stdout
    );
    acme.fails(
        "events send --tenant acme --type order.paid --data {}",
        1,
        "amount",
    );
    acme.fails("event-types create x.y", 1, "admin token");
    admin.fails(
        "event-types create a.b --schema '{\"type\":\"objekt\"}'",
        1,
        "schema",
    );
    admin.fails("event-types create a.b --schema 'not json'", 2, "--schema");

    let doc = dir.path().join("webhooks.json");
    let openapi = json!({
        "openapi": "3.1.0", "info": {"title": "shop", "version": "1"},
        "webhooks": {"invoice.sent": {"post": {
            "summary": "An invoice was sent",
            "requestBody": {"content": {"application/json": {"example": {"invoice": "i-1"}}}}
        }}}
    });
    std::fs::write(&doc, openapi.to_string()).unwrap();
    let imported = admin.ok(&format!("event-types import {}", doc.display()));
    assert_eq!(imported.line("created: "), "created: invoice.sent");
    let again = admin.ok(&format!("event-types import {}", doc.display()));
    assert_eq!(again.line("unchanged: "), "unchanged: invoice.sent");
    let list = acme.ok("event-types list --json").json();
    assert_eq!(field_of(&list, "name"), ["invoice.sent", "order.paid"]);

    admin.ok("event-types update invoice.sent --data '{\"archived\": true}'");
    let list = acme.ok("event-types list --json").json();
    assert_eq!(field_of(&list, "name"), ["order.paid"]);
    let all = acme.ok("event-types list --include-archived");
    assert!(all.stdout.contains("archived"), "{}", all.stdout);

    let rx = RawReceiver::start(&[200]);
    let ep = acme.create_endpoint(&rx.url, "--event-type other.*");
    let sent = acme.ok(&format!(
        "endpoints send-example --tenant acme {ep} --event-type order.paid"
    ));
    assert!(sent.stdout.contains("as a test"), "{}", sent.stdout);
    let body: serde_json::Value = serde_json::from_slice(&body_of(&rx.first())).unwrap();
    assert_eq!(body, json!({"amount": 250}));
    acme.fails(
        &format!("endpoints send-example --tenant acme {ep} --event-type invoice.sent"),
        1,
        "archived",
    );

    admin.ok("event-types delete invoice.sent");
    acme.fails("event-types show invoice.sent", 1, "not found");
}
