//! The WebAssembly plugin host: tenants' retry logic, sandboxed (docs/plugins.md).
//!
//! A plugin is a component of the `plugin` world of `hookgate:policy@0.3.0`
//! (`wit/policy-0.3.0.wit`, one `decide` call that also sees the destination's
//! kind, the error text and the brokers' failure kinds), of 0.2.0
//! (`wit/policy-0.2.0.wit`, one `decide`) or of 0.1.0 (`wit/policy.wit`,
//! `classify` and `next-delay`); a core module built for `wasm32-unknown-unknown`
//! is made one with the host's own world of the version its exports name, see
//! [`prepare`]. A plugin older than 0.3.0 is never asked about a failure kind
//! its version cannot name: the built-in decides those alone.
//!
//! [`PluginHost`] keeps the loaded plugins, one wasmtime engine with the
//! pooling allocator, and a dedicated decision pool. After each failed attempt of an
//! endpoint bound to a plugin, [`PluginHost::decide`] runs the decision chain: the
//! built-in decides first, the plugin may override it, the host clamps the delay and
//! applies the limits, and on **any** failure the built-in decides alone
//! (`decided_by` = `fallback:<reason>`). A plugin whose own failures reach 20 in a
//! row is disabled.
//!
//! The host is runtime only: what is stored, and when, is the plugin service's
//! (`crate::plugins`). [`PluginHost::check`] runs upload checks 1–9,
//! [`PluginHost::install`] makes a checked version active, and
//! [`PluginHost::restore`] loads a stored one again at start through the
//! HMAC-verified [`ArtifactCache`]. Disabling a version is reported as a
//! [`PluginEvent`] to whoever [subscribed](PluginHost::subscribe).
//!
//! Files: `bindings` (the `bindgen!`s, one per version), `versions` (which
//! version a plugin implements, and [`WitVersion`]), `engine`, `instance_pool`,
//! `state` and `clocks` (the engine, its instance pool and how a freed slot is
//! reset, limits, one store per decision, the epoch and the CPU clock),
//! `componentize` (upload steps 1–4), `conformance` (step 9), `checks` (steps
//! 1–9, the `UploadChecker`), `installs` (the loaded plugins and changing them),
//! `artifacts`, `events`, `chain` (the decision rules), `input` (the WIT
//! `attempt` record), `budget` and `dispatch` (a decision runs inline with a
//! small budget, and escalates to the pool), `decision_pool` and `shares` (the
//! decision threads, and each tenant's fair share of them), `registry`, `health`
//! and `host` (the face, holding the parts).

mod artifacts;
mod bindings;
#[cfg(test)]
mod broker_tests;
mod budget;
mod chain;
#[cfg(test)]
mod check_tests;
mod checks;
mod clocks;
mod componentize;
mod conformance;
mod decision_pool;
mod dispatch;
mod engine;
mod events;
#[cfg(test)]
mod fairness_tests;
mod health;
mod host;
#[cfg(test)]
mod inline_tests;
mod input;
mod installs;
mod instance_pool;
#[cfg(test)]
mod isolation_tests;
mod registry;
mod shares;
mod state;
#[cfg(test)]
mod tests;
mod transform;
mod transform_conformance;
mod versions;

use std::path::PathBuf;

