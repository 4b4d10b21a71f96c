//! The upload checks (steps 1–9): what a plugin must pass before it is stored
//! and installed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;

use super::componentize::PreparedPlugin;
use super::conformance::{self, ConformanceReport};
use super::engine::Sandbox;
use super::versions::{PluginPre, WitVersion};
use super::{PluginError, prepare};

/// The longest checks 1–9 of one upload may take.
pub const COMPILE_LIMIT: Duration = Duration::from_secs(10);

/// The upload checks, as `"<n> <name>"` in the order they run (docs/plugins.md).
pub const UPLOAD_CHECKS: [&str; 9] = [
    "1 size",
    "2 sha256",
    "3 validation",
    "4 componentize",
    "5 compile",
    "6 imports",
    "7 exports",
    "8 resources",
    "9 conformance",
];

/// What a version's upload checks found. The plugin service stores it with the
/// version (as the store's own record), and the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadChecks {
    /// The checks passed, as [`UPLOAD_CHECKS`] names them, in the order they ran.
    pub passed: Vec<String>,
    /// The most fuel one conformance sample used (check 9).
    pub fuel_used: u64,
    /// The fuel a decision may use.
    pub fuel_limit: u64,
    /// The most memory one conformance sample used, in bytes (check 9).
    pub memory_used_bytes: u64,
    /// The memory a decision may use, in bytes.
    pub memory_limit_bytes: u64,
}

/// A plugin that passed upload checks 1–9, ready to be stored and installed.
pub struct CheckedPlugin {
    /// SHA-256 of the bytes as uploaded, hex.
    pub sha256: String,
    /// Size of the bytes as uploaded.
    pub size: u64,
    /// Whether a core module was made a component of the host's world (step 4).
    pub componentized: bool,
    /// The `hookgate:policy` version the plugin implements (steps 4 and 7).
    pub wit: WitVersion,
    /// How long step 5 took.
    pub compile_ms: u64,
    /// The largest initial linear memory, in bytes (step 8).
    pub initial_memory: u64,
    /// What the conformance samples used (step 9).
    pub conformance: ConformanceReport,
    pub(super) component: Component,
    pub(super) pre: PluginPre,
}

impl std::fmt::Debug for CheckedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedPlugin")
            .field("sha256", &self.sha256)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl CheckedPlugin {
    /// The results to store with the version: every check passed, and the most
    /// fuel and memory a conformance sample used (what `plugin-check` calls
    /// "most used").
    pub fn results(&self) -> UploadChecks {
        let report = &self.conformance;
        let most = |used: fn(&super::Usage) -> u64| {
            report
                .samples
                .iter()
                .map(|s| used(&s.usage))
                .max()
                .unwrap_or(0)
        };
        UploadChecks {
            passed: UPLOAD_CHECKS.iter().map(|c| (*c).to_owned()).collect(),
            fuel_used: most(|u| u.fuel),
            fuel_limit: report.fuel_limit,
            memory_used_bytes: most(|u| u.memory_bytes as u64),
            memory_limit_bytes: report.memory_limit as u64,
        }
    }
}

/// Runs the upload checks: the engine to compile and instantiate with, and the
/// largest plugin accepted.
pub(super) struct UploadChecker {
    sandbox: Arc<Sandbox>,
    max_bytes: usize,
}

impl UploadChecker {
    pub(super) fn new(sandbox: Arc<Sandbox>, max_bytes: usize) -> Self {
        Self { sandbox, max_bytes }
    }

    /// Checks 1–8 of a preloaded file, which never runs the conformance samples:
    /// its bytes prepared and pre-instantiated, with its SHA-256 and whether it
    /// was componentized.
    ///
    /// # Errors
    /// The [`PluginError`] of the first check that failed.
    pub(super) fn prepare_preloaded(
        &self,
        bytes: &[u8],
    ) -> Result<(PluginPre, PreparedPlugin), PluginError> {
        let prepared = prepare(bytes, self.max_bytes)?;
        let pre = self.sandbox.prepare(&prepared.component)?;
        Ok((pre, prepared))
    }

    /// Upload checks 1–9, in order (see [`super::PluginHost::check`]).
    ///
    /// # Errors
    /// The [`PluginError`] of the first check that failed.
    pub(super) fn check(&self, bytes: &[u8]) -> Result<CheckedPlugin, PluginError> {
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
            wit: pre.version(),
            compile_ms,
            initial_memory: super::componentize::largest_initial_memory(&prepared.component)
                .unwrap_or(0),
            conformance,
            component,
            pre,
        })
    }
}
