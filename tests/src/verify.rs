//! Signature checks by something nobody here wrote: the official Python
//! `standardwebhooks` verifier (installed by the README's test command).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::receiver::Received;

/// Verifies every request with `secret`; panics with the verifier's message if any fails.
pub fn verify_with_official_library(secret: &str, requests: &[Received]) {
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
    let input = serde_json::json!({"secret": secret, "requests": reqs}).to_string();
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
