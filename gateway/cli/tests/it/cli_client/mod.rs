//! The command-line client against a real gateway: every subcommand family the API
//! supports (human output, exit codes, `--json`), `verify` on a request the gateway
//! signed, an unreachable gateway, a three-attempt timeline, and routes not there yet.
//! The plugin commands with a real plugin are in `plugins`, the DLQ's time range and
//! summary across tenants in `dlq`, an endpoint's stats in `endpoint_stats`.

use crate::common::{
    ADMIN, CliClient, CliRun, Gateway, RawReceiver, cli_words, run_cli, wait_until,
};
use serde_json::{Value, json};

mod attempts;
mod destinations;
mod dlq;
mod endpoint_stats;
mod event_types;
mod operator_endpoints;
mod plugins;
mod portal_sessions;
mod signature;
mod verify;

/// Runs a command line without a gateway or token.
fn local(line: &str, stdin: &[u8]) -> CliRun {
    run_cli(&[], &cli_words(line), stdin)
}

/// The `field` of every item of a list answer.
/// The body of a raw HTTP/1.1 request.
pub(super) fn body_of(request: &[u8]) -> Vec<u8> {
    let at = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a request head");
    request[at + 4..].to_vec()
}

fn field_of(reply: &Value, field: &str) -> Vec<String> {
    let items = reply["data"].as_array().unwrap().iter();
    items
        .map(|d| d[field].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tenants_and_endpoints_round_trip_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);

    let run = admin.ok("tenants create acme");
    assert_eq!(run.line("created tenant"), "created tenant acme");
    assert!(run.line("api key: hgk_").len() > 20);
    let beta = admin.create_tenant("beta");
    admin.fails(
        "tenants create acme",
        1,
        "conflict: tenant acme already exists",
    );
    admin.fails("tenants create Bad!", 1, "invalid id:");
    let list = admin.ok("tenants list");
    assert!(list.line("TENANT").ends_with("CREATED"));
    assert!(list.line("acme ").len() > 10 && list.line("beta ").len() > 10);
    assert_eq!(
        field_of(&admin.ok("tenants list --json").json(), "id").len(),
        2
    );
    let wrong = "the token is missing or wrong: set HOOKGATE_TOKEN or --token";
    CliClient::new(&gw.base, "hgk_wrong").fails("tenants list", 1, wrong);
    CliClient::new(&gw.base, "").fails("tenants list", 1, wrong);
    beta.fails("tenants list", 1, "GET /v1/tenants needs the admin token");
    let rotated = beta.ok("tenants rotate-key beta");
    assert!(
        rotated
            .stdout
            .starts_with("new api key for tenant beta: hgk_")
    );
    beta.fails("tenants rotate-key beta", 1, wrong);
    let key = admin.ok("tenants rotate-key acme --json").json()["api_key"].clone();
    let acme = CliClient::new(&gw.base, key.as_str().unwrap());

    let flags = "--event-type order.* --event-type refund.* --description 'for orders' \
        --policy '{\"preset\":\"svix\"}' --max-in-flight 4 --timeout-ms 5000 --rate-limit 10";
    let full = acme
        .ok(&format!(
            "endpoints create --tenant acme --endpoint-url http://127.0.0.1:9/a --json {flags}"
        ))
        .json();
    assert_eq!(full["event_types"], json!(["order.*", "refund.*"]));
    assert_eq!(full["description"], "for orders");
    assert_eq!(full["policy"], json!({"preset": "svix"}));
    let numbers = ["max_in_flight", "timeout_ms", "rate_limit_per_s"].map(|f| full[f].as_u64());
    assert_eq!(numbers, [Some(4), Some(5000), Some(10)]);
    assert!(full["secret"].as_str().unwrap().starts_with("whsec_"));
    let ep = full["id"].as_str().unwrap();
    let run = acme.ok("endpoints create --tenant acme --endpoint-url http://127.0.0.1:9/b");
    assert!(run.line("created endpoint ep_").len() > 20);
    assert!(run.line("signing secret: whsec_").len() > 20);

    let list = acme.ok("endpoints list --tenant acme");
    assert!(list.line("ENDPOINT").contains("EVENT TYPES"));
    let row: Vec<&str> = list.line(ep).split_whitespace().collect();
    let expected = [
        "http://127.0.0.1:9/a",
        "order.*,refund.*",
        "enabled",
        "closed",
    ];
    assert_eq!(row[1..5], expected);
    let listed = acme.ok("endpoints list --tenant acme --json").json();
    assert_eq!(field_of(&listed, "id").len(), 2);
    let show = acme.ok(&format!("endpoints show --tenant acme {ep}"));
    assert!(show.line("url:").ends_with(" http://127.0.0.1:9/a"));
    assert!(show.line("rate limit:").ends_with(" 10/s"));

    let update = format!("endpoints update --tenant acme {ep}");
    let run = acme.ok(&format!("{update} --disabled true --description paused"));
    assert!(
        run.line("status:").ends_with(" disabled (manual)"),
        "{}",
        run.stdout
    );
    let after = acme.ok(&format!("{update} --policy null --json")).json();
    assert_eq!(
        (&after["disabled"], &after["description"]),
        (&json!(true), &json!("paused"))
    );
    assert!(after["policy"].is_null(), "{after}");
    acme.fails(&update, 2, "nothing to change");
    acme.fails(&format!("{update} --disabled maybe"), 2, "'maybe'");

    let secret = acme.ok(&format!("endpoints secret --tenant acme {ep}"));
    assert!(secret.line("whsec_").ends_with("never (current)"));
    acme.ok(&format!("endpoints rotate-secret --tenant acme {ep}"));
    let secrets = acme
        .ok(&format!("endpoints secret --tenant acme {ep} --json"))
        .json();
    assert_eq!(secrets["secrets"].as_array().unwrap().len(), 2, "{secrets}");
    // A secret of one's own: it signs from now on; a malformed one is refused.
    let own = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3";
    acme.ok(&format!(
        "endpoints rotate-secret --tenant acme {ep} --secret {own}"
    ));
    let secrets = acme
        .ok(&format!("endpoints secret --tenant acme {ep} --json"))
        .json();
    assert!(secrets.to_string().contains(own), "{secrets}");
    acme.fails(
        &format!("endpoints rotate-secret --tenant acme {ep} --secret whsec_short"),
        1,
        "secret",
    );
    let reset = acme.ok(&format!(
        "endpoints reset-breaker --tenant acme {ep} --json"
    ));
    assert_eq!(reset.json()["breaker"]["state"], "closed");
    acme.fails(
        "endpoints reset-breaker --tenant acme ep_nope",
        1,
        "not found",
    );

    let create = "endpoints create --tenant acme --endpoint-url";
    let blocked = "unless allow_private_subnets lists them (url_blocked)";
    acme.fails(&format!("{create} http://10.0.0.1/x"), 1, blocked);
    let create = format!("{create} http://127.0.0.1:9/ --policy");
    let zero = format!(r#"{create} '{{"max_attempts":0}}'"#);
    acme.fails(&zero, 1, "invalid policy.max_attempts:");
    acme.fails(&format!("{create} {{oops"), 2, "--policy is not valid JSON");
    let missing = format!("{create} @/nonexistent/p.json");
    acme.fails(&missing, 2, "cannot read /nonexistent/p.json");
    let gamma = admin.create_tenant("gamma");
    gamma.fails("endpoints list --tenant acme", 1, "tenant not found");

    let run = acme.ok(&format!("endpoints delete --tenant acme {ep}"));
    assert!(run.stdout.starts_with(&format!("deleted endpoint {ep};")));
    acme.fails(
        &format!("endpoints show --tenant acme {ep}"),
        1,
        "endpoint not found",
    );
}

#[test]
fn events_deliveries_and_the_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let (good, bad) = (RawReceiver::start(&[200]), RawReceiver::start(&[400]));
    let good_ep = acme.create_endpoint(&good.url, "--event-type order.*");
    let bad_ep = acme.create_endpoint(&bad.url, "--event-type order.*");

    let payload = r#"{"n": 1,  "k": "v"}"#;
    let run = acme.ok(&format!(
        "events send --tenant acme --type order.paid --data '{payload}'"
    ));
    let event = run
        .line("accepted event evt_")
        .split(' ')
        .nth(2)
        .unwrap()
        .to_owned();
    assert!(run.line("DELIVERY").ends_with("ENDPOINT"));
    assert!(
        run.stdout.contains(&good_ep) && run.stdout.contains(&bad_ep),
        "{}",
        run.stdout
    );
    assert!(
        good.first().ends_with(payload.as_bytes()),
        "the payload arrives byte for byte"
    );

    let file = dir.path().join("payload.json");
    std::fs::write(&file, "{\"from\":\"file\"}\n").unwrap();
    let file = file.display();
    let send = format!("events send --tenant acme --type order.filed --data @{file} --json");
    let send = format!("{send} --idempotency-key k-1");
    let (first, again) = (acme.ok(&send).json(), acme.ok(&send).json());
    assert_eq!(
        first["id"], again["id"],
        "an idempotent resend creates nothing"
    );
    assert_eq!(first["deliveries"].as_array().unwrap().len(), 2);
    let none = acme.ok("events send --tenant acme --type other --data {}");
    assert!(
        none.stdout.contains("nothing will be delivered"),
        "{}",
        none.stdout
    );
    let send = "events send --tenant acme --type order.x --data";
    acme.fails(&format!("{send} {{bad"), 2, "--data is not valid JSON");
    acme.fails(&format!("{send} @/no/d.json"), 2, "cannot read /no/d.json");
    assert_eq!(acme.run("events send --tenant acme --type order.x").code, 2);

    wait_until("every delivery to finish", || {
        let states = field_of(
            &acme.ok("deliveries list --tenant acme --json").json(),
            "state",
        );
        let done = states.iter().all(|s| s == "succeeded" || s == "dead");
        (states.len() == 4 && done).then_some(())
    });
    let dead = acme.ok("dlq list --tenant acme --json").json();
    assert_eq!(field_of(&dead, "state"), ["dead", "dead"]);
    assert_eq!(field_of(&dead, "endpoint_id"), [bad_ep.as_str(); 2]);
    let dlq = acme.ok("dlq list --tenant acme");
    assert!(dlq.line("DELIVERY").ends_with("NEXT ATTEMPT"));
    let row = dlq.line(&field_of(&dead, "id")[0]);
    let cells = [" dead (give_up) ", " 400 ", " 1 of "];
    assert!(cells.iter().all(|c| row.contains(c)), "{row}");
    let succeeded = format!("deliveries list --tenant acme --endpoint {good_ep} --state succeeded");
    let to_good = acme.ok(&format!("{succeeded} --json")).json();
    assert_eq!(field_of(&to_good, "endpoint_id"), [good_ep.as_str(); 2]);
    let typed = acme
        .ok("dlq list --tenant acme --event-type order.paid --json")
        .json();
    assert_eq!(field_of(&typed, "event_type"), ["order.paid"]);
    let paged = acme.ok("deliveries list --tenant acme --limit 1");
    assert!(paged.line("more: repeat with --cursor ").len() > 30);
    acme.fails(
        "deliveries list --tenant acme --state bogus",
        2,
        "invalid value 'bogus'",
    );

    let shown = acme.ok(&format!("events show --tenant acme {event}"));
    assert!(shown.line("type:").ends_with(" order.paid"));
    assert!(
        shown.line("payload:").ends_with(r#" {"k":"v","n":1}"#),
        "{}",
        shown.stdout
    );
    let dead_line = shown.line(&format!("delivery {}", field_of(&typed, "id")[0]));
    let expected = format!("to {bad_ep}: dead (give_up) after 1 attempt");
    assert!(dead_line.ends_with(&expected), "{dead_line}");
    assert!(
        shown.stdout.contains("succeeded after 1 attempt"),
        "{}",
        shown.stdout
    );
    let timelines = shown.stdout.lines().filter(|l| l.starts_with("ATTEMPT "));
    assert_eq!(timelines.count(), 2);
    let as_json = acme
        .ok(&format!("events show --tenant acme {event} --json"))
        .json();
    assert_eq!(as_json["payload"], json!({"n": 1, "k": "v"}));
    assert_eq!(as_json["deliveries"].as_array().unwrap().len(), 2);
    acme.fails("events show --tenant acme evt_nope", 1, "event not found");
    acme.fails(
        "deliveries show --tenant acme dlv_nope",
        1,
        "delivery not found",
    );

    // Stats: two delivered, two dead.
    wait_until("stats to count every outcome", || {
        let stats = acme.ok("stats --tenant acme --json").json();
        (stats["deliveries"]["dead"] == 2 && stats["deliveries"]["succeeded"] == 2).then_some(())
    });
    let human = acme.ok("stats --tenant acme");
    assert!(
        human.line("success_rate:").ends_with(" 50.0%"),
        "{}",
        human.stdout
    );
    assert!(human.line("dlq_size:").ends_with(" 2"), "{}", human.stdout);
    acme.fails("stats", 1, "GET /v1/stats needs the admin token");

    // The DLQ by reason: a filter, a summary, and a dry run that changes nothing.
    let gave_up = acme
        .ok("dlq list --tenant acme --dead-reason give_up --json")
        .json();
    assert_eq!(field_of(&gave_up, "id"), field_of(&dead, "id"));
    acme.fails(
        "dlq list --tenant acme --dead-reason tired",
        1,
        "dead_reason must be one of",
    );
    let summary = acme.ok("dlq summary --tenant acme");
    assert!(summary.line("dead:").ends_with(" 2"), "{}", summary.stdout);
    assert!(
        summary.line("give_up ").ends_with(" 2"),
        "{}",
        summary.stdout
    );
    assert!(summary.line(&bad_ep).ends_with(" 2"), "{}", summary.stdout);
    let dry = acme.ok("dlq replay --tenant acme --all --dry-run");
    assert!(
        dry.stdout.starts_with("would replay 2 dead deliveries\n"),
        "{}",
        dry.stdout
    );
    let still = acme.ok("dlq list --tenant acme --json").json();
    assert_eq!(field_of(&still, "id"), field_of(&dead, "id"));

    // Replay: a dead delivery starts series 2; a succeeded one needs --force.
    let dead_id = &field_of(&dead, "id")[0];
    let run = acme.ok(&format!("dlq replay --tenant acme {dead_id}"));
    assert!(
        run.stdout
            .starts_with(&format!("replayed delivery {dead_id}: "))
    );
    assert!(
        run.stdout.trim_end().ends_with("(series 2)"),
        "{}",
        run.stdout
    );
    let replay = format!("dlq replay --tenant acme {}", field_of(&to_good, "id")[0]);
    acme.fails(&replay, 1, "add --force (conflict)");
    acme.ok(&format!("{replay} --force"));
    let bulk = format!("dlq replay --tenant acme --all --endpoint {bad_ep} --json");
    assert!(acme.ok(&bulk).json()["replayed"].as_u64() >= Some(1));
}

#[test]
fn deliveries_show_prints_a_three_attempt_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let flaky = RawReceiver::start(&[503, 503, 200]);
    acme.create_endpoint(&flaky.url, r#"--policy '{"jitter":"none","base_ms":100}'"#);
    let sent = acme
        .ok("events send --tenant acme --type flaky --data {} --json")
        .json();
    let id = sent["deliveries"][0]["id"].as_str().unwrap();
    let show = format!("deliveries show --tenant acme {id}");
    let d = wait_until("three attempts", || {
        let d = acme.ok(&format!("{show} --json")).json();
        (d["state"] == "succeeded").then_some(d)
    });
    assert_eq!(d["attempt_log"].as_array().unwrap().len(), 3, "{d}");
    assert_eq!(flaky.count(), 3);
    let max = d["max_attempts"].as_u64().unwrap();

    let run = acme.ok(&show);
    assert!(
        run.line("state:").ends_with(" succeeded after 3 attempts"),
        "{}",
        run.stdout
    );
    let header = run
        .line("ATTEMPT")
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let columns = [
        "ATTEMPT", "STARTED", "TOOK", "STATUS", "ERROR", "VERDICT", "DELAY",
    ];
    let columns = [&columns[..], &["DECIDED BY", "NEXT ATTEMPT"]].concat();
    assert_eq!(header.collect::<Vec<_>>(), columns);
    let expect = [
        ("503", "retry", "100ms"),
        ("503", "retry", "200ms"),
        ("200", "delivered", "-"),
    ];
    for (n, (status, verdict, delay)) in expect.into_iter().enumerate() {
        let line = run.line(&format!("{} of {max} ", n + 1));
        // n, "of", N, started, took, status, error, verdict, delay, decided by, next attempt
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cells[5..10],
            [status, "-", verdict, delay, "builtin"],
            "{line}"
        );
        let next = d["attempt_log"][n]["next_attempt_at"]
            .as_str()
            .unwrap_or("-");
        assert_eq!(cells[10], next, "{line}");
    }
}

