//! Signature checks by something nobody here wrote: the official `standardwebhooks`
//! verifiers, the Python package and the npm package (both installed by the README's
//! test command; the npm one with `npm ci --prefix tests/scripts`), the official
//! `svix` Python package for `svix-*` headers, and the `cryptography` package's
//! ed25519 for `v1a` signatures (all pinned in `tests/run.sh`).

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

/// Which header names a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature`.
    Webhook,
    /// `svix-id`, `svix-timestamp`, `svix-signature`.
    Svix,
}

impl Names {
    fn prefix(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Svix => "svix",
        }
    }
}

/// The requests with only the `names` set of signature headers (and every
/// header that is neither set's), so a verifier cannot fall back to the other.
fn only(names: Names, requests: &[Received]) -> Vec<Received> {
    let other = match names {
        Names::Webhook => "svix-",
        Names::Svix => "webhook-",
    };
    requests
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.headers.retain(|(k, _)| !k.starts_with(other));
            r
        })
        .collect()
}

/// Whether the official `svix` package's `Webhook.verify` accepts every
/// request with `secret`, reading their `svix-*` headers only (the
/// `webhook-*` ones are taken away first); the error says why not.
pub fn svix_library_verifies(secret: &str, requests: &[Received]) -> Result<(), String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/verify_svix.py");
    let mut python = Command::new("python3");
    python.arg(script);
    try_verifier(
        python,
        "python3 with the svix package (pip install svix, see tests/run.sh) is needed",
        &verifier_input(secret, &only(Names::Svix, requests), None),
    )
}

/// Whether every request carries a `v1a` signature that the `cryptography`
/// package's ed25519 verifies with `public_key` (`whpk_`), read from the
/// `names` headers only; the error says why not.
pub fn v1a_verifies(public_key: &str, names: Names, requests: &[Received]) -> Result<(), String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/verify_v1a.py");
    let mut python = Command::new("python3");
    python.arg(script);
    let mut input: serde_json::Value =
        serde_json::from_str(&verifier_input("", &only(names, requests), None)).unwrap();
    input["public_key"] = public_key.into();
    input["prefix"] = names.prefix().into();
    try_verifier(
        python,
        "python3 with the cryptography package (see tests/run.sh) is needed",
        &input.to_string(),
    )
}

/// Whether the official Python `standardwebhooks` package accepts every
/// request with `secret`, reading only their `webhook-*` headers.
pub fn standardwebhooks_verifies(secret: &str, requests: &[Received]) -> Result<(), String> {
    std::panic::catch_unwind(|| {
        verify_with_official_library(secret, &only(Names::Webhook, requests))
    })
    .map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "the verifier refused".to_owned())
    })
}

/// Runs a verifier script with `input` on stdin: `Err` with its output unless
/// it succeeds. A verifier that cannot be started panics (never a skip).
fn try_verifier(mut command: Command, missing: &str, input: &str) -> Result<(), String> {
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
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains("ModuleNotFoundError"), "{missing}: {said}");
    if out.status.success() {
        Ok(())
    } else {
        Err(said)
    }
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
fn run_verifier(command: Command, missing: &str, input: &str) {
    if let Err(said) = try_verifier(command, missing, input) {
        panic!("standardwebhooks rejected a signature: {said}");
    }
}
