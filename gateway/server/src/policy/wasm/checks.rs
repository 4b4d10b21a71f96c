//! The upload checks (steps 1–9): what a plugin must pass before it is stored
//! and installed.

use std::time::{Duration, Instant};

use wasmtime::component::Component;

use super::bindings::PluginPre;
use super::conformance::{self, ConformanceReport};
use super::state::PluginState;
use super::{PluginError, PluginHost, prepare};

/// The longest checks 1–9 of one upload may take.
pub const COMPILE_LIMIT: Duration = Duration::from_secs(10);

/// A plugin that passed upload checks 1–9, ready to be stored and installed.
pub struct CheckedPlugin {
    /// SHA-256 of the bytes as uploaded, hex.
    pub sha256: String,
    /// Size of the bytes as uploaded.
    pub size: u64,
    /// Whether a core module was made a component of the host's world (step 4).
    pub componentized: bool,
    /// How long step 5 took.
    pub compile_ms: u64,
    /// The largest initial linear memory, in bytes (step 8).
    pub initial_memory: u64,
    /// What the conformance samples used (step 9).
    pub conformance: ConformanceReport,
    pub(super) component: Component,
    pub(super) pre: PluginPre<PluginState>,
}

impl std::fmt::Debug for CheckedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedPlugin")
            .field("sha256", &self.sha256)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl PluginHost {
    /// Upload checks 1–9 (docs/plugins.md), in order: size, sha256, validation, componentizing a
    /// core module with the host's own world, compile, no imports, `instantiate_pre`
    /// with the typed exports, memory, and conformance. No tenant code runs before
    /// step 9. Blocking: callers run it on a blocking thread, within
    /// [`COMPILE_LIMIT`].
    ///
    /// # Errors
    /// The [`PluginError`] of the first check that failed; see
    /// [`PluginError::check`].
    pub fn check(&self, bytes: &[u8]) -> Result<CheckedPlugin, PluginError> {
        let prepared = prepare(bytes, self.max_bytes)?;
        let started = Instant::now();
        let component = self.sandbox.compile(&prepared.component)?;
        let compile_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let pre = self.sandbox.pre(&component)?;
        let conformance = conformance::check(&self.sandbox, &pre)?;
        Ok(CheckedPlugin {
            sha256: prepared.sha256,
            size: bytes.len() as u64,
            componentized: prepared.componentized,
            compile_ms,
            initial_memory: super::componentize::largest_initial_memory(&prepared.component)
                .unwrap_or(0),
            conformance,
            component,
            pre,
        })
    }
}