#[test]
fn an_unreachable_gateway_exits_3_naming_the_url() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    let run = CliClient::new(&base, ADMIN).fails("tenants list", 3, &format!("{base}/v1/tenants"));
    assert!(
        run.stderr
            .starts_with("error: cannot reach the gateway at "),
        "{}",
        run.stderr
    );
    let by_flag = local(
        &format!("events show --tenant acme evt_1 --url {base}"),
        b"",
    );
    assert_eq!(by_flag.code, 3);
    let url = format!("{base}/v1/tenants/acme/events/evt_1");
    assert!(by_flag.stderr.contains(&url), "{}", by_flag.stderr);
    CliClient::new("not a url", ADMIN).fails("tenants list", 2, "is not an http(s) URL");
}

#[test]
fn plugin_commands_reach_the_plugin_api() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    admin.create_tenant("acme");
    let listed = admin.ok("plugin list --tenant acme --json");
    assert_eq!(listed.json()["data"], serde_json::json!([]));
    // An empty core module is refused by the upload checks, with the check named.
    let wasm = dir.path().join("policy.wasm");
    std::fs::write(&wasm, b"\0asm\x01\0\0\0").unwrap();
    let upload = format!("plugin upload --tenant acme retry {}", wasm.display());
    admin.fails(&upload, 1, "check ");
    admin.fails("plugin rollback --tenant acme retry", 1, "check the id");
    admin.fails(
        "plugin upload --tenant acme retry /no/p.wasm",
        2,
        "cannot read /no/p.wasm",
    );
}

