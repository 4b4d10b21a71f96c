//! Write hookgate retry policies and payload transforms in Rust.
//!
//! Transforms ([`Transform`], exported with [`export_transform!`]) shape the
//! request of an attempt before hookgate signs it; see the `transform` module's
//! types and `docs/transforms.md`. The rest of this page is about policies.
//!
//! A policy is a type implementing [`RetryPolicy`]. Both methods default to
//! "use the built-in policy's answer", so a policy overrides only what it cares
//! about. [`export_policy!`] exports it as the `hookgate:policy/decide@0.3.0`
//! interface, one `decide` call per attempt, when built for
//! `wasm32-unknown-unknown`; natively it expands to nothing, so
//! `cargo test` exercises the policy through [`Attempt::builder`] and [`decide`]
//! without any WebAssembly.
//!
//! An [`Attempt`] says what the attempt produced (a status, or a
//! [`FailureKind`]: a transport's, or one only brokers report such as
//! `AuthRefused` or `TooLarge`), which kind of destination it went to
//! ([`DestinationKind`]), the transport's or broker's error text, the response,
//! and the built-in policy's own answer.
//!
//! The gateway stays in charge: it clamps every delay to between 1 s and the
//! endpoint's `max_delay`, applies `max_attempts` and `retry_window`, and uses
//! its built-in policy whenever a plugin traps, runs out of fuel (about 1 ms of
//! work per decision) or memory (16 MiB).
//!
//! # Example
//!
//! A policy that retries a 409 Conflict after ten seconds, gives up when the
//! receiver says the account is gone, and leaves everything else to the built-in:
//!
//! ```
//! use hookgate_plugin_sdk::{Attempt, Delay, RetryPolicy, Verdict, decide, export_policy};
//!
//! #[derive(Default)]
//! struct Conflicts;
//!
//! impl RetryPolicy for Conflicts {
//!     fn classify(&self, a: &Attempt) -> Verdict {
//!         if a.json_str("error").as_deref() == Some("account_gone") {
//!             return Verdict::GiveUp("account gone".into());
//!         }
//!         match a.status() {
//!             Some(409) => Verdict::Retry,
//!             _ => Verdict::UseDefault,
//!         }
//!     }
//!
//!     fn next_delay(&self, a: &Attempt) -> Delay {
//!         match a.status() {
//!             Some(409) => Delay::AfterMs(10_000),
//!             _ => Delay::UseDefault,
//!         }
//!     }
//! }
//!
//! export_policy!(Conflicts);
//!
//! // Natively, the same policy runs through the harness the way the host calls it.
//! let conflict = Attempt::builder().status(409).build();
//! let d = decide(&Conflicts, &conflict);
//! assert_eq!(d.verdict, Verdict::Retry);
//! assert_eq!(d.delay, Some(Delay::AfterMs(10_000)));
//!
//! let gone = Attempt::builder().status(400).body(r#"{"error":"account_gone"}"#).build();
//! assert_eq!(decide(&Conflicts, &gone).verdict, Verdict::GiveUp("account gone".into()));
//!
//! // A 503 is left to the built-in, which retries it after its own delay.
//! let d = decide(&Conflicts, &Attempt::builder().status(503).build());
//! assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, Some(Delay::UseDefault)));
//! ```
//!
//! A policy for a broker destination reads the failure kind, the destination
//! and the broker's words:
//!
//! ```
//! use hookgate_plugin_sdk::{Attempt, DestinationKind, FailureKind, RetryPolicy, Verdict, decide};
//!
//! #[derive(Default)]
//! struct Brokers;
//!
//! impl RetryPolicy for Brokers {
//!     fn classify(&self, a: &Attempt) -> Verdict {
//!         match (a.failure(), a.destination) {
//!             (Some(FailureKind::TooLarge), _) => Verdict::GiveUp(a.error_message.clone()),
//!             (Some(FailureKind::Rejected), DestinationKind::Rabbitmq) => Verdict::Retry,
//!             _ => Verdict::UseDefault,
//!         }
//!     }
//! }
//!
//! let too_large = Attempt::builder()
//!     .failure(FailureKind::TooLarge)
//!     .destination(DestinationKind::Redis)
//!     .error_message("ERR string exceeds maximum allowed size")
//!     .build();
//! let d = decide(&Brokers, &too_large);
//! assert_eq!(d.verdict, Verdict::GiveUp("ERR string exceeds maximum allowed size".into()));
//! ```
//!
//! Build it with `cargo build --release --target wasm32-unknown-unknown`
//! (crate type `cdylib`), check it with `hookgate plugin-check FILE`, and upload
//! the `.wasm` with `PUT /v1/tenants/{t}/plugins/{name}`. `docs/plugins.md` walks
//! through every step.
//!
//! # Allocator
//!
//! On `wasm32` the SDK installs a `#[global_allocator]` that serves the heap from
//! a fixed 512 KiB arena in the module's initial memory and never frees (each
//! instance lives for one decision), so a decision does not grow memory; what
//! does not fit goes to the standard allocator. A plugin that wants its own
//! allocator turns off the default feature `arena-allocator`.

