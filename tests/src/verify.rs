//! Signature checks by something nobody here wrote: the official Python
//! `standardwebhooks` verifier (installed by the README's test command).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::receiver::Received;

/// Verifies every request with `secret`; panics with the verifier's message if any fails.
pub fn verify_with_official_library(secret: &str, requests: &[Received]) {
    verify_at(secret, requests, None);
}

/// Like [`verify_with_official_library`], with the verifier's clock at `now_s`
/// (Unix seconds) for gateways running on a test clock.
pub fn verify_at(secret: &str, requests: &[Received], now_s: Option<u64>) {
    let reqs: Vec<_> = requests
        .iter()
        .map(|r| {
            let headers: serde_json::Map<String, serde_json::Value> = r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({"headers": headers, "body": String::from_utf8_lossy(&r.body)})
        })
        .collect();
    let input = serde_json::json!({"secret": secret, "requests": reqs, "now": now_s}).to_string();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/verify_standardwebhooks.py"
    );
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed to run the official standardwebhooks verifier");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "standardwebhooks rejected a signature: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether the official verifier, its clock at `now_s`, accepts one request with `secret`.
pub fn official_verifier_accepts(secret: &str, request: &Received, now_s: Option<u64>) -> bool {
    std::panic::catch_unwind(|| verify_at(secret, std::slice::from_ref(request), now_s)).is_ok()
}
