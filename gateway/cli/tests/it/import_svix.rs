//! `hookgate import svix`, against real gateways: an environment export written
//! here (two applications, endpoints with secrets, headers, types, channels, a
//! disabled one, an archived type with a schema beside) is imported, a second run
//! changes nothing, a dry run writes nothing, a changed export updates; what the
//! gateway then holds is read back through the CLI and through the official `svix`
//! Python SDK (`tests/scripts/svix_import_check.py`), and a delivery to an imported
//! endpoint verifies with the original Svix secret. A second gateway's Svix face
//! serves as a running Svix server to import from, the SDK seeing the same
//! applications and endpoints on both. Bad sources fail with one clear line.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{ADMIN, CliClient, CliRun, Gateway, RawReceiver, call, run_cli};

/// The original Svix secrets (`whsec_` and 24 bytes, as Svix makes them; the
/// third without its prefix, which Svix also accepts).
const SECRET_ORDERS: &str = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3";
const SECRET_LEGACY: &str = "whsec_YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4";
const SECRET_BETA: &str = "c3ZpeC1zZWNyZXQtbnVtYmVyLXRocmVl";
const SECRET_ROTATED: &str = "whsec_YS1yb3RhdGVkLXN2aXgtc2VjcmV0LTI0";
const SECRET_SERVER: &str = "whsec_dGhlLXNlcnZlci1zb3VyY2Utc2VjcmV0";

/// The environment export the first test imports.
fn export(receiver: &str) -> Value {
    let stamps = json!({"createdAt": "2024-05-01T12:00:00Z", "updatedAt": "2024-05-02T12:00:00Z"});
    let mut export = json!({
        "version": 1,
        "createdAt": "2024-06-01T00:00:00Z",
        "settings": {"enableChannels": true, "colorPaletteLight": {"primary": "#123456"}},
        "transformationTemplates": [{"name": "slack", "kind": "Slack"}],
        "eventTypes": [
            {"name": "order.paid", "description": "An order was paid", "archived": false,
             "deprecated": false, "groupName": "orders", "featureFlag": "beta",
             "schemas": {"1": {"type": "object", "required": ["amount"],
                               "properties": {"amount": {"type": "integer"}}}}},
            {"name": "user.legacy", "description": "The old user event", "archived": true,
             "deprecated": true, "schemas": null},
        ],
        "applications": [
            {"id": "app_acme01", "uid": "acme", "name": "Acme", "metadata": {"plan": "pro"},
             "throttleRate": null,
             "endpoints": [
                {"id": "ep_2OrdersA", "uid": "orders", "url": receiver,
                 "description": "orders", "filterTypes": ["order.paid"], "channels": ["eu"],
                 "metadata": {"team": "billing"}, "throttleRate": 20, "disabled": false,
                 "secret": SECRET_ORDERS,
                 "headers": {"headers": {"X-Custom": "c1", "X-Api-Key": "k-1"}, "sensitive": []}},
                {"id": "ep_2LegacyB", "url": "http://127.0.0.1:9/legacy", "description": "legacy",
                 "filterTypes": ["user.legacy"], "channels": null, "metadata": {},
                 "disabled": true, "secret": SECRET_LEGACY,
                 "headers": {"headers": {}, "sensitive": ["Authorization"]}},
             ]},
            {"id": "app_2BetaXyZ", "name": "Beta Corp", "metadata": {"region": "eu"},
             "endpoints": [
                {"id": "ep_2BetaC", "uid": "beta-main", "url": "http://127.0.0.1:9/beta",
                 "description": "", "filterTypes": null, "secret": SECRET_BETA,
                 "headers": {"headers": {"Authorization": "Bearer b-1"}, "sensitive": []}},
             ]},
        ],
    });
    for t in export["eventTypes"].as_array_mut().unwrap() {
        t.as_object_mut()
            .unwrap()
            .extend(stamps.as_object().unwrap().clone());
    }
    export
}

/// Runs the SDK check script with `input`; its output, or a panic saying what differs.
fn sdk_check(input: &Value) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/scripts/svix_import_check.py"
    );
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with the svix package (tests/run.sh installs it) is needed");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !said.contains("ModuleNotFoundError"),
        "the svix Python package is needed (tests/run.sh installs it): {said}"
    );
    assert!(out.status.success(), "the SDK check failed: {said}");
    said
}