#[cfg(any(test, all(target_arch = "wasm32", feature = "arena-allocator")))]
mod arena;
mod attempt;
mod response;

/// The guest's heap: a fixed arena in the module's initial memory, so that a
/// decision never grows memory (see the `arena` module; opt out by turning off
/// default features). 512 KiB is far more than a decision needs (a 4 KiB body,
/// a few headers, a parsed JSON document) and small next to the 16 MiB limit.
#[cfg(all(target_arch = "wasm32", feature = "arena-allocator"))]
#[global_allocator]
static ALLOCATOR: arena::Arena<{ 512 * 1024 }> = arena::Arena::new();

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
#[path = "export.rs"]
pub mod __private;
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
#[path = "transform_export.rs"]
pub mod __private_transform;
mod json_fields;
mod transform;

pub use attempt::{Attempt, AttemptBuilder, Delay, DestinationKind, FailureKind, Outcome, Verdict};
pub use response::parse_retry_after;
pub use transform::{
    Answer, Endpoint, Event, Method, Request, Transform, TransformInput, form_encode,
};

/// A retry policy. Each method answers one of the two questions the gateway asks
/// after a failed attempt; the defaults defer to the built-in policy. The
/// exported `decide` asks `classify`, then `next_delay` only when the final
/// verdict is retry, and returns both answers at once.
///
/// The gateway creates the policy with `Default` for every decision, in a fresh
/// instance, so it must not rely on state kept between calls; for randomness use
/// [`Attempt::seed`], which is the same for the same attempt.
pub trait RetryPolicy {
    /// Whether the attempt's outcome is worth another attempt.
    fn classify(&self, attempt: &Attempt) -> Verdict {
        let _ = attempt;
        Verdict::UseDefault
    }

    /// How long to wait; asked only when the final verdict is retry.
    fn next_delay(&self, attempt: &Attempt) -> Delay {
        let _ = attempt;
        Delay::UseDefault
    }
}

/// A policy's answers to one attempt, as the host would collect them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `classify`'s answer.
    pub verdict: Verdict,
    /// `next_delay`'s answer, when it was asked (the final verdict was retry).
    pub delay: Option<Delay>,
}

/// Runs `policy` on `attempt` the way the host does: `classify`, then
/// `next_delay` only when the final verdict is retry (`use-default` meaning the
/// attempt's built-in verdict). The native test harness.
pub fn decide<P: RetryPolicy + ?Sized>(policy: &P, attempt: &Attempt) -> Decision {
    let verdict = policy.classify(attempt);
    let retry = match &verdict {
        Verdict::Retry => true,
        Verdict::UseDefault => attempt.builtin_verdict == Verdict::Retry,
        Verdict::Delivered | Verdict::GiveUp(_) => false,
    };
    let delay = retry.then(|| policy.next_delay(attempt));
    Decision { verdict, delay }
}

