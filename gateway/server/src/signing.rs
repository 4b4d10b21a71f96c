//! Standard Webhooks signing: every request carries an id, a timestamp and a
//! signature header, under the `webhook-*` names, the `svix-*` ones, or both
//! (docs/receivers.md).
//!
//! The signature header holds space-separated entries over `{id}.{ts}.{body}`:
//! `v1,<base64 HMAC-SHA256>` per live `whsec_` secret and `v1a,<base64 ed25519>`
//! per live `whsk_` key, as the endpoint's settings choose (several of each during
//! a rotation's grace period). The official `standardwebhooks` and `svix`
//! verifiers accept exactly this form.

use std::fmt;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;

mod ed25519;
mod settings;

pub use ed25519::{Ed25519Key, Ed25519PublicKey, KeyError};
pub use settings::{HeaderSet, SignatureScheme, SignatureSettings};

type HmacSha256 = Hmac<Sha256>;

/// Prefix of every signing secret.
const SECRET_PREFIX: &str = "whsec_";
/// Key sizes accepted by [`SigningSecret::parse`].
const MIN_KEY_BYTES: usize = 24;
const MAX_KEY_BYTES: usize = 64;
/// Key size of a generated secret.
const GENERATED_KEY_BYTES: usize = 32;
/// Standard base64 that accepts the key with or without its `=` padding.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a string is not a usable signing secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The `whsec_` prefix is missing.
    #[error("a signing secret starts with \"whsec_\"")]
    MissingPrefix,
    /// The part after the prefix is not standard base64.
    #[error("a signing secret is \"whsec_\" followed by base64")]
    InvalidBase64,
    /// The base64 decodes but is not written the one canonical way (standard
    /// alphabet, `=` padding), which strict decoders in other languages require.
    #[error(
        "a signing secret's base64 must be canonical standard base64 with its \"=\" padding, \
         as strict decoders (Go, .NET) require"
    )]
    NotCanonical,
    /// The decoded key is shorter than 24 bytes.
    #[error("a signing secret's key must be at least {MIN_KEY_BYTES} bytes, got {0}")]
    TooShort(usize),
    /// The decoded key is longer than 64 bytes.
    #[error("a signing secret's key must be at most {MAX_KEY_BYTES} bytes, got {0}")]
    TooLong(usize),
}

/// A signing secret: `whsec_` + base64 of 24–64 random bytes (32 generated); the HMAC
/// key is the decoded bytes.
#[derive(Clone)]
pub struct SigningSecret {
    text: String,
    key: Vec<u8>,
}

impl SigningSecret {
    /// A fresh secret from the thread's CSPRNG, 32 key bytes.
    pub fn generate() -> Self {
        let mut key = vec![0u8; GENERATED_KEY_BYTES];
        rand::rng().fill_bytes(&mut key);
        let text = format!("{SECRET_PREFIX}{}", STANDARD.encode(&key));
        Self { text, key }
    }

    /// Reads a secret in its `whsec_` form, as stored or given by an operator.
    ///
    /// Lenient about the `=` padding, so secrets stored before the API required it
    /// keep signing as before; input from tenants goes through
    /// [`SigningSecret::parse_canonical`].
    ///
    /// # Errors
    /// [`SecretError`] when the prefix is missing, the rest is not base64, or the key is
    /// outside 24–64 bytes.
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let key = LENIENT_BASE64
            .decode(encoded)
            .map_err(|_| SecretError::InvalidBase64)?;
        match key.len() {
            len if len < MIN_KEY_BYTES => Err(SecretError::TooShort(len)),
            len if len > MAX_KEY_BYTES => Err(SecretError::TooLong(len)),
            _ => Ok(Self {
                text: text.to_owned(),
                key,
            }),
        }
    }

    /// Reads a secret a tenant supplies: as [`SigningSecret::parse`], and the base64 must
    /// also be canonical and padded. The receiver decodes the same text, and strict
    /// decoders (Go's `StdEncoding`, .NET's `Convert.FromBase64String`) refuse anything
    /// else, so a receiver written with them could never verify its signatures.
    ///
    /// # Errors
    /// As [`SigningSecret::parse`], and [`SecretError::NotCanonical`] when the base64
    /// decodes but is not the canonical encoding of its key (e.g. without padding).
    pub fn parse_canonical(text: &str) -> Result<Self, SecretError> {
        let secret = Self::parse(text)?;
        let canonical = STANDARD.encode(&secret.key);
        if text.strip_prefix(SECRET_PREFIX) == Some(canonical.as_str()) {
            Ok(secret)
        } else {
            Err(SecretError::NotCanonical)
        }
    }

    /// Reads a secret a tenant supplies, with or without its `whsec_` prefix (the
    /// spec's verifiers take either; it is kept with the prefix), as
    /// [`SigningSecret::parse_canonical`].
    ///
    /// # Errors
    /// As [`SigningSecret::parse_canonical`].
    pub fn parse_given(text: &str) -> Result<Self, SecretError> {
        if text.starts_with(SECRET_PREFIX) {
            Self::parse_canonical(text)
        } else {
            Self::parse_canonical(&format!("{SECRET_PREFIX}{text}"))
        }
    }

    /// The `whsec_` form, for storage and for showing the secret to its owner.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The raw HMAC-SHA256 of the signed content `{msg_id}.{timestamp_s}.{body}`.
    fn signature(&self, msg_id: &str, timestamp_s: i64, body: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any size");
        mac.update(msg_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp_s.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(whsec_<redacted>)")
    }
}