/// One API call, outside any runtime.
fn http(method: &str, url: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(call(method, url, token, body))
}

/// A captured request as the verifier reads it: its headers and its body.
fn delivery(raw: &[u8], secret: &str) -> Value {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a request head");
    let headers: serde_json::Map<String, Value> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), json!(v.trim())))
        .collect();
    json!({"secret": secret, "headers": headers, "body": body})
}

/// The `summary` of a `--json` report, as `[created, updated, unchanged, skipped,
/// failed]` per kind.
fn summary(run: &CliRun) -> [[u64; 5]; 3] {
    let report = run.json();
    ["event_types", "applications", "endpoints"].map(|kind| {
        ["created", "updated", "unchanged", "skipped", "failed"]
            .map(|o| report["summary"][kind][o].as_u64().unwrap())
    })
}

#[test]
fn an_export_is_imported_once_and_verifies_with_its_svix_secret() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let receiver = RawReceiver::start(&[200]);
    let file = dir.path().join("svix-export.json");
    let mut source = export(&receiver.url);
    std::fs::write(&file, source.to_string()).unwrap();
    let import = format!("import svix --from-file {}", file.display());

    // A dry run reads both sides and writes nothing.
    let dry = admin.ok(&format!("{import} --dry-run"));
    assert!(
        dry.stdout
            .starts_with("dry run: nothing was written; an import would do this\n"),
        "{}",
        dry.stdout
    );
    assert_eq!(
        dry.line("event types:"),
        "event types: 2 to create, 0 to update, 0 unchanged, 0 skipped, 0 failed"
    );
    assert!(dry.line("  would create order.paid").len() > 10);
    let planned = summary(&admin.ok(&format!("{import} --dry-run --json")));
    assert_eq!(planned, [[2, 0, 0, 0, 0], [2, 0, 0, 0, 0], [3, 0, 0, 0, 0]]);
    assert_eq!(admin.ok("tenants list --json").json()["data"], json!([]));
    let types = admin
        .ok("event-types list --include-archived --json")
        .json();
    assert_eq!(types["data"], json!([]));

    // The import creates everything, and says what it left out.
    let run = admin.ok(&import);
    for line in [
        "event types: 2 created, 0 updated, 0 unchanged, 0 skipped, 0 failed",
        "applications: 2 created, 0 updated, 0 unchanged, 0 skipped, 0 failed",
        "endpoints: 3 created, 0 updated, 0 unchanged, 0 skipped, 0 failed",
        "  created app_2BetaXyZ as tenant app_2betaxyz (uid app_2BetaXyZ)",
        "      not imported: featureFlag \"beta\": hookgate has no feature flags",
        "      not imported: header authorization: the source does not give its value",
        "  settings: Svix's environment settings have no place in hookgate",
        "  transformationTemplates (1 entry): hookgate runs no transformations",
    ] {
        assert!(run.stdout.contains(line), "{line:?} not in\n{}", run.stdout);
    }

    // A second run changes nothing.
    let again = summary(&admin.ok(&format!("{import} --json")));
    assert_eq!(again, [[0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 3, 0, 0]]);

    // The gateway holds the same ids, uids and fields.
    let acme = admin.ok("tenants show acme --json").json();
    assert_eq!(
        (&acme["id"], &acme["name"], &acme["metadata"]),
        (
            &json!("app_acme01"),
            &json!("Acme"),
            &json!({"plan": "pro"})
        )
    );
    let beta = admin.ok("tenants show app_2BetaXyZ --json").json();
    assert_eq!(
        (&beta["id"], &beta["uid"]),
        (&json!("app_2betaxyz"), &json!("app_2BetaXyZ"))
    );
    let orders = admin
        .ok("endpoints show --tenant acme orders --json")
        .json();
    assert_eq!(orders["url"], json!(receiver.url));
    assert_eq!(
        [
            &orders["event_types"],
            &orders["channels"],
            &orders["metadata"]
        ],
        [
            &json!(["order.paid"]),
            &json!(["eu"]),
            &json!({"team": "billing"})
        ]
    );
    assert_eq!(orders["rate_limit_per_s"], 20);
    assert_eq!(orders["signature"]["headers"], "both");
    assert_eq!(
        orders["headers"],
        json!({"x-api-key": "********", "x-custom": "c1"})
    );
    let secret = admin
        .ok("endpoints secret --tenant acme orders --json")
        .json();
    assert_eq!(secret["secret"], SECRET_ORDERS);
    let legacy = admin
        .ok("endpoints show --tenant app_acme01 ep_2LegacyB --json")
        .json();
    assert_eq!(
        (&legacy["disabled"], &legacy["uid"]),
        (&json!(true), &json!("ep_2LegacyB"))
    );
    assert_eq!(legacy["event_types"], json!(["user.legacy"]));
    let old_type = admin.ok("event-types show user.legacy --json").json();
    assert_eq!(
        (&old_type["archived"], &old_type["deprecated"]),
        (&json!(true), &json!(true))
    );
    let paid = admin.ok("event-types show order.paid --json").json();
    assert_eq!(paid["group"], "orders");
    assert_eq!(paid["schemas"], source["eventTypes"][0]["schemas"]);
    let beta_secret = admin
        .ok("endpoints secret --tenant app_2betaxyz beta-main --json")
        .json();
    assert_eq!(beta_secret["secret"], format!("whsec_{SECRET_BETA}"));

    // A delivery verifies with the original Svix secret: Svix's own verifier on the
    // svix-* headers, and the CLI's on the webhook-* ones.
    let event = json!({"event_type": "order.paid", "payload": {"amount": 5}, "channels": ["eu"]});
    let (status, sent) = http(
        "POST",
        &format!("{}/v1/tenants/acme/events", gw.base),
        ADMIN,
        Some(event),
    );
    assert_eq!(status, 202, "{sent}");
    let raw = receiver.first();
    let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    assert!(
        text.contains("\r\nsvix-signature: v1,") && text.contains("\r\nwebhook-signature: v1,")
    );
    let captured = dir.path().join("request.http");
    std::fs::write(&captured, &raw).unwrap();
    let verified = run_cli(
        &[],
        &[
            "verify".into(),
            "--secret".into(),
            SECRET_ORDERS.into(),
            captured.display().to_string(),
        ],
        b"",
    );
    assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);

    // The official SDK sees every application and endpoint as the export has them.
    let said = sdk_check(&json!({
        "target": {"url": gw.base, "token": ADMIN},
        "export": source,
        "deliveries": [delivery(&raw, SECRET_ORDERS)],
    }));
    assert!(
        said.contains("checked 2 applications, 3 endpoints, 1 deliveries"),
        "{said}"
    );

    // A changed source: the dry run says what would change and writes nothing;
    // the import then changes it, and the endpoint signs with the rotated secret.
    source["eventTypes"][0]["description"] = json!("An order was paid in full");
    source["applications"][0]["name"] = json!("Acme Inc");
    let ep = &mut source["applications"][0]["endpoints"][0];
    ep["description"] = json!("orders v2");
    ep["metadata"] = json!({"owner": "payments"});
    ep["secret"] = json!(SECRET_ROTATED);
    std::fs::write(&file, source.to_string()).unwrap();
    let dry = admin.ok(&format!("{import} --dry-run --json")).json();
    assert_eq!(dry["summary"]["endpoints"]["updated"], 1, "{dry}");
    assert_eq!(
        dry["endpoints"][0]["changed"],
        json!(["description", "metadata", "secret"])
    );
    assert_eq!(dry["applications"][0]["changed"], json!(["name"]));
    let still = admin
        .ok("endpoints show --tenant acme orders --json")
        .json();
    assert_eq!(still["description"], "orders");
    let updated = summary(&admin.ok(&format!("{import} --json")));
    assert_eq!(updated, [[0, 1, 1, 0, 0], [0, 1, 1, 0, 0], [0, 1, 2, 0, 0]]);
    let shown = admin
        .ok("endpoints show --tenant acme orders --json")
        .json();
    assert_eq!(
        (&shown["description"], &shown["metadata"]),
        (&json!("orders v2"), &json!({"owner": "payments"}))
    );
    let secrets = admin
        .ok("endpoints secret --tenant acme orders --json")
        .json();
    assert_eq!(secrets["secret"], SECRET_ROTATED);
    assert_eq!(secrets["secrets"][1]["secret"], SECRET_ORDERS, "{secrets}");
    assert!(secrets["secrets"][1]["expires_at"].is_string(), "{secrets}");
    let third = summary(&admin.ok(&format!("{import} --json")));
    assert_eq!(third, [[0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 3, 0, 0]]);
}

