//! The WebAssembly side: `wit_bindgen::generate!` over `wit/policy-0.3.0.wit`
//! (the crate's own copy of the workspace's, so that it builds outside a
//! checkout), the one `decide` export made of a policy's two methods, and the
//! conversions between the WIT types and the SDK's. Only built for `wasm32`;
//! [`crate::export_policy!`] is the way in.

#![allow(unsafe_code, reason = "wit-bindgen's generated canonical-ABI glue")]

use crate::{Attempt, Delay, DestinationKind, FailureKind, Outcome, RetryPolicy, Verdict};

#[doc(hidden)]
pub mod bindings {
    #![allow(missing_docs, unreachable_pub, reason = "generated code")]
    wit_bindgen::generate!({
        world: "hookgate:policy/plugin@0.3.0",
        path: "wit/policy-0.3.0.wit",
        pub_export_macro: true,
        export_macro_name: "export_plugin",
        default_bindings_module: "hookgate_plugin_sdk::__private::bindings",
    });
}

use bindings::exports::hookgate::policy::decide as wit;

pub use wit::{
    Attempt as WitAttempt, Decision as WitDecision, Delay as WitDelay, Guest, Verdict as WitVerdict,
};

/// `decide` of policy `P`, through the SDK's types: `classify`, then `next_delay`
/// only when the final verdict is retry (as [`crate::decide`] runs them natively);
/// otherwise the delay is `use-default`, which the host ignores.
pub fn decide<P: RetryPolicy + Default>(a: WitAttempt) -> WitDecision {
    let answers = crate::decide(&P::default(), &from_wit(a));
    WitDecision {
        verdict: to_wit_verdict(answers.verdict),
        delay: match answers.delay.unwrap_or(Delay::UseDefault) {
            Delay::AfterMs(ms) => WitDelay::AfterMs(ms),
            Delay::GiveUp(r) => WitDelay::GiveUp(r),
            Delay::UseDefault => WitDelay::UseDefault,
        },
    }
}

fn from_wit(a: WitAttempt) -> Attempt {
    Attempt {
        attempt: a.attempt,
        max_attempts: a.max_attempts,
        elapsed_ms: a.elapsed_ms,
        outcome: match a.outcome {
            wit::Outcome::Status(s) => Outcome::Status(s),
            wit::Outcome::Failure(k) => Outcome::Failure(match k {
                wit::FailureKind::Timeout => FailureKind::Timeout,
                wit::FailureKind::Connect => FailureKind::Connect,
                wit::FailureKind::Dns => FailureKind::Dns,
                wit::FailureKind::Tls => FailureKind::Tls,
                wit::FailureKind::Reset => FailureKind::Reset,
                wit::FailureKind::Redirect => FailureKind::Redirect,
                wit::FailureKind::Protocol => FailureKind::Protocol,
                wit::FailureKind::AuthRefused => FailureKind::AuthRefused,
                wit::FailureKind::NotFound => FailureKind::NotFound,
                wit::FailureKind::TooLarge => FailureKind::TooLarge,
                wit::FailureKind::Throttled => FailureKind::Throttled,
                wit::FailureKind::Rejected => FailureKind::Rejected,
            }),
        },
        retry_after_ms: a.retry_after_ms,
        headers: a.headers,
        body: a.body,
        event_type: a.event_type,
        builtin_verdict: match a.builtin_verdict {
            WitVerdict::Delivered => Verdict::Delivered,
            WitVerdict::Retry => Verdict::Retry,
            WitVerdict::GiveUp(r) => Verdict::GiveUp(r),
            WitVerdict::UseDefault => Verdict::UseDefault,
        },
        builtin_delay_ms: a.builtin_delay_ms,
        seed: a.seed,
        destination: match a.destination {
            wit::DestinationKind::Http => DestinationKind::Http,
            wit::DestinationKind::Rabbitmq => DestinationKind::Rabbitmq,
            wit::DestinationKind::Nats => DestinationKind::Nats,
            wit::DestinationKind::Redis => DestinationKind::Redis,
            wit::DestinationKind::Sqs => DestinationKind::Sqs,
            wit::DestinationKind::Sns => DestinationKind::Sns,
            wit::DestinationKind::Kinesis => DestinationKind::Kinesis,
        },
        error_message: a.error_message,
    }
}

fn to_wit_verdict(v: Verdict) -> WitVerdict {
    match v {
        Verdict::Delivered => WitVerdict::Delivered,
        Verdict::Retry => WitVerdict::Retry,
        Verdict::GiveUp(r) => WitVerdict::GiveUp(r),
        Verdict::UseDefault => WitVerdict::UseDefault,
    }
}