/// The content every scheme signs: `{msg_id}.{timestamp_s}.{body}`.
fn signed_content(msg_id: &str, timestamp_s: i64, body: &[u8]) -> Vec<u8> {
    let ts = timestamp_s.to_string();
    let mut out = Vec::with_capacity(msg_id.len() + ts.len() + body.len() + 2);
    out.extend_from_slice(msg_id.as_bytes());
    out.push(b'.');
    out.extend_from_slice(ts.as_bytes());
    out.push(b'.');
    out.extend_from_slice(body);
    out
}

/// Returns the signature header value: one `v1,<base64 sig>` per secret,
/// space-separated, in the order given.
pub fn sign(secrets: &[SigningSecret], msg_id: &str, timestamp_s: i64, body: &[u8]) -> String {
    sign_with(
        &[SignatureScheme::V1],
        secrets,
        &[],
        msg_id,
        timestamp_s,
        body,
    )
}

/// Returns the signature header value for `schemes`: for each scheme in order,
/// one entry per key it signs with (`v1` per secret, `v1a` per ed25519 key, each
/// newest first as given), space-separated.
pub fn sign_with(
    schemes: &[SignatureScheme],
    secrets: &[SigningSecret],
    keys: &[Ed25519Key],
    msg_id: &str,
    timestamp_s: i64,
    body: &[u8],
) -> String {
    let mut out = String::new();
    let mut entry = |scheme: SignatureScheme, signature: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(scheme.as_str());
        out.push(',');
        out.push_str(signature);
    };
    for &scheme in schemes {
        match scheme {
            SignatureScheme::V1 => {
                for secret in secrets {
                    let tag = secret
                        .signature(msg_id, timestamp_s, body)
                        .finalize()
                        .into_bytes();
                    entry(scheme, &STANDARD.encode(tag));
                }
            }
            SignatureScheme::V1a => {
                for key in keys {
                    entry(scheme, &key.signature(msg_id, timestamp_s, body));
                }
            }
        }
    }
    out
}

/// Whether any `v1` signature in `header` was made with `secret` over this message.
/// Compares in constant time; checks the signature only, not the timestamp's age.
/// Used by tests and the `hookgate verify` command.
pub fn verify(
    secret: &SigningSecret,
    msg_id: &str,
    timestamp_s: i64,
    body: &[u8],
    header: &str,
) -> bool {
    let expected = secret.signature(msg_id, timestamp_s, body);
    header
        .split_whitespace()
        .filter_map(|entry| entry.strip_prefix("v1,"))
        .filter_map(|encoded| STANDARD.decode(encoded).ok())
        .any(|candidate| expected.clone().verify_slice(&candidate).is_ok())
}

/// Whether any `v1a` signature in `header` was made with the key whose public
/// half is `public` over this message. Checks the signature only, not the
/// timestamp's age. Used by tests and the `hookgate verify` command.
pub fn verify_v1a(
    public: &Ed25519PublicKey,
    msg_id: &str,
    timestamp_s: i64,
    body: &[u8],
    header: &str,
) -> bool {
    header
        .split_whitespace()
        .filter_map(|entry| entry.strip_prefix("v1a,"))
        .any(|encoded| public.verifies(msg_id, timestamp_s, body, encoded))
}

#[cfg(test)]
mod tests;
