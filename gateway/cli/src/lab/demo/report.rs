//! The demo's closing summary.

use std::fmt::Write as _;
use std::time::Duration;

use super::api::Counts;
use crate::lab::chaos::tally::Snapshot;

/// The closing summary: delivered, attempts per delivery, dead and why, what the
/// receiver saw, time taken.
pub(super) fn summary(
    total: u64,
    c: &Counts,
    receiver: &Snapshot,
    taken: Duration,
    whole: Duration,
) -> String {
    let mut out = String::from("\nSummary\n");
    let mut row = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<13} {value}");
    };
    row(
        "delivered",
        format!("{} of {total} in {:.1} s", c.delivered, taken.as_secs_f64()),
    );
    let per = if c.finished() == 0 {
        0.0
    } else {
        c.attempts as f64 / c.finished() as f64
    };
    row(
        "attempts",
        format!("{} in all, {per:.2} per delivery", c.attempts),
    );
    let spread: Vec<String> = c
        .attempts_to_deliver
        .iter()
        .enumerate()
        .map(|(i, (a, n))| match (i, a) {
            (0, 1) => format!("{n} took 1 attempt"),
            (0, _) => format!("{n} took {a} attempts"),
            _ => format!("{n} took {a}"),
        })
        .collect();
    row("spread", spread.join(", "));
    row(
        "retried",
        format!(
            "{} deliveries needed more than one attempt",
            c.delivered_after_retries()
        ),
    );
    let dead = if c.dead == 0 {
        "0".to_owned()
    } else {
        let why: Vec<String> = c
            .dead_reasons
            .iter()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        format!("{} ({})", c.dead, why.join(", "))
    };
    row("dead", dead);
    row(
        "receiver",
        format!(
            "{} requests answered {}; {} more attempts found it down",
            receiver.requests,
            receiver.mix(),
            c.attempts.saturating_sub(receiver.requests),
        ),
    );
    row(
        "checks",
        format!(
            "{} duplicates, {} signature failures",
            receiver.duplicates, receiver.signature_failures
        ),
    );
    row("time taken", format!("{:.1} s in all", whole.as_secs_f64()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_what_happened() {
        let counts = Counts {
            delivered: 9,
            dead: 1,
            attempts: 25,
            dead_reasons: [("max_attempts".to_owned(), 1)].into(),
            attempts_to_deliver: [(1, 2), (3, 7)].into(),
            ..Counts::default()
        };
        let receiver = Snapshot {
            requests: 20,
            ..Snapshot::default()
        };
        let text = summary(
            10,
            &counts,
            &receiver,
            Duration::from_secs(5),
            Duration::from_secs(6),
        );
        assert!(
            text.contains("  delivered     9 of 10 in 5.0 s\n"),
            "{text}"
        );
        assert!(
            text.contains("  attempts      25 in all, 2.50 per delivery\n"),
            "{text}"
        );
        assert!(
            text.contains("  spread        2 took 1 attempt, 7 took 3\n"),
            "{text}"
        );
        assert!(
            text.contains("  retried       7 deliveries needed more than one attempt\n"),
            "{text}"
        );
        assert!(
            text.contains("  dead          1 (max_attempts: 1)\n"),
            "{text}"
        );
        assert!(text.contains("5 more attempts found it down"), "{text}");
    }
}
