//! API tokens: `hgk_` (keys) or `hgp_` (portal sessions) + base64url(32 random
//! bytes), stored only as SHA-256.
//!
//! Tokens carry 256 bits of entropy, so a fast hash is enough; a slow password
//! hash per request would cost more than it protects.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The prefix every hookgate token carries, so leaked tokens are easy to spot.
pub(crate) const PREFIX: &str = "hgk_";

/// The prefix of portal-session tokens, so a leaked one says what it is.
pub(crate) const PORTAL_PREFIX: &str = "hgp_";

/// A fresh random token.
pub fn generate() -> String {
    generate_with(PREFIX)
}

/// A fresh random portal-session token.
pub(crate) fn generate_portal() -> String {
    generate_with(PORTAL_PREFIX)
}

fn generate_with(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// SHA-256 of a token, as stored.
pub fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Compares two hashes in constant time.
pub(crate) fn hashes_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_prefixed_random_and_hash_stably() {
        let a = generate();
        let b = generate();
        assert!(a.starts_with(PREFIX));
        assert_eq!(a.len(), PREFIX.len() + 43);
        assert_ne!(a, b);
        assert_eq!(hash(&a), hash(&a));
        assert!(hashes_equal(&hash(&a), &hash(&a)));
        assert!(!hashes_equal(&hash(&a), &hash(&b)));
        assert!(!hashes_equal(&hash(&a), &hash(&a)[..31]));
        assert_eq!(
            hex::encode(hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
