//! `hookgate verify --secret whsec_...|whpk_... [FILE|-]`: checks a captured webhook
//! request as a Standard Webhooks receiver would, and says why it fails: a missing
//! header, a timestamp outside the 5-minute tolerance (with the offset), no matching
//! signature, or a malformed secret. A `whsec_` secret checks the `v1` entries, an
//! endpoint's `whpk_` public key the `v1a` (ed25519) ones; the `svix-*` headers are
//! read when the request has no `webhook-id`.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;

use super::capture::{self, Captured};
use super::error::{EXIT_API, EXIT_OK, EXIT_USAGE};
use super::input::read_file;
use super::out;
use super::table::seconds;
use hookgate_server::{Ed25519PublicKey, SigningSecret, verify, verify_v1a};

/// The exit codes, shown under `hookgate verify --help`.
pub(super) const EXIT_CODES: &str = "\
Exit codes:
  0  the signature is valid
  1  it is not, or the secret is malformed (the message says why)
  2  the input cannot be read, or is not a raw HTTP request";

/// How far `webhook-timestamp` may be from now, as receivers check it.
const TOLERANCE_S: i64 = 5 * 60;

/// What a request is checked with.
enum Key {
    /// A `whsec_` secret: the `v1` entries.
    Secret(SigningSecret),
    /// A `whpk_` public key: the `v1a` entries.
    Public(Ed25519PublicKey),
}

impl Key {
    fn parse(text: &str) -> Result<Self, String> {
        let malformed = |e: &dyn std::fmt::Display| format!("malformed secret: {e}");
        if text.starts_with("whpk_") {
            Ed25519PublicKey::parse(text)
                .map(Self::Public)
                .map_err(|e| malformed(&e))
        } else {
            SigningSecret::parse(text)
                .map(Self::Secret)
                .map_err(|e| malformed(&e))
        }
    }

    fn scheme(&self) -> &'static str {
        match self {
            Self::Secret(_) => "v1",
            Self::Public(_) => "v1a",
        }
    }

    fn verifies(&self, id: &str, ts: i64, body: &[u8], header: &str) -> bool {
        match self {
            Self::Secret(s) => verify(s, id, ts, body, header),
            Self::Public(k) => verify_v1a(k, id, ts, body, header),
        }
    }
}

/// What to verify.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The endpoint's signing secret, or for `v1a` its public key (`hookgate
    /// endpoints secret` shows both).
    #[arg(
        long,
        env = "HOOKGATE_WEBHOOK_SECRET",
        hide_env_values = true,
        value_name = "whsec_...|whpk_..."
    )]
    secret: String,
    /// The captured raw HTTP request (request line, headers, a blank line, the body);
    /// `-` reads stdin.
    #[arg(value_name = "FILE|-", default_value = "-")]
    input: PathBuf,
}

/// Runs `verify`; returns the exit code.
pub(super) fn run(args: &VerifyArgs) -> i32 {
    let captured = match read_file(&args.input) {
        Ok(raw) => capture::parse(&raw),
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let captured = match captured {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: the input is not a raw HTTP request: {e}");
            return EXIT_USAGE;
        }
    };
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    match check(&args.secret, &captured, now_s) {
        Ok(line) => {
            out(&format!("valid: {line}"));
            EXIT_OK
        }
        Err(reason) => {
            out(&format!("invalid: {reason}"));
            EXIT_API
        }
    }
}

/// How far from now a timestamp is, in words.
fn offset_words(offset_s: i64) -> String {
    let words = seconds(offset_s.unsigned_abs());
    if offset_s >= 0 {
        format!("{words} old")
    } else {
        format!("{words} in the future")
    }
}

