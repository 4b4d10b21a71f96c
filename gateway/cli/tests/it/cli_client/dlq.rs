//! The dead-letter queue by time and across tenants: `dlq replay --all` narrowed by
//! `--since` and `--until` (RFC 3339 times and durations ago), and `dlq summary`
//! without `--tenant` (the admin's, across tenants; a tenant key is told to name one).

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::field_of;
use crate::common::{ADMIN, CliClient, Gateway, RawReceiver, wait_until};

/// Sends one event for `tenant` and waits until the tenant has `dead` dead deliveries.
fn send_until_dead(client: &CliClient, tenant: &str, dead: usize) {
    client.ok(&format!(
        "events send --tenant {tenant} --type order.paid --data {{}}"
    ));
    wait_until("the delivery to die", || {
        let list = client
            .ok(&format!("dlq list --tenant {tenant} --json"))
            .json();
        (field_of(&list, "id").len() == dead).then_some(())
    });
}

#[test]
fn dlq_replay_takes_a_time_range_and_the_admin_summary_spans_tenants() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let (acme, beta) = (admin.create_tenant("acme"), admin.create_tenant("beta"));
    // A 400 is final: each delivery dies on its first attempt.
    let refusing = RawReceiver::start(&[400]);
    let acme_ep = acme.create_endpoint(&refusing.url, "");
    let beta_ep = beta
        .ok(&format!(
            "endpoints create --tenant beta --endpoint-url {} --json",
            refusing.url
        ))
        .json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    send_until_dead(&acme, "acme", 1);
    // Creation times are kept to the millisecond: make the two differ.
    std::thread::sleep(Duration::from_millis(20));
    send_until_dead(&acme, "acme", 2);
    send_until_dead(&beta, "beta", 1);

    // The admin's summary across tenants: by tenant, and each endpoint with its tenant.
    let all = admin.ok("dlq summary --json").json();
    assert_eq!(all["dead"], 3, "{all}");
    let by_tenant = json!([{"tenant_id": "acme", "dead": 2}, {"tenant_id": "beta", "dead": 1}]);
    assert_eq!(all["by_tenant"], by_tenant);
    let first = json!({"tenant_id": "acme", "endpoint_id": acme_ep, "dead": 2});
    assert_eq!(all["by_endpoint"][0], first, "{all}");
    let human = admin.ok("dlq summary");
    let lines: Vec<Vec<&str>> = human
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for expected in [
        &["dead:", "3"][..],
        &["give_up", "3"],
        &["TENANT", "DEAD"],
        &["acme", "2"],
        &["beta", "1"],
        &["TENANT", "ENDPOINT", "DEAD"],
        &["acme", &acme_ep, "2"],
        &["beta", &beta_ep, "1"],
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected:?} in\n{}",
            human.stdout
        );
    }
    // One tenant's summary is as before: no tenant columns.
    let one = acme.ok("dlq summary --tenant acme");
    assert_eq!(one.line("dead:"), "dead: 2");
    assert!(!one.stdout.contains("TENANT"), "{}", one.stdout);
    acme.fails(
        "dlq summary",
        2,
        "dlq summary without --tenant counts every tenant's dead deliveries and needs the \
         admin token; with a tenant key, give --tenant (or set HOOKGATE_TENANT)",
    );
    CliClient::new(&gw.base, "hgk_wrong").fails("dlq summary", 1, "the token is missing or wrong");

    // The range: the newer delivery's creation time splits the two.
    let dead = acme.ok("dlq list --tenant acme --json").json();
    let created = field_of(&dead, "created_at");
    let (newer, older) = (&created[0], &created[1]);
    assert!(older < newer, "{dead}");
    let ids = field_of(&dead, "id");
    let bulk = "dlq replay --tenant acme --all --dry-run";
    let since = acme.ok(&format!("{bulk} --since {newer}"));
    let expected = format!("would replay 1 dead delivery\ncreated at or after {newer}\n");
    assert_eq!(since.stdout, expected);
    let until = acme.ok(&format!("{bulk} --until {newer} --json")).json();
    assert_eq!(
        (&until["replayed"], &until["dry_run"]),
        (&json!(1), &json!(true))
    );
    let both = acme.ok(&format!("{bulk} --since {older} --until {newer} --json"));
    assert_eq!(both.json()["replayed"], 1);

    // Durations are that long before now, sent as the RFC 3339 time they name.
    let hour = acme.ok(&format!("{bulk} --since 1h"));
    assert!(
        hour.stdout.starts_with("would replay 2 dead deliveries\n"),
        "{}",
        hour.stdout
    );
    let at = hour
        .line("created at or after ")
        .rsplit(' ')
        .next()
        .unwrap();
    let at = humantime::parse_rfc3339_weak(at).unwrap();
    let ago = SystemTime::now().duration_since(at).unwrap().as_secs();
    assert!((3600..3660).contains(&ago), "{}", hour.stdout);
    let before = acme.ok(&format!("{bulk} --until 1h --json")).json();
    assert_eq!(before["replayed"], 0);

    // A real replay of the newer one only: it starts series 2, the older stays at 1.
    let run = acme.ok(&format!("dlq replay --tenant acme --all --since {newer}"));
    assert!(
        run.stdout.starts_with("replayed 1 dead delivery\n"),
        "{}",
        run.stdout
    );
    let series = |id: &str| {
        let d = acme
            .ok(&format!("deliveries show --tenant acme {id} --json"))
            .json();
        d["series"].clone()
    };
    assert_eq!((series(&ids[0]), series(&ids[1])), (json!(2), json!(1)));

    // What is neither a time nor a duration stops before any request; what looks
    // like a time goes to the gateway, which judges it.
    let replay = "dlq replay --tenant acme --all";
    for bad in ["yesterday", "7200"] {
        let phrase = format!("invalid value '{bad}' for '--since <TIME>': not an RFC 3339 time");
        acme.fails(&format!("{replay} --since {bad}"), 2, &phrase);
    }
    acme.fails(
        &format!("{replay} --until 2024-13-45T00:00:00Z"),
        1,
        "invalid until: until must be an RFC 3339 time",
    );
    acme.fails("dlq replay --tenant acme --since 1h", 2, "--all");
    let untouched: Value = acme.ok("dlq list --tenant acme --json").json();
    assert!(field_of(&untouched, "id").contains(&ids[1]));
}
