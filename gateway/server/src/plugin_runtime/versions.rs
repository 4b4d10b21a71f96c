//! The WIT versions the host accepts (`hookgate:policy`'s and
//! `hookgate:transform`'s, each a [`PluginKind`]), and [`PluginPre`]: a plugin
//! pre-instantiated for the version it implements.
//!
//! 0.1.0 answers in two calls (`classify`, then `next-delay` on a retry); 0.2.0
//! and 0.3.0 in one (`decide`), 0.3.0 also told the destination's kind, the
//! error text and the brokers' failure kinds. The host builds one attempt
//! record, in the newest version's types, moves it into the plugin's version
//! once per decision ([`PluginPre::attempt`]), and converts the answer back, so
//! everything past the call sees one [`PluginAnswer`] whatever the version. An
//! older version has no name for a broker's failure kind: such an attempt has
//! no record in it, and the host never asks that plugin (the built-in decides).

use wasmtime::AsContextMut;
use wasmtime::component::InstancePre;

use super::bindings::{
    Attempt, Decision, Delay, FailureKind, Outcome, Verdict, t0_1, v0_1, v0_2, v0_3,
};
use super::chain::{PluginAnswer, wants_delay};
use super::state::PluginState;

/// What a plugin is for: deciding after an attempt, or shaping it before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// A retry policy (`hookgate:policy`), bound by an endpoint's `plugin`.
    Policy,
    /// A payload transform (`hookgate:transform`), bound by its `transform`.
    Transform,
}

impl PluginKind {
    /// The kind's name in the API: `policy` or `transform`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::Transform => "transform",
        }
    }
}

/// A version of a WIT package a plugin implements: one of `hookgate:policy`'s,
/// or `hookgate:transform`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    /// `hookgate:policy@0.1.0` (`wit/policy.wit`): `classify`, then `next-delay`.
    V0_1_0,
    /// `hookgate:policy@0.2.0` (`wit/policy-0.2.0.wit`): one `decide`.
    V0_2_0,
    /// `hookgate:policy@0.3.0` (`wit/policy-0.3.0.wit`): one `decide`, told the
    /// destination's kind, the error text and the brokers' failure kinds.
    V0_3_0,
    /// `hookgate:transform@0.1.0` (`wit/transform-0.1.0.wit`): one `transform`.
    Transform0_1_0,
}

impl WitVersion {
    /// Every accepted version, policies newest first (the one detection
    /// prefers when a plugin exports several), then the transform's.
    pub const ALL: [Self; 4] = [
        Self::V0_3_0,
        Self::V0_2_0,
        Self::V0_1_0,
        Self::Transform0_1_0,
    ];

    /// Whether a plugin of this version is a policy or a transform.
    pub fn kind(self) -> PluginKind {
        match self {
            Self::Transform0_1_0 => PluginKind::Transform,
            Self::V0_1_0 | Self::V0_2_0 | Self::V0_3_0 => PluginKind::Policy,
        }
    }

    /// The package, e.g. `hookgate:policy@0.3.0`.
    pub fn package(self) -> String {
        let interface = self.interface();
        let (name, _) = interface.split_once('/').unwrap_or((interface, ""));
        format!("{name}@{self}")
    }

    /// The exported interface, e.g. `hookgate:policy/decide@0.2.0`.
    pub fn interface(self) -> &'static str {
        match self {
            Self::V0_1_0 => "hookgate:policy/decide@0.1.0",
            Self::V0_2_0 => "hookgate:policy/decide@0.2.0",
            Self::V0_3_0 => "hookgate:policy/decide@0.3.0",
            Self::Transform0_1_0 => "hookgate:transform/transform@0.1.0",
        }
    }

    /// The world a plugin of this version implements, e.g. `hookgate:policy/plugin@0.2.0`.
    pub fn world(self) -> &'static str {
        match self {
            Self::V0_1_0 => "hookgate:policy/plugin@0.1.0",
            Self::V0_2_0 => "hookgate:policy/plugin@0.2.0",
            Self::V0_3_0 => "hookgate:policy/plugin@0.3.0",
            Self::Transform0_1_0 => "hookgate:transform/transform-plugin@0.1.0",
        }
    }

    /// The world's name within its package, e.g. `plugin`.
    pub(crate) fn world_name(self) -> &'static str {
        let world = self.world();
        let start = world.find('/').map_or(0, |i| i + 1);
        let end = world.find('@').unwrap_or(world.len());
        &world[start..end]
    }

    /// The functions the interface exports, as WIT names them.
    pub fn functions(self) -> &'static [&'static str] {
        match self {
            Self::V0_1_0 => &["classify", "next-delay"],
            Self::V0_2_0 | Self::V0_3_0 => &["decide"],
            Self::Transform0_1_0 => &["transform"],
        }
    }

    /// The package's file name in `wit/` and its text.
    pub(crate) fn wit_file(self) -> (&'static str, &'static str) {
        match self {
            Self::V0_1_0 => ("policy.wit", super::bindings::WIT_TEXT_0_1),
            Self::V0_2_0 => ("policy-0.2.0.wit", super::bindings::WIT_TEXT_0_2),
            Self::V0_3_0 => ("policy-0.3.0.wit", super::bindings::WIT_TEXT_0_3),
            Self::Transform0_1_0 => (
                "transform-0.1.0.wit",
                super::bindings::WIT_TEXT_TRANSFORM_0_1,
            ),
        }
    }

    /// The core-module export that marks a module built for this version: its
    /// first function's canonical-ABI name, e.g. `hookgate:policy/decide@0.2.0#decide`.
    pub fn core_export(self) -> String {
        format!("{}#{}", self.interface(), self.functions()[0])
    }

    /// The version a core module's export names mark, the newest when several.
    pub(crate) fn of_core_exports(names: &[&str]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|v| names.contains(&v.core_export().as_str()))
    }

    /// The version whose interface a component's export names include, the
    /// newest when several.
    pub(crate) fn of_component_exports(names: &[&str]) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|v| names.contains(&v.interface()))
    }
}

