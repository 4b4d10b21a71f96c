//! `v1a` signing keys: ed25519 as the Standard Webhooks spec serialises it.
//!
//! The secret key is `whsk_` + standard base64 of the 64-byte key pair (the
//! 32-byte seed, then the public key), the form Go's `ed25519.PrivateKey` and
//! Svix use; the public key a receiver verifies with is `whpk_` + base64 of its
//! 32 bytes. A bare 32-byte seed after `whsk_` is read too.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{SECRET_KEY_LENGTH, Signer, SigningKey, Verifier, VerifyingKey};
use rand::Rng;

/// Prefix of a `v1a` secret key.
const SECRET_KEY_PREFIX: &str = "whsk_";
/// Prefix of a `v1a` public key.
const PUBLIC_KEY_PREFIX: &str = "whpk_";

/// Why a string is not a usable `v1a` key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The prefix (`whsk_` or `whpk_`) is missing.
    #[error("a v1a key starts with {0:?}")]
    MissingPrefix(&'static str),
    /// The part after the prefix is not canonical standard base64.
    #[error("a v1a key is its prefix followed by standard base64")]
    InvalidBase64,
    /// The key decodes to the wrong number of bytes.
    #[error("a v1a {kind} key is {expected} bytes, got {got}")]
    WrongLength {
        kind: &'static str,
        expected: &'static str,
        got: usize,
    },
    /// A 64-byte secret key whose second half is not the public key of its seed.
    #[error("a v1a secret key's last 32 bytes must be the public key of its seed")]
    Mismatched,
    /// The public key bytes are not a point on the curve.
    #[error("a v1a public key must be a valid ed25519 point")]
    NotAPoint,
}

/// An endpoint's ed25519 signing key.
#[derive(Clone)]
pub struct Ed25519Key {
    key: SigningKey,
}

impl Ed25519Key {
    /// A fresh key from the thread's CSPRNG.
    pub fn generate() -> Self {
        let mut seed = [0u8; SECRET_KEY_LENGTH];
        rand::rng().fill_bytes(&mut seed);
        Self {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// Reads a `whsk_` secret key: 64 bytes (seed, public key) or a 32-byte seed.
    ///
    /// # Errors
    /// [`KeyError`] when the prefix or base64 is wrong, the length is neither, or
    /// the stored public half does not belong to the seed.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let bytes = decode(text, SECRET_KEY_PREFIX)?;
        let seed: [u8; SECRET_KEY_LENGTH] = bytes[..bytes.len().min(SECRET_KEY_LENGTH)]
            .try_into()
            .map_err(|_| wrong_length("secret", "32 or 64", bytes.len()))?;
        let key = SigningKey::from_bytes(&seed);
        match bytes.len() {
            32 => Ok(Self { key }),
            64 if bytes[32..] == key.verifying_key().to_bytes() => Ok(Self { key }),
            64 => Err(KeyError::Mismatched),
            n => Err(wrong_length("secret", "32 or 64", n)),
        }
    }

    /// The `whsk_` form (64 bytes), for storage.
    pub fn secret_text(&self) -> String {
        format!(
            "{SECRET_KEY_PREFIX}{}",
            STANDARD.encode(self.key.to_keypair_bytes())
        )
    }

    /// The `whpk_` form of the public key, shown to the receiver.
    pub fn public_text(&self) -> String {
        public_text(&self.key.verifying_key())
    }

    /// The base64 ed25519 signature of `{msg_id}.{timestamp_s}.{body}`.
    pub(super) fn signature(&self, msg_id: &str, timestamp_s: i64, body: &[u8]) -> String {
        let signed = super::signed_content(msg_id, timestamp_s, body);
        STANDARD.encode(self.key.sign(&signed).to_bytes())
    }
}

impl fmt::Debug for Ed25519Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ed25519Key(whsk_<redacted>)")
    }
}

/// A receiver's `whpk_` public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ed25519PublicKey {
    key: VerifyingKey,
}

impl Ed25519PublicKey {
    /// Reads a `whpk_` public key.
    ///
    /// # Errors
    /// [`KeyError`] when the prefix, base64 or length is wrong, or the bytes are
    /// not a curve point.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let bytes = decode(text, PUBLIC_KEY_PREFIX)?;
        let bytes: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| wrong_length("public", "32", bytes.len()))?;
        let key = VerifyingKey::from_bytes(&bytes).map_err(|_| KeyError::NotAPoint)?;
        Ok(Self { key })
    }

    /// Whether `signature` (base64) is this key's signature over the message.
    pub(super) fn verifies(
        &self,
        msg_id: &str,
        timestamp_s: i64,
        body: &[u8],
        signature: &str,
    ) -> bool {
        let Ok(bytes) = STANDARD.decode(signature) else {
            return false;
        };
        let Ok(signature) = ed25519_dalek::Signature::from_slice(&bytes) else {
            return false;
        };
        let signed = super::signed_content(msg_id, timestamp_s, body);
        self.key.verify(&signed, &signature).is_ok()
    }
}

fn public_text(key: &VerifyingKey) -> String {
    format!("{PUBLIC_KEY_PREFIX}{}", STANDARD.encode(key.to_bytes()))
}

fn wrong_length(kind: &'static str, expected: &'static str, got: usize) -> KeyError {
    KeyError::WrongLength {
        kind,
        expected,
        got,
    }
}

/// The bytes after `prefix`, which must be canonical padded standard base64.
fn decode(text: &str, prefix: &'static str) -> Result<Vec<u8>, KeyError> {
    let encoded = text
        .strip_prefix(prefix)
        .ok_or(KeyError::MissingPrefix(prefix))?;
    STANDARD
        .decode(encoded)
        .map_err(|_| KeyError::InvalidBase64)
}