/// The verdict on one request at `now_s`: a description when valid, the reason
/// when not.
///
/// # Errors
/// The reason the request is not validly signed by `secret`.
pub(super) fn check(secret: &str, req: &Captured, now_s: i64) -> Result<String, String> {
    let key = Key::parse(secret)?;
    // The svix-* set when the request has no webhook-id but a svix-id.
    let set = if req.header("webhook-id").is_none() && req.header("svix-id").is_some() {
        "svix"
    } else {
        "webhook"
    };
    let [id_name, ts_name, sig_name] =
        ["id", "timestamp", "signature"].map(|part| format!("{set}-{part}"));
    let missing: Vec<&str> = [&id_name, &ts_name, &sig_name]
        .into_iter()
        .map(String::as_str)
        .filter(|h| req.header(h).is_none_or(str::is_empty))
        .collect();
    match missing.as_slice() {
        [] => {}
        [one] => return Err(format!("missing header {one}")),
        many => return Err(format!("missing headers {}", many.join(", "))),
    }
    let id = req.header(&id_name).unwrap_or_default();
    let ts_text = req.header(&ts_name).unwrap_or_default();
    let signatures = req.header(&sig_name).unwrap_or_default();
    let ts: i64 = ts_text
        .parse()
        .map_err(|_| format!("{ts_name} {ts_text:?} is not a Unix time in seconds"))?;
    let matches = key.verifies(id, ts, &req.body, signatures);
    let offset = now_s.saturating_sub(ts);
    if offset.abs() > TOLERANCE_S {
        let also = if matches {
            "; the signature itself matches, so the request is genuine but stale (replayed, or the clocks disagree)"
        } else {
            "; no signature matches either"
        };
        return Err(format!(
            "timestamp is {}, outside the {} tolerance{also}",
            offset_words(offset),
            seconds(TOLERANCE_S.unsigned_abs())
        ));
    }
    if !matches {
        let scheme = key.scheme();
        let checked = signatures
            .split_whitespace()
            .filter(|s| s.strip_prefix(scheme).is_some_and(|r| r.starts_with(',')))
            .count();
        if checked == 0 {
            return Err(format!(
                "no matching signature: {sig_name} holds no {scheme} signature"
            ));
        }
        return Err(format!(
            "no matching signature ({checked} checked): the body, {id_name} or {ts_name} changed after signing, or the {} is not this endpoint's",
            if scheme == "v1" {
                "secret"
            } else {
                "public key"
            }
        ));
    }
    let what = match key {
        Key::Secret(_) => "signature",
        Key::Public(_) => "v1a signature",
    };
    Ok(format!(
        "{what} matches; {id_name} {id}, timestamp {}",
        offset_words(offset)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_server::sign;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const NOW: i64 = 1_700_000_000;

    fn request(ts: i64, body: &str, secret: &str) -> Captured {
        let sig = sign(
            &[SigningSecret::parse(secret).unwrap()],
            "evt_1",
            ts,
            body.as_bytes(),
        );
        let raw = format!(
            "POST /hook HTTP/1.1\r\nwebhook-id: evt_1\r\nwebhook-timestamp: {ts}\r\nwebhook-signature: {sig}\r\n\r\n{body}"
        );
        capture::parse(raw.as_bytes()).unwrap()
    }

    #[test]
    fn v1a_under_svix_headers_is_checked_with_the_public_key() {
        use hookgate_server::{Ed25519Key, SignatureScheme, sign_with};
        let key = Ed25519Key::generate();
        let sig = sign_with(
            &[SignatureScheme::V1a],
            &[],
            std::slice::from_ref(&key),
            "evt_1",
            NOW,
            b"{}",
        );
        let raw = format!(
            "POST /hook HTTP/1.1\r\nsvix-id: evt_1\r\nsvix-timestamp: {NOW}\r\nsvix-signature: {sig}\r\n\r\n{{}}"
        );
        let req = capture::parse(raw.as_bytes()).unwrap();
        let ok = check(&key.public_text(), &req, NOW).unwrap();
        assert!(
            ok.starts_with("v1a signature matches; svix-id evt_1"),
            "{ok}"
        );
        let other = Ed25519Key::generate().public_text();
        let err = check(&other, &req, NOW).unwrap_err();
        assert!(err.contains("public key is not this endpoint's"), "{err}");
        let err = check(SECRET, &req, NOW).unwrap_err();
        assert!(
            err.contains("svix-signature holds no v1 signature"),
            "{err}"
        );
        assert!(
            check("whpk_abc", &req, NOW)
                .unwrap_err()
                .contains("malformed secret")
        );
    }

    #[test]
    fn a_fresh_signed_request_is_valid() {
        let ok = check(SECRET, &request(NOW - 2, "{}", SECRET), NOW).unwrap();
        assert!(ok.contains("evt_1") && ok.contains("2s old"), "{ok}");
    }

    #[test]
    fn each_failure_names_its_reason() {
        let other = SigningSecret::generate();
        let stale = request(NOW - (3 * 3600 + 2 * 60 + 5), "{}", SECRET);
        let cases = [
            (
                SECRET,
                request(NOW, "{}", other.as_str()),
                "no matching signature",
            ),
            (
                SECRET,
                stale,
                "timestamp is 3h2m old, outside the 5m tolerance; the signature itself matches",
            ),
            (
                SECRET,
                request(NOW + 600, "{}", SECRET),
                "timestamp is 10m in the future",
            ),
            ("whsec_abc", request(NOW, "{}", SECRET), "malformed secret"),
            ("nope", request(NOW, "{}", SECRET), "malformed secret"),
        ];
        for (secret, req, reason) in cases {
            let err = check(secret, &req, NOW).unwrap_err();
            assert!(err.contains(reason), "{err} lacks {reason}");
        }
        let bare = capture::parse(b"webhook-id: evt_1\n\n{}").unwrap();
        assert_eq!(
            check(SECRET, &bare, NOW).unwrap_err(),
            "missing headers webhook-timestamp, webhook-signature"
        );
    }
}