#[test]
fn help_documents_exit_codes_and_completions_generate() {
    for line in [
        "tenants --help",
        "endpoints create --help",
        "dlq replay --help",
    ] {
        let run = local(line, b"");
        assert_eq!(run.code, 0);
        assert!(
            run.stdout.contains("Exit codes:\n  0  success\n  1  "),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains("\n  3  the gateway could not be reached"),
            "{line}"
        );
    }
    let verify_help = local("verify --help", b"");
    assert!(
        verify_help.stdout.contains("0  the signature is valid"),
        "{}",
        verify_help.stdout
    );
    for shell in ["bash", "zsh", "fish"] {
        let run = local(&format!("completions {shell}"), b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("rotate-key") && run.stdout.contains("deliveries"));
    }
    let usage = local("dlq replay --tenant acme", b"");
    assert_eq!(usage.code, 2);
    assert!(usage.stderr.contains("<ID|--all>"), "{}", usage.stderr);
    let quoted = cli_words(r#"a  'b c' '{"x": 1}' ''"#);
    assert_eq!(quoted, ["a", "b c", r#"{"x": 1}"#, ""]);
}

#[test]
fn tenants_are_shown_updated_and_deleted_with_their_task_followed() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin
        .ok("tenants create acme --name 'Acme Corp' --uid cus_42 --metadata plan=pro --json")
        .json();
    assert_eq!(
        (acme["name"].as_str(), acme["uid"].as_str()),
        (Some("Acme Corp"), Some("cus_42"))
    );
    let shown = admin.ok("tenants show cus_42");
    assert_eq!(shown.line("tenant "), "tenant acme");
    assert_eq!(shown.line("name:"), "name: Acme Corp");
    assert_eq!(shown.line("  plan:"), "  plan: pro");
    let updated = admin
        .ok("tenants update acme --name Acme --clear-uid --remove-metadata plan --metadata tier=1 --json")
        .json();
    assert_eq!(
        (
            updated["name"].as_str(),
            &updated["uid"],
            &updated["metadata"]
        ),
        (Some("Acme"), &Value::Null, &json!({"tier": "1"}))
    );
    let row: Vec<String> = admin
        .ok("tenants list")
        .line("acme ")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(row[..3], ["acme", "Acme", "-"]);
    admin.fails("tenants update acme", 2, "nothing to change");
    admin.fails(
        "tenants update acme --metadata novalue",
        2,
        "--metadata takes NAME=VALUE",
    );
    admin.fails("tenants update acme --uid 'has space'", 1, "uid");

    let deleting = admin.ok("tenants delete acme");
    assert!(
        deleting.stdout.starts_with("deleting tenant acme:"),
        "{}",
        deleting.stdout
    );
    let task = deleting
        .line("follow it with: hookgate tasks show ")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    assert!(task.starts_with("task_"), "{task}");
    let done = wait_until("the delete to finish", || {
        let t = admin.ok(&format!("tasks show {task} --json")).json();
        (t["state"] != "running").then_some(t)
    });
    assert_eq!(done["state"], "finished", "{done}");
    let shown = admin.ok(&format!("tasks show {task}"));
    assert_eq!(shown.line("state:"), "state: finished");
    let list = admin.ok("tasks list");
    assert!(
        list.line(&task).contains("tenant_delete"),
        "{}",
        list.stdout
    );
    admin.fails("tenants show acme", 1, "tenant not found");
    admin.fails("tenants delete acme", 1, "tenant not found");
}

#[test]
fn events_are_listed_and_an_endpoint_recovered_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let acme = admin.create_tenant("acme");
    let ep = acme.create_endpoint("http://127.0.0.1:9/down", "--policy '{\"max_attempts\":1}'");
    for (kind, n) in [("order.paid", 1), ("refund.made", 2), ("order.paid", 3)] {
        acme.ok(&format!(
            "events send --tenant acme --type {kind} --data '{{\"n\":{n}}}'"
        ));
    }
    let list = acme.ok("events list --tenant acme");
    assert!(list.line("EVENT").contains("DELIVERIES"), "{}", list.stdout);
    assert_eq!(list.line("read "), "read 3 stored events");
    let orders = acme
        .ok("events list --tenant acme --type order.* --oldest-first --json")
        .json();
    let payloads: Vec<u64> = orders["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["payload"]["n"].as_u64().unwrap())
        .collect();
    assert_eq!(payloads, [1, 3]);
    let first = acme.ok("events list --tenant acme --limit 1 --json").json();
    let next = first["next_cursor"].as_str().unwrap().to_owned();
    let second = acme
        .ok(&format!(
            "events list --tenant acme --limit 1 --cursor {next} --json"
        ))
        .json();
    assert_eq!(second["data"][0]["payload"]["n"], 2);
    acme.fails(
        "events list --tenant acme --since yesterday",
        2,
        "yesterday",
    );

    let recover = acme.ok(&format!("endpoints recover --tenant acme {ep} --since 1h"));
    let task = recover
        .line("started endpoint_recover task ")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    let done = wait_until("the recovery to finish", || {
        let t = acme
            .ok(&format!("tasks show {task} --tenant acme --json"))
            .json();
        (t["state"] != "running").then_some(t)
    });
    assert_eq!(done["state"], "finished", "{done}");
    let missing = acme.ok(&format!(
        "endpoints replay-missing --tenant acme {ep} --since 1h --json"
    ));
    assert_eq!(missing.json()["kind"], "replay_missing");
    acme.fails(
        &format!("endpoints recover --tenant acme {ep}"),
        2,
        "--since",
    );
    acme.fails(
        "endpoints recover --tenant acme ep_nope --since 1h",
        1,
        "not found",
    );
}