/// Exports a [`RetryPolicy`] (which must implement `Default`) as the plugin's
/// `hookgate:policy/decide@0.3.0` interface: its `decide` runs the policy as
/// [`decide`] does. Use it once per plugin crate, at the top level. It expands to
/// nothing unless the target is `wasm32`.
#[macro_export]
macro_rules! export_policy {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[allow(unsafe_code, reason = "wit-bindgen's generated export glue")]
        const _: () = {
            struct HookgatePolicyExport;
            impl $crate::__private::Guest for HookgatePolicyExport {
                fn decide(a: $crate::__private::WitAttempt) -> $crate::__private::WitDecision {
                    $crate::__private::decide::<$policy>(a)
                }
            }
            $crate::__private::bindings::export_plugin!(
                HookgatePolicyExport with_types_in $crate::__private::bindings
            );
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Defaults;
    impl RetryPolicy for Defaults {}

    #[test]
    fn defaults_use_the_builtin_and_delay_only_on_retry() {
        let retry = decide(&Defaults, &Attempt::builder().status(503).build());
        assert_eq!(
            (retry.verdict, retry.delay),
            (Verdict::UseDefault, Some(Delay::UseDefault))
        );
        let give_up = decide(&Defaults, &Attempt::builder().status(404).build());
        assert_eq!(give_up.delay, None);
        let timeout = Attempt::builder().failure(FailureKind::Timeout).build();
        assert_eq!(timeout.status(), None);
        assert_eq!(timeout.failure(), Some(FailureKind::Timeout));
        assert_eq!(timeout.builtin_verdict, Verdict::Retry);
        assert_eq!(timeout.destination, DestinationKind::Http);
        assert_eq!(timeout.error_message, "");
    }

    #[test]
    fn the_builders_builtin_follows_the_default_error_rules_for_broker_kinds() {
        let on = |kind, attempt| {
            Attempt::builder()
                .failure(kind)
                .attempt(attempt)
                .destination(DestinationKind::Rabbitmq)
                .build()
                .builtin_verdict
        };
        assert_eq!(
            on(FailureKind::TooLarge, 1),
            Verdict::GiveUp("too_large: the default gives up at once".into())
        );
        assert_eq!(on(FailureKind::AuthRefused, 2), Verdict::Retry);
        assert_eq!(
            on(FailureKind::NotFound, 3),
            Verdict::GiveUp("not_found on 3 attempts: the default gives up after 3".into())
        );
        for kind in [FailureKind::Throttled, FailureKind::Rejected] {
            assert_eq!(on(kind, 9), Verdict::Retry, "{kind:?}");
        }
        // With no retry from the built-in, a default policy is asked for no delay.
        let d = decide(
            &Defaults,
            &Attempt::builder().failure(FailureKind::TooLarge).build(),
        );
        assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, None));
    }

    #[test]
    fn the_builder_sets_what_it_is_told() {
        let a = Attempt::builder()
            .status(429)
            .attempt(3)
            .max_attempts(8)
            .elapsed_ms(5)
            .event_type("order.paid")
            .seed(9)
            .builtin(Verdict::GiveUp("x".into()), 77)
            .destination(DestinationKind::Nats)
            .error_message("stream full")
            .build();
        assert_eq!(
            (a.attempt, a.max_attempts, a.elapsed_ms, a.seed),
            (3, 8, 5, 9)
        );
        assert_eq!(a.event_type, "order.paid");
        assert_eq!(
            (a.builtin_verdict, a.builtin_delay_ms),
            (Verdict::GiveUp("x".into()), 77)
        );
        assert_eq!(
            (a.destination, a.error_message.as_str()),
            (DestinationKind::Nats, "stream full")
        );
        assert_eq!(a.destination.as_str(), "nats");
        assert_eq!(FailureKind::AuthRefused.as_str(), "auth_refused");
    }
}
