//! The fault drill's plans: the steps a receiver answers an event's attempts with,
//! how a random plan is drawn, and what each step must leave in the attempt log.

use std::sync::Arc;
use std::time::Duration;

use rand::RngExt as _;
use rand::rngs::StdRng;
use serde_json::Value;

use super::super::receiver::{Arrival, Behavior, Reply, ReplyBody};
use super::{HANG, RETRY_AFTER_S};

/// One answer of the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// A transient status: 5xx, 429 (with `Retry-After`), 307.
    Transient(u16),
    /// A 503 with a 1 MiB body.
    Big503,
    /// No answer for longer than the timeout.
    Hang,
    /// RST after reading the request.
    Reset,
    /// 200.
    Ok,
    /// 200 whose body trickles on past the timeout.
    SlowOk,
    /// 200 with a 4 MiB body.
    BigOk,
    /// A 4xx the gateway must give up on.
    Permanent(u16),
}

const TRANSIENT: [Step; 8] = [
    Step::Transient(500),
    Step::Transient(502),
    Step::Transient(503),
    Step::Transient(429),
    Step::Transient(307),
    Step::Big503,
    Step::Hang,
    Step::Reset,
];
const PERMANENT: [u16; 5] = [400, 401, 403, 404, 422];

impl Step {
    pub(super) fn name(self) -> String {
        match self {
            Self::Transient(s) | Self::Permanent(s) => s.to_string(),
            Self::Big503 => "503-big".into(),
            Self::Hang => "hang".into(),
            Self::Reset => "reset".into(),
            Self::Ok => "200".into(),
            Self::SlowOk => "200-slow".into(),
            Self::BigOk => "200-big".into(),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "503-big" => Self::Big503,
            "hang" => Self::Hang,
            "reset" => Self::Reset,
            "200" => Self::Ok,
            "200-slow" => Self::SlowOk,
            "200-big" => Self::BigOk,
            s => match s.parse().ok()? {
                s @ (400 | 401 | 403 | 404 | 422) => Self::Permanent(s),
                s => Self::Transient(s),
            },
        })
    }

    fn reply(self) -> Reply {
        let answer = |status, body| Reply::Answer {
            status,
            retry_after_s: (status == 429).then_some(RETRY_AFTER_S),
            delay: Duration::ZERO,
            body,
        };
        match self {
            Self::Transient(s) | Self::Permanent(s) => answer(s, ReplyBody::Small),
            Self::Big503 => answer(503, ReplyBody::Big(1 << 20)),
            Self::Hang => Reply::Hang(HANG),
            Self::Reset => Reply::Reset,
            Self::Ok => answer(200, ReplyBody::Small),
            Self::SlowOk => answer(
                200,
                ReplyBody::Slow {
                    chunks: 20,
                    every: Duration::from_millis(100),
                },
            ),
            Self::BigOk => answer(200, ReplyBody::Big(4 << 20)),
        }
    }

    /// The attempt-log status, error kind and verdict this step must produce.
    pub(super) fn expected(self) -> (Option<u16>, Option<&'static str>, &'static str) {
        match self {
            Self::Transient(307) => (Some(307), Some("redirect"), "retry"),
            Self::Transient(s) => (Some(s), None, "retry"),
            Self::Big503 => (Some(503), None, "retry"),
            Self::Hang => (None, Some("timeout"), "retry"),
            Self::Reset => (None, Some("reset"), "retry"),
            Self::Ok | Self::SlowOk | Self::BigOk => (Some(200), None, "delivered"),
            Self::Permanent(s) => (Some(s), None, "give_up"),
        }
    }

    pub(super) fn is_final_ok(self) -> bool {
        matches!(self, Self::Ok | Self::SlowOk | Self::BigOk)
    }
}

/// A random plan: 0-3 transient faults, then a final answer.
pub(super) fn plan(rng: &mut StdRng) -> Vec<Step> {
    let faults = match rng.random_range(0..100) {
        0..30 => 0,
        30..60 => 1,
        60..85 => 2,
        _ => 3,
    };
    let mut steps: Vec<Step> = (0..faults)
        .map(|_| TRANSIENT[rng.random_range(0..TRANSIENT.len())])
        .collect();
    steps.push(match rng.random_range(0..100) {
        0..55 => Step::Ok,
        55..65 => Step::SlowOk,
        65..75 => Step::BigOk,
        _ => Step::Permanent(PERMANENT[rng.random_range(0..PERMANENT.len())]),
    });
    steps
}

/// The names of a plan's steps, as sent in the event's payload.
pub(super) fn names(plan: &[Step]) -> Vec<String> {
    plan.iter().map(|s| s.name()).collect()
}

/// Answers attempt n of an event with step n of the plan in its payload (200 when
/// the plan is missing or already used up: such an extra attempt shows up in the
/// attempt count).
pub(super) fn follow_plan() -> Behavior {
    Arc::new(|arrival: &Arrival<'_>| {
        let payload: Value = serde_json::from_slice(arrival.body).unwrap_or(Value::Null);
        payload["plan"]
            .get(arrival.attempt as usize)
            .and_then(Value::as_str)
            .and_then(Step::parse)
            .unwrap_or(Step::Ok)
            .reply()
    })
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng as _;

    use super::*;

    #[test]
    fn step_names_round_trip() {
        let all = TRANSIENT
            .into_iter()
            .chain([Step::Ok, Step::SlowOk, Step::BigOk])
            .chain(PERMANENT.map(Step::Permanent));
        for step in all {
            assert_eq!(Step::parse(&step.name()), Some(step), "{step:?}");
        }
    }

    #[test]
    fn plans_end_in_a_final_answer_after_at_most_three_faults() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..1000 {
            let p = plan(&mut rng);
            assert!((1..=4).contains(&p.len()), "{p:?}");
            let (last, faults) = p.split_last().unwrap();
            assert!(last.is_final_ok() || matches!(last, Step::Permanent(_)));
            assert!(faults.iter().all(|s| TRANSIENT.contains(s)), "{p:?}");
        }
    }
}