impl std::fmt::Display for WitVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::V0_1_0 => "0.1.0",
            Self::V0_2_0 => "0.2.0",
            Self::V0_3_0 => "0.3.0",
            Self::Transform0_1_0 => "0.1.0",
        })
    }
}

/// A compiled plugin with typed exports, ready to instantiate, for its version.
pub(crate) enum PluginPre {
    V0_1(v0_1::PluginPre<PluginState>),
    V0_2(v0_2::PluginPre<PluginState>),
    V0_3(v0_3::PluginPre<PluginState>),
    Transform(t0_1::TransformPluginPre<PluginState>),
}

/// The attempt record in the types of the version a plugin implements.
#[derive(Debug, Clone)]
pub(crate) enum PluginAttempt {
    V0_1(v0_1::exports::hookgate::policy::decide::Attempt),
    V0_2(v0_2::exports::hookgate::policy::decide::Attempt),
    V0_3(Attempt),
}

/// One instance of a plugin, for its version.
pub(crate) enum Plugin {
    V0_1(v0_1::Plugin),
    V0_2(v0_2::Plugin),
    V0_3(v0_3::Plugin),
    Transform(t0_1::TransformPlugin),
}

impl PluginPre {
    /// Types `pre`'s exports as the version whose interface its component exports
    /// (the newest when it exports several).
    ///
    /// # Errors
    /// When it exports no accepted interface (naming what it does export), or the
    /// exported one's types differ from the WIT.
    pub(crate) fn new(pre: InstancePre<PluginState>) -> wasmtime::Result<Self> {
        let component_type = pre.component().component_type();
        let exports: Vec<&str> = component_type
            .exports(pre.engine())
            .map(|(name, _)| name)
            .collect();
        match WitVersion::of_component_exports(&exports) {
            Some(WitVersion::V0_3_0) => Ok(Self::V0_3(v0_3::PluginPre::new(pre)?)),
            Some(WitVersion::V0_2_0) => Ok(Self::V0_2(v0_2::PluginPre::new(pre)?)),
            Some(WitVersion::V0_1_0) => Ok(Self::V0_1(v0_1::PluginPre::new(pre)?)),
            Some(WitVersion::Transform0_1_0) => {
                Ok(Self::Transform(t0_1::TransformPluginPre::new(pre)?))
            }
            None if exports.is_empty() => Err(wasmtime::format_err!("it exports nothing")),
            None => Err(wasmtime::format_err!("it exports {}", exports.join(", "))),
        }
    }

    /// The version the plugin implements.
    pub(crate) fn version(&self) -> WitVersion {
        match self {
            Self::V0_1(_) => WitVersion::V0_1_0,
            Self::V0_2(_) => WitVersion::V0_2_0,
            Self::V0_3(_) => WitVersion::V0_3_0,
            Self::Transform(_) => WitVersion::Transform0_1_0,
        }
    }

    /// `attempt` in the types of this plugin's version, moved, not copied;
    /// `None` when the version has no name for its failure kind (a broker's,
    /// before 0.3.0), or for a transform, which decides nothing: the plugin is
    /// not to be asked about it.
    pub(crate) fn attempt(&self, attempt: Attempt) -> Option<PluginAttempt> {
        Some(match self {
            Self::V0_1(_) => PluginAttempt::V0_1(attempt_0_1(attempt)?),
            Self::V0_2(_) => PluginAttempt::V0_2(attempt_0_2(attempt)?),
            Self::V0_3(_) => PluginAttempt::V0_3(attempt),
            Self::Transform(_) => return None,
        })
    }

    /// Instantiates the plugin in `store`.
    ///
    /// # Errors
    /// Whatever instantiation raised (a trap in a start function, the limits).
    pub(crate) fn instantiate(
        &self,
        store: impl AsContextMut<Data = PluginState>,
    ) -> wasmtime::Result<Plugin> {
        Ok(match self {
            Self::V0_1(pre) => Plugin::V0_1(pre.instantiate(store)?),
            Self::V0_2(pre) => Plugin::V0_2(pre.instantiate(store)?),
            Self::V0_3(pre) => Plugin::V0_3(pre.instantiate(store)?),
            Self::Transform(pre) => Plugin::Transform(pre.instantiate(store)?),
        })
    }
}

