//! `hookgate verify` on a request the gateway signed: accepted whole, and each kind
//! of tampering named; and an endpoint created with a secret of the tenant's own
//! (`endpoints create --secret`), which its deliveries are signed with.

use super::local;
use crate::common::{ADMIN, CliClient, Gateway, RawReceiver};

/// A captured request with the first `from` replaced by `to`.
fn altered(raw: &str, from: &str, to: &str) -> Vec<u8> {
    assert!(raw.contains(from), "{from:?} not in {raw}");
    raw.replacen(from, to, 1).into_bytes()
}

/// The line of a header in a captured request.
fn header_line<'a>(raw: &'a str, name: &str) -> &'a str {
    let found = raw
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with(name));
    found
        .unwrap_or_else(|| panic!("no {name} in {raw}"))
        .trim_end()
}

#[test]
fn verify_accepts_what_the_gateway_signed_and_names_each_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let receiver = RawReceiver::start(&[200]);
    let ep = acme.create_endpoint(&receiver.url, "");
    acme.ok(r#"events send --tenant acme --type paid --data {"amount":100}"#);
    let raw = String::from_utf8(receiver.first()).unwrap();
    let secret = acme
        .ok(&format!("endpoints secret --tenant acme {ep} --json"))
        .json();
    let secret = secret["secret"].as_str().unwrap();

    let file = dir.path().join("request.http");
    std::fs::write(&file, &raw).unwrap();
    let valid = local(&format!("verify --secret {secret} {}", file.display()), b"");
    assert_eq!(valid.code, 0, "{}{}", valid.stdout, valid.stderr);
    let expected = "valid: signature matches; webhook-id evt_";
    assert!(valid.stdout.starts_with(expected), "{}", valid.stdout);
    assert_eq!(
        local(&format!("verify --secret {secret} -"), raw.as_bytes()).code,
        0
    );

    let ts_line = header_line(&raw, "webhook-timestamp:");
    let (name, ts) = ts_line.split_once(':').unwrap();
    let stale = format!(
        "{name}: {}",
        ts.trim().parse::<i64>().unwrap() - (3 * 3600 + 2 * 60)
    );
    let signature = format!("{}\r\n", header_line(&raw, "webhook-signature:"));
    let other = hookgate_server::SigningSecret::generate();
    let cases = [
        (
            secret,
            altered(&raw, "100}", "900}"),
            "no matching signature",
        ),
        (
            secret,
            altered(&raw, ts_line, &stale),
            "timestamp is 3h2m old, outside the 5m",
        ),
        (
            other.as_str(),
            raw.clone().into_bytes(),
            "no matching signature",
        ),
        (
            "whsec_tooshort",
            raw.clone().into_bytes(),
            "malformed secret",
        ),
        (
            secret,
            altered(&raw, &signature, ""),
            "missing header webhook-signature",
        ),
    ];
    for (secret, input, reason) in cases {
        let run = local(&format!("verify --secret {secret}"), &input);
        assert_eq!(run.code, 1, "{reason}: {}{}", run.stdout, run.stderr);
        let reason = format!("invalid: {reason}");
        assert!(
            run.stdout.starts_with(&reason),
            "{:?} lacks {reason:?}",
            run.stdout
        );
    }

    let missing = local(&format!("verify --secret {secret} /no/req.http"), b"");
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("cannot read /no/req.http"),
        "{}",
        missing.stderr
    );
    let garbage = local(&format!("verify --secret {secret}"), b"not an http request");
    assert_eq!(garbage.code, 2);
    assert!(
        garbage.stderr.contains("not a raw HTTP request"),
        "{}",
        garbage.stderr
    );
}

#[test]
fn an_endpoint_signs_with_the_secret_the_tenant_chose() {
    // `whsec_` and 24 bytes in standard base64: 32 characters, no padding needed.
    const MINE: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let receiver = RawReceiver::start(&[200]);
    let create = format!(
        "endpoints create --tenant acme --endpoint-url {}",
        receiver.url
    );
    let run = acme.ok(&format!("{create} --secret {MINE}"));
    assert_eq!(
        run.line("signing secret:"),
        format!("signing secret: {MINE}")
    );
    let ep = run.line("created endpoint ").rsplit(' ').next().unwrap();
    let stored = acme
        .ok(&format!("endpoints secret --tenant acme {ep} --json"))
        .json();
    assert_eq!(stored["secret"], MINE, "{stored}");
    acme.ok(r#"events send --tenant acme --type paid --data {"amount":100}"#);
    let valid = local(&format!("verify --secret {MINE}"), &receiver.first());
    assert_eq!(valid.code, 0, "{}{}", valid.stdout, valid.stderr);

    // The gateway judges the secret; its refusal names the field and the form.
    let form = "invalid secret: secret must be whsec_ + padded standard base64 of 24 to 64 bytes";
    for bad in [
        "whsec_tooshort",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAA",
        "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ] {
        acme.fails(&format!("{create} --secret {bad}"), 1, form);
    }
    // Without its prefix, as the Standard Webhooks libraries take it: kept with it.
    let bare = MINE.trim_start_matches("whsec_");
    let run = acme.ok(&format!("{create} --secret {bare}"));
    assert_eq!(
        run.line("signing secret:"),
        format!("signing secret: {MINE}")
    );
    let endpoints = acme.ok("endpoints list --tenant acme --json").json();
    assert_eq!(
        endpoints["data"].as_array().unwrap().len(),
        2,
        "{endpoints}"
    );
}
