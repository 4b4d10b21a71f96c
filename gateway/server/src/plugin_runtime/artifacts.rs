//! The compiled-artifact cache: a plugin compiled once is kept in
//! `{data_dir}/plugin-artifacts/{sha256}.cwasm`, so a restart loads it without
//! compiling again.
//!
//! Each file is an HMAC-SHA256 tag followed by wasmtime's serialized component.
//! The tag covers a domain string, the plugin's sha256 and the serialized bytes,
//! under a per-install key that whoever opens the cache keeps. A file is read whole
//! into memory, its tag verified, and only then are those same in-memory bytes
//! given to `Component::deserialize` (never an mmap of a file that could change
//! underneath). Any mismatch means "compile again". Tenant bytes never reach
//! `deserialize`: only what this gateway serialized and tagged does.

use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use wasmtime::Engine;
use wasmtime::component::Component;

type HmacSha256 = Hmac<Sha256>;

/// The cache directory under the data dir.
const DIR: &str = "plugin-artifacts";
/// Separates these tags from any other use of the key.
const DOMAIN: &[u8] = b"hookgate plugin artifact v1\0";
/// The tag's length.
const TAG_BYTES: usize = 32;
/// Larger files are not read (a serialized plugin is a few MiB at most).
const MAX_ARTIFACT_BYTES: u64 = 64 << 20;

/// The cache of one data dir.
pub struct ArtifactCache {
    dir: PathBuf,
    key: [u8; 32],
}

impl std::fmt::Debug for ArtifactCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl ArtifactCache {
    /// A cache in `data_dir` under `key`.
    pub fn new(data_dir: &Path, key: [u8; 32]) -> Self {
        Self {
            dir: data_dir.join(DIR),
            key,
        }
    }

    /// Where the artifact of the plugin with this sha256 lives; `None` for a
    /// string that is not a sha256 in hex (it never names a path then).
    fn path(&self, sha256: &str) -> Option<PathBuf> {
        let hex = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then(|| self.dir.join(format!("{sha256}.cwasm")))
    }

    fn tag(&self, sha256: &str, serialized: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any size");
        mac.update(DOMAIN);
        mac.update(sha256.as_bytes());
        mac.update(serialized);
        mac
    }

    /// The cached component of the plugin with this sha256, if a file exists whose
    /// tag verifies and which this engine accepts.
    pub(crate) fn load(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let path = self.path(sha256)?;
        let len = std::fs::metadata(&path).ok()?.len();
        if len > MAX_ARTIFACT_BYTES {
            return None;
        }
        let file = std::fs::read(&path).ok()?;
        let (tag, serialized) = file.split_at_checked(TAG_BYTES)?;
        if self.tag(sha256, serialized).verify_slice(tag).is_err() {
            tracing::warn!(path = %path.display(), "plugin artifact tag does not verify; compiling again");
            return None;
        }
        match deserialize_verified(engine, serialized) {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::info!(error = %e, "plugin artifact is for another engine; compiling again");
                None
            }
        }
    }

    /// Caches `component` for the plugin with this sha256. Best effort: a failure
    /// only means compiling again next time.
    pub(crate) fn save(&self, sha256: &str, component: &Component) {
        let Some(path) = self.path(sha256) else {
            return;
        };
        let written = component
            .serialize()
            .map_err(|e| std::io::Error::other(format!("{e:#}")))
            .and_then(|serialized| {
                std::fs::create_dir_all(&self.dir)?;
                let mut file = self
                    .tag(sha256, &serialized)
                    .finalize()
                    .into_bytes()
                    .to_vec();
                file.extend_from_slice(&serialized);
                let tmp = path.with_extension("tmp");
                std::fs::write(&tmp, &file)?;
                std::fs::rename(&tmp, &path)
            });
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot cache a compiled plugin");
        }
    }

    /// Drops the artifact of the plugin with this sha256, if any.
    pub(crate) fn remove(&self, sha256: &str) {
        if let Some(path) = self.path(sha256) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The one audited `deserialize` site.
#[expect(
    unsafe_code,
    reason = "Component::deserialize trusts its input to be wasmtime's own output; \
              it only ever gets bytes this gateway serialized, held in memory after \
              their HMAC verified under the install's key"
)]
fn deserialize_verified(engine: &Engine, serialized: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: `serialized` is a byte slice in memory (not an mmap that could change)
    // whose HMAC-SHA256 tag under the per-install key was verified by the caller, so
    // it is exactly what `Component::serialize` produced in this install. wasmtime
    // itself checks that it matches this engine's version and configuration.
    unsafe { Component::deserialize(engine, serialized) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sha256_hex_names_a_file() {
        let cache = ArtifactCache::new(Path::new("/data"), [7; 32]);
        let sha = "a".repeat(64);
        assert_eq!(
            cache.path(&sha),
            Some(PathBuf::from(format!("/data/plugin-artifacts/{sha}.cwasm")))
        );
        assert_eq!(cache.path("../../etc/passwd"), None);
        assert_eq!(cache.path(&"g".repeat(64)), None);
        assert_eq!(cache.path(&"a".repeat(63)), None);
    }

    #[test]
    fn tags_bind_the_key_the_plugin_and_the_bytes() {
        let a = ArtifactCache::new(Path::new("/d"), [1; 32]);
        let b = ArtifactCache::new(Path::new("/d"), [2; 32]);
        let tag =
            |c: &ArtifactCache, sha: &str, bytes: &[u8]| c.tag(sha, bytes).finalize().into_bytes();
        assert_eq!(tag(&a, "s", b"x"), tag(&a, "s", b"x"));
        assert_ne!(tag(&a, "s", b"x"), tag(&b, "s", b"x"));
        assert_ne!(tag(&a, "s", b"x"), tag(&a, "t", b"x"));
        assert_ne!(tag(&a, "s", b"x"), tag(&a, "s", b"y"));
    }
}