/// The host's records in an older version's types: one macro, since 0.1.0's and
/// 0.2.0's `attempt`, `outcome`, `failure-kind` and `verdict` are the same, and
/// both lack 0.3.0's `destination`, `error-message` and broker kinds.
macro_rules! attempt_before_0_3 {
    ($name:ident, $module:ident, $version:literal) => {
        #[doc = concat!("The host's attempt record in ", $version, "'s types; `None` for a")]
        /// failure kind only a broker reports, which that version cannot name.
        pub(crate) fn $name(
            a: Attempt,
        ) -> Option<$module::exports::hookgate::policy::decide::Attempt> {
            use $module::exports::hookgate::policy::decide as wit;
            let outcome = match a.outcome {
                Outcome::Status(status) => wit::Outcome::Status(status),
                Outcome::Failure(kind) => wit::Outcome::Failure(match kind {
                    FailureKind::Timeout => wit::FailureKind::Timeout,
                    FailureKind::Connect => wit::FailureKind::Connect,
                    FailureKind::Dns => wit::FailureKind::Dns,
                    FailureKind::Tls => wit::FailureKind::Tls,
                    FailureKind::Reset => wit::FailureKind::Reset,
                    FailureKind::Redirect => wit::FailureKind::Redirect,
                    FailureKind::Protocol => wit::FailureKind::Protocol,
                    FailureKind::AuthRefused
                    | FailureKind::NotFound
                    | FailureKind::TooLarge
                    | FailureKind::Throttled
                    | FailureKind::Rejected => return None,
                }),
            };
            let builtin_verdict = match a.builtin_verdict {
                Verdict::Delivered => wit::Verdict::Delivered,
                Verdict::Retry => wit::Verdict::Retry,
                Verdict::GiveUp(reason) => wit::Verdict::GiveUp(reason),
                Verdict::UseDefault => wit::Verdict::UseDefault,
            };
            Some(wit::Attempt {
                attempt: a.attempt,
                max_attempts: a.max_attempts,
                elapsed_ms: a.elapsed_ms,
                outcome,
                retry_after_ms: a.retry_after_ms,
                headers: a.headers,
                body: a.body,
                event_type: a.event_type,
                builtin_verdict,
                builtin_delay_ms: a.builtin_delay_ms,
                seed: a.seed,
            })
        }
    };
}

attempt_before_0_3!(attempt_0_1, v0_1, "0.1.0");
attempt_before_0_3!(attempt_0_2, v0_2, "0.2.0");

/// A 0.1.0 `classify` answer in the host's types.
pub(crate) fn verdict_0_1(verdict: v0_1::exports::hookgate::policy::decide::Verdict) -> Verdict {
    use v0_1::exports::hookgate::policy::decide as wit;
    match verdict {
        wit::Verdict::Delivered => Verdict::Delivered,
        wit::Verdict::Retry => Verdict::Retry,
        wit::Verdict::GiveUp(reason) => Verdict::GiveUp(reason),
        wit::Verdict::UseDefault => Verdict::UseDefault,
    }
}

/// A 0.1.0 `next-delay` answer in the host's types.
pub(crate) fn delay_0_1(delay: v0_1::exports::hookgate::policy::decide::Delay) -> Delay {
    use v0_1::exports::hookgate::policy::decide as wit;
    match delay {
        wit::Delay::AfterMs(ms) => Delay::AfterMs(ms),
        wit::Delay::GiveUp(reason) => Delay::GiveUp(reason),
        wit::Delay::UseDefault => Delay::UseDefault,
    }
}

/// A 0.2.0 decision as the host's answer (see [`answer_0_3`]).
pub(crate) fn answer_0_2(
    decision: v0_2::exports::hookgate::policy::decide::Decision,
    builtin_retry: bool,
) -> PluginAnswer {
    use v0_2::exports::hookgate::policy::decide as wit;
    let verdict = match decision.verdict {
        wit::Verdict::Delivered => Verdict::Delivered,
        wit::Verdict::Retry => Verdict::Retry,
        wit::Verdict::GiveUp(reason) => Verdict::GiveUp(reason),
        wit::Verdict::UseDefault => Verdict::UseDefault,
    };
    let delay = match decision.delay {
        wit::Delay::AfterMs(ms) => Delay::AfterMs(ms),
        wit::Delay::GiveUp(reason) => Delay::GiveUp(reason),
        wit::Delay::UseDefault => Delay::UseDefault,
    };
    answer_0_3(Decision { verdict, delay }, builtin_retry)
}

/// A one-call decision as the host's answer: its delay is kept only when the
/// final verdict is retry, as if `next-delay` had been called then alone.
pub(crate) fn answer_0_3(decision: Decision, builtin_retry: bool) -> PluginAnswer {
    let delay = wants_delay(&decision.verdict, builtin_retry).then_some(decision.delay);
    PluginAnswer {
        verdict: decision.verdict,
        delay,
    }
}

#[cfg(test)]
mod tests;