#[test]
fn a_running_svix_server_is_imported_so_the_sdk_sees_the_same() {
    let (source_dir, target_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let svix = Gateway::spawn(source_dir.path(), &[]);
    let gw = Gateway::spawn(target_dir.path(), &[]);
    let receiver = RawReceiver::start(&[200]);
    let api = |method: &str, path: &str, body: Value| {
        let (status, answer) = http(method, &format!("{}{path}", svix.base), ADMIN, Some(body));
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
        answer
    };
    // The source, made as a Svix client makes it, through the Svix face.
    let schema = json!({"1": {"type": "object", "properties": {"id": {"type": "string"}}}});
    api(
        "POST",
        "/api/v1/event-type",
        json!({"name": "invoice.paid",
        "description": "An invoice was paid", "groupName": "billing", "schemas": schema}),
    );
    api(
        "POST",
        "/api/v1/event-type",
        json!({"name": "invoice.old", "description": "Old"}),
    );
    let (status, _) = http(
        "DELETE",
        &format!("{}/api/v1/event-type/invoice.old", svix.base),
        ADMIN,
        None,
    );
    assert_eq!(status, 204, "deleting a Svix event type archives it");
    let acme = api(
        "POST",
        "/api/v1/app",
        json!({"name": "Acme", "uid": "acme", "metadata": {"plan": "pro"}}),
    );
    let zeta = api("POST", "/api/v1/app", json!({"name": "Zeta"}));
    let (acme, zeta) = (acme["id"].as_str().unwrap(), zeta["id"].as_str().unwrap());
    api(
        "POST",
        &format!("/api/v1/app/{acme}/endpoint"),
        json!({"url": receiver.url,
        "uid": "billing", "description": "billing", "filterTypes": ["invoice.paid"],
        "channels": ["eu"], "metadata": {"k": "v"}, "throttleRate": 5, "secret": SECRET_SERVER}),
    );
    api(
        "PUT",
        &format!("/api/v1/app/{acme}/endpoint/billing/headers"),
        json!({"headers": {"X-Tenant": "acme", "Authorization": "Bearer hidden"}}),
    );
    let plain = api(
        "POST",
        &format!("/api/v1/app/{zeta}/endpoint"),
        json!({"url": "http://127.0.0.1:9/zeta", "disabled": true, "description": "paused"}),
    );
    let plain = plain["id"].as_str().unwrap();

    let admin = CliClient::new(&gw.base, ADMIN);
    // One item a page, so every list is followed through its pages.
    let import = format!(
        "import svix --from-url {} --from-token {ADMIN} --from-page-size 1",
        svix.base
    );
    let run = admin.ok(&format!("{import} --json"));
    assert_eq!(
        summary(&run),
        [[2, 0, 0, 0, 0], [2, 0, 0, 0, 0], [2, 0, 0, 0, 0]]
    );
    let report = run.json();
    assert_eq!(report["source"], json!(svix.base));
    let billing = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uid"] == "billing")
        .unwrap();
    let left_out: Vec<&str> = billing["not_imported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["what"].as_str().unwrap())
        .collect();
    assert!(left_out.contains(&"header authorization"), "{billing}");
    let again = summary(&admin.ok(&format!("{import} --json")));
    assert_eq!(again, [[0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0]]);

    // The endpoint without a uid is found by its Svix id; the archived type stays so.
    let paused = admin
        .ok(&format!("endpoints show --tenant {zeta} {plain} --json"))
        .json();
    assert_eq!(
        (&paused["disabled"], &paused["uid"]),
        (&json!(true), &json!(plain))
    );
    let old = admin.ok("event-types show invoice.old --json").json();
    assert_eq!(old["archived"], true);

    // A message sent through the target's Svix face arrives signed with the secret
    // the endpoint had in the source; the SDK sees the same on both servers.
    let message =
        json!({"eventType": "invoice.paid", "payload": {"id": "in_1"}, "channels": ["eu"]});
    let (status, sent) = http(
        "POST",
        &format!("{}/api/v1/app/acme/msg", gw.base),
        ADMIN,
        Some(message),
    );
    assert_eq!(status, 202, "{sent}");
    let raw = receiver.first();
    let said = sdk_check(&json!({
        "source": {"url": svix.base, "token": ADMIN},
        "target": {"url": gw.base, "token": ADMIN},
        "deliveries": [delivery(&raw, SECRET_SERVER)],
    }));
    assert!(
        said.contains("checked 2 applications, 2 endpoints, 1 deliveries"),
        "{said}"
    );
}

#[test]
fn bad_sources_fail_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let admin = CliClient::new(&gw.base, ADMIN);
    let import = "import svix --from-file";
    admin.fails(
        &format!("{import} /nonexistent/svix.json"),
        2,
        "cannot read /nonexistent/svix.json",
    );
    let file = dir.path().join("bad.json");
    for (text, phrase) in [
        (
            "{not json",
            "is not a Svix environment export (key must be a string",
        ),
        ("{\"applications\": []}", "missing field `eventTypes`"),
        (
            "{\"eventTypes\": {}}",
            "invalid type: map, expected a sequence",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let run = admin.fails(&format!("{import} {}", file.display()), 2, phrase);
        assert!(run.stderr.contains("Migrating from Svix"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    let from = format!("import svix --from-url {}", gw.base);
    let refused = admin.fails(
        &format!("{from} --from-token hgk_wrong"),
        1,
        "refused --from-token (401",
    );
    assert!(
        refused.stderr.starts_with("error: the Svix server at "),
        "{}",
        refused.stderr
    );
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    let gone = format!("import svix --from-url {nowhere} --from-token t");
    admin.fails(
        &gone,
        3,
        &format!("cannot reach the Svix server at {nowhere}/api/v1/event-type"),
    );
    admin.fails(
        "import svix --from-url api.svix.com --from-token t",
        2,
        "--from-url \"api.svix.com\" is not an http(s) URL",
    );
    admin.fails("import svix", 2, "--from-file");
    admin.fails(&from, 2, "--from-token");
    // The target must take the admin token: a tenant's key is refused before any read.
    let acme = admin.create_tenant("acme");
    let file = dir.path().join("empty.json");
    std::fs::write(&file, "{\"eventTypes\": []}").unwrap();
    acme.fails(
        &format!("{import} {}", file.display()),
        1,
        "needs the admin token",
    );
    let empty = admin
        .ok(&format!("{import} {} --json", file.display()))
        .json();
    assert_eq!(
        empty["summary"]["event_types"],
        json!({"created": 0, "updated": 0,
        "unchanged": 0, "skipped": 0, "failed": 0})
    );
}

#[test]
fn docs_svix_md_documents_every_flag_of_import_svix() {
    let help = run_cli(&[], &["import".into(), "svix".into(), "--help".into()], b"");
    assert_eq!(help.code, 0, "{}", help.stderr);
    let doc = include_str!("../../../../docs/svix.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Migrating from Svix"))
        .expect("docs/svix.md has a \"Migrating from Svix\" section");
    let flags: Vec<&str> = help
        .stdout
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| w.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-')))
        .filter(|w| w.starts_with("--") && w.len() > 2 && !["--help", "--version"].contains(w))
        .collect();
    for flag in [
        "--from-file",
        "--from-url",
        "--from-token",
        "--dry-run",
        "--signature-headers",
    ] {
        assert!(
            flags.contains(&flag),
            "{flag} not in --help:\n{}",
            help.stdout
        );
    }
    for flag in flags {
        assert!(
            section.contains(flag),
            "docs/svix.md's \"Migrating from Svix\" does not mention {flag}"
        );
    }
    assert!(help.stdout.contains("Exit codes:"), "{}", help.stdout);
    let platform = include_str!("../../../../docs/platform.md");
    assert!(
        platform.contains("hookgate import svix"),
        "docs/platform.md names the command"
    );
}