pub(crate) use artifacts::ArtifactCache;
pub use checks::COMPILE_LIMIT;
pub use checks::CheckedPlugin;
pub use checks::UPLOAD_CHECKS;
pub(crate) use checks::UploadChecks;
pub(crate) use clocks::SPINNING_CPU;
pub(crate) use componentize::prepare;
pub(crate) use dispatch::DecisionPaths;
pub use engine::FUEL_PER_DECISION;
pub use engine::FUEL_PER_TRANSFORM;
pub use engine::MEMORY_LIMIT_BYTES;
pub(crate) use engine::Usage;
pub(crate) use events::PluginEvent;
pub(crate) use health::{DISABLE_AFTER_FAILURES, PluginStatus, RunCounts};
pub use host::PluginHost;
pub(crate) use host::PreloadFile;
pub use input::PluginInput;
pub(crate) use installs::{MissingBytes, StoredPlugin, StoredVersion};
pub(crate) use instance_pool::{DEFAULT_SLOTS, PoolUsage, SLOTS_RANGE};
pub(crate) use registry::{PluginSource, PluginView, plugin_label};
pub use transform::{
    TransformFacts, TransformFailure, TransformMethod, TransformRequest, TransformRun, Transformed,
};
pub use versions::{PluginKind, WitVersion};

/// Why a plugin could not be loaded, or the host not started.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The plugin file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Over the upload size limit.
    #[error("plugin is {size} bytes; the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    /// Not valid WebAssembly.
    #[error("not valid WebAssembly: {0}")]
    Invalid(String),
    /// A core module that does not fit the `plugin` world.
    #[error("the module does not fit the hookgate:policy plugin world: {0}")]
    Componentize(String),
    /// The component does not compile.
    #[error("the component does not compile: {0}")]
    Compile(String),
    /// The plugin imports something; plugins may import nothing (no WASI).
    #[error("it imports {0}; a plugin may import nothing")]
    Imports(String),
    /// The component needs more than the limits allow.
    #[error("the component needs too much: {0}")]
    Resources(String),
    /// The component does not export a `decide` interface the host accepts, with
    /// its exact types.
    #[error(
        "the component does not export hookgate:policy/decide@0.3.0, \
         hookgate:policy/decide@0.2.0 or hookgate:policy/decide@0.1.0 as expected: {0}"
    )]
    Exports(String),
    /// The conformance run (upload step 9) failed: an error, an overrun, or
    /// answers that differ between runs.
    #[error("conformance: {0}")]
    Conformance(String),
    /// The engine or its threads could not start.
    #[error("plugin engine: {0}")]
    Engine(String),
    /// A `[[plugins.preload]]` entry failed; names the file.
    #[error("plugin {tenant}/{name} from {path}: {source}")]
    Preload {
        tenant: String,
        name: String,
        path: PathBuf,
        source: Box<PluginError>,
    },
}

impl PluginError {
    /// The upload check (docs/plugins.md) that refused the plugin, as `"<n> <name>"`; `None` for
    /// errors that are not a refusal (reading a file, the engine).
    pub fn check(&self) -> Option<&'static str> {
        Some(match self {
            Self::TooLarge { .. } => "1 size",
            Self::Invalid(_) => "3 validation",
            Self::Componentize(_) => "4 componentize",
            Self::Compile(_) => "5 compile",
            Self::Imports(_) => "6 imports",
            Self::Exports(_) => "7 exports",
            Self::Resources(_) => "8 resources",
            Self::Conformance(_) => "9 conformance",
            Self::Read { .. } | Self::Engine(_) | Self::Preload { .. } => return None,
        })
    }
}

/// An endpoint's plugin binding: `name` (the active version) or `name@version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginBinding<'a> {
    /// The tenant that owns the plugin (the endpoint's tenant).
    pub tenant: &'a str,
    /// The plugin's name.
    pub name: &'a str,
    /// A pinned version; `None` follows the active one.
    pub version: Option<u32>,
}

impl<'a> PluginBinding<'a> {
    /// Parses an endpoint's `plugin` field; `None` if it is not `name` or
    /// `name@<positive integer>`.
    pub fn parse(tenant: &'a str, spec: &'a str) -> Option<Self> {
        let (name, version) = match spec.split_once('@') {
            Some((name, v)) => (name, Some(v.parse::<u32>().ok().filter(|v| *v > 0)?)),
            None => (spec, None),
        };
        (!name.is_empty()).then_some(Self {
            tenant,
            name,
            version,
        })
    }
}
