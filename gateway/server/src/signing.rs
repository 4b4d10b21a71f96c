//! Standard Webhooks signing: every request carries `webhook-id`,
//! `webhook-timestamp` and `webhook-signature` (docs/receivers.md).
//!
//! Each request carries `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{ts}.{body}")>`,
//! one entry per valid secret (several during a rotation's grace period), separated by
//! spaces. The official `standardwebhooks` verifiers accept exactly this form.

use std::fmt;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;

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

/// Returns the `webhook-signature` header value: one `v1,<base64 sig>` per secret,
/// space-separated, in the order given.
pub fn sign(secrets: &[SigningSecret], msg_id: &str, timestamp_s: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| {
            let tag = secret
                .signature(msg_id, timestamp_s, body)
                .finalize()
                .into_bytes();
            format!("v1,{}", STANDARD.encode(tag))
        })
        .collect::<Vec<_>>()
        .join(" ")
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

#[cfg(test)]
mod tests;
