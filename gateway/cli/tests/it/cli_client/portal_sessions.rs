//! `portal-sessions` from the command line: a tenant mints a view-only session
//! with a theme, and one limited to an endpoint and an event type; the
//! view-only session lists endpoints but is refused a write naming the
//! capability it lacks; bad input is the API's message; a revoke ends it.

use crate::common::{ADMIN, CliClient, Gateway, RawReceiver};

#[test]
fn a_session_is_minted_used_within_its_capabilities_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    let rx = RawReceiver::start(&[200]);
    acme.create_endpoint(&rx.url, "");
    let minted = acme
        .ok(
            "portal-sessions create --tenant acme --capability view --expires-in 600 \
             --product-name Acme --accent-color '#0a7cff' --json",
        )
        .json();
    let token = minted["token"].as_str().unwrap();
    assert!(token.starts_with("hgp_"), "{minted}");
    assert!(
        minted["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("#portal={token}"))
    );
    assert_eq!(minted["theme"]["product_name"], "Acme");
    let shown = acme.ok("portal-sessions create --tenant acme");
    assert!(
        shown
            .stdout
            .contains("capabilities: view\nendpoints: all\nevent types: all"),
        "{}",
        shown.stdout
    );
    let id = acme.create_endpoint(&rx.url, "");
    let limited = acme.ok(&format!(
        "portal-sessions create --tenant acme --endpoint {id} --event-type 'order.*'"
    ));
    assert!(
        limited
            .stdout
            .contains(&format!("endpoints: {id}\nevent types: order.*")),
        "{}",
        limited.stdout
    );
    acme.fails(
        "portal-sessions create --tenant acme --endpoint ep_nope",
        1,
        "endpoints[0]",
    );

    let customer = CliClient::new(&gw.base, token);
    let list = customer.ok("endpoints list --tenant acme --json").json();
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2), "{list}");
    customer.fails(
        &format!("endpoints create --tenant acme --endpoint-url {}", rx.url),
        1,
        "lacks the manage_endpoints capability",
    );
    acme.fails(
        "portal-sessions create --tenant acme --expires-in 5",
        1,
        "expires_in_s",
    );
    customer.fails("portal-sessions revoke --tenant acme", 1, "platform's own");

    let revoked = acme.ok("portal-sessions revoke --tenant acme");
    assert!(
        revoked.stdout.contains("revoked 3 portal sessions"),
        "{}",
        revoked.stdout
    );
    customer.fails("endpoints list --tenant acme", 1, "invalid bearer token");
}
