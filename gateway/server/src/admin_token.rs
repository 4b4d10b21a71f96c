//! The admin token: the configured one, or the one stored, or a new one made
//! at first start and printed once. Only its SHA-256 is stored.

use crate::config::Config;
use crate::store::{Store, StoreError};
use crate::token;

/// The admin token's hash: from config if set, else stored, else a new token
/// printed once to stderr (outside the JSON log) and stored hashed.
pub(crate) async fn admin_token_hash(
    store: &Store,
    config: &Config,
) -> Result<[u8; 32], StoreError> {
    if let Some(t) = &config.admin_token {
        let hash = token::hash(t);
        store.meta_put("admin_token_sha256", &hash).await?;
        return Ok(hash);
    }
    if let Some(h) = store.meta_get("admin_token_sha256").await?
        && let Ok(hash) = <[u8; 32]>::try_from(h.as_slice())
    {
        return Ok(hash);
    }
    // Gateways starting together on an empty shared store each make one; the
    // first stored wins, and only its maker prints it.
    let t = token::generate();
    let hash = token::hash(&t);
    let kept = store.meta_put_first("admin_token_sha256", &hash).await?;
    if kept == hash {
        eprintln!("hookgate: admin token (shown once, store it now): {t}");
        return Ok(hash);
    }
    eprintln!("hookgate: another gateway made the admin token first; use the one it printed");
    <[u8; 32]>::try_from(kept.as_slice())
        .map_err(|_| StoreError::corrupt("the stored admin token hash is not 32 bytes"))
}

/// Replaces the admin token; returns the new token and its hash.
///
/// # Errors
/// On a storage failure.
pub async fn reset_admin_token(store: &Store) -> Result<(String, [u8; 32]), StoreError> {
    let t = token::generate();
    let hash = token::hash(&t);
    store.meta_put("admin_token_sha256", &hash).await?;
    eprintln!("hookgate: admin token (shown once, store it now): {t}");
    Ok((t, hash))
}
