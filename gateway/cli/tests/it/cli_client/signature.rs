//! `endpoints create|update --signature-scheme --signature-headers` (issue 40,
//! item 4): the setting is sent, shown by `show` and `secret` (with the `v1a`
//! public key), merged on update, and a value the gateway does not know is a
//! usage error before any request.

use super::local;
use crate::common::{ADMIN, CliClient, Gateway};

#[test]
fn signature_flags_set_and_show_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let create = "endpoints create --tenant acme --endpoint-url http://127.0.0.1:9/a";

    let run = acme.ok(&format!(
        "{create} --signature-scheme v1a --signature-scheme v1 --signature-headers both"
    ));
    assert!(
        run.line("public key (v1a): whpk_").len() > 40,
        "{}",
        run.stdout
    );
    assert!(
        run.line("signature:")
            .ends_with(" v1,v1a under webhook-* and svix-*"),
        "{}",
        run.stdout
    );
    let ep = run
        .line("created endpoint ")
        .trim_start_matches("created endpoint ");

    // Update merges: the schemes stay when only the header set changes.
    let json = acme
        .ok(&format!(
            "endpoints update --tenant acme {ep} --signature-headers svix --json"
        ))
        .json();
    assert_eq!(
        json["signature"],
        serde_json::json!({"headers": "svix", "schemes": ["v1", "v1a"]}),
        "{json}"
    );
    let secret = acme.ok(&format!("endpoints secret --tenant acme {ep}"));
    assert!(
        secret.line("SECRET").contains("PUBLIC KEY (v1a)"),
        "{}",
        secret.stdout
    );
    assert!(
        secret.line("whsec_").contains(" whpk_"),
        "{}",
        secret.stdout
    );
    assert_eq!(secret.line("signature:"), "signature: v1,v1a under svix-*");

    // A plain endpoint shows the default, and no public key.
    let plain = acme.ok(&format!("{create} --json")).json();
    assert!(plain["public_key"].is_null(), "{plain}");
    assert_eq!(
        plain["signature"],
        serde_json::json!({"headers": "webhook", "schemes": ["v1"]})
    );

    let bad = local(&format!("{create} --signature-scheme v2"), b"");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("'v2'"), "{}", bad.stderr);
    let bad = local(&format!("{create} --signature-headers x-hook"), b"");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}
