//! Signature checks by something nobody here wrote: the official `standardwebhooks`
//! verifiers, the Python package and the npm package (both installed by the README's
//! test command; the npm one with `npm ci --prefix tests/scripts`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::receiver::Received;

/// The command that installs the npm verifier, from the repository root.
pub const NPM_INSTALL: &str = "npm ci --prefix tests/scripts";

/// Verifies every request with `secret`; panics with the verifier's message if any fails.
pub fn verify_with_official_library(secret: &str, requests: &[Received]) {
    verify_at(secret, requests, None);
}

/// Like [`verify_with_official_library`], with the verifier's clock at `now_s`
/// (Unix seconds) for gateways running on a test clock.
pub fn verify_at(secret: &str, requests: &[Received], now_s: Option<u64>) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/verify_standardwebhooks.py"
    );
    let mut python = Command::new("python3");
    python.arg(script);
    run_verifier(
        python,
        "python3 is needed to run the official standardwebhooks verifier",
        &verifier_input(secret, requests, now_s),
    );
}

/// Whether the official verifier, its clock at `now_s`, accepts one request with `secret`.
pub fn official_verifier_accepts(secret: &str, request: &Received, now_s: Option<u64>) -> bool {
    std::panic::catch_unwind(|| verify_at(secret, std::slice::from_ref(request), now_s)).is_ok()
}

/// Verifies every request with `secret` using the official npm `standardwebhooks`
/// package, pinned in `tests/scripts/package.json`; panics with the verifier's
/// message if any fails.
///
/// A missing install fails the test (never skips it), saying to run [`NPM_INSTALL`].
pub fn verify_with_npm_library(secret: &str, requests: &[Received]) {
    npm_verify_at(secret, requests, None);
}

/// Like [`verify_with_npm_library`], with the verifier's clock at `now_s` (Unix seconds).
pub fn npm_verify_at(secret: &str, requests: &[Received], now_s: Option<u64>) {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let installed = scripts.join("node_modules/standardwebhooks/package.json");
    assert!(
        installed.is_file(),
        "the npm standardwebhooks verifier is not installed ({} is missing): \
         run `{NPM_INSTALL}` from the repository root",
        installed.display()
    );
    let mut node = Command::new("node");
    node.arg(scripts.join("verify_standardwebhooks.mjs"));
    run_verifier(
        node,
        &format!("node is needed to run the npm standardwebhooks verifier (then `{NPM_INSTALL}`)"),
        &verifier_input(secret, requests, now_s),
    );
}

/// The JSON both verifier scripts read on stdin.
fn verifier_input(secret: &str, requests: &[Received], now_s: Option<u64>) -> String {
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
    serde_json::json!({"secret": secret, "requests": reqs, "now": now_s}).to_string()
}

/// Runs a verifier script with `input` on stdin; panics with its output unless it succeeds.
fn run_verifier(mut command: Command, missing: &str, input: &str) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{missing}: {e}"));
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
