//! The breaker's states and transitions, one outcome at a time.

use super::*;

fn cfg() -> BreakerConfig {
    BreakerConfig {
        failure_threshold: 3,
        cooldowns: vec![100, 300],
    }
}

#[test]
fn opens_on_exactly_the_threshold_and_climbs_the_ladder() {
    let (mut b, c) = (Breaker::from_record(&BreakerRecord::default()), cfg());
    assert_eq!(b.admit(0), Admit::All);
    assert_eq!(b.record(RawOutcome::Failure, 0, &c), None);
    assert_eq!(b.record(RawOutcome::Failure, 0, &c), None);
    assert_eq!(
        b.record(RawOutcome::Failure, 10, &c),
        Some(Transition::Tripped {
            until_ms: 110,
            trips: 1
        })
    );
    assert_eq!(b.admit(50), Admit::Wait(Some(110)));
    assert_eq!(b.admit(110), Admit::Probe);
    b.probe_sent();
    assert_eq!(b.admit(111), Admit::Wait(None), "exactly one probe");
    assert_eq!(
        b.record(RawOutcome::Failure, 200, &c),
        Some(Transition::Tripped {
            until_ms: 500,
            trips: 2
        })
    );
    assert_eq!(b.admit(600), Admit::Probe);
    b.probe_sent();
    assert_eq!(
        b.record(RawOutcome::Failure, 600, &c),
        Some(Transition::Tripped {
            until_ms: 900,
            trips: 3
        }),
        "the last step repeats"
    );
    assert_eq!(b.admit(900), Admit::Probe);
    b.probe_sent();
    assert_eq!(
        b.record(RawOutcome::Success, 950, &c),
        Some(Transition::Recovered)
    );
    assert_eq!(b.admit(951), Admit::All);
    assert_eq!(b.to_record().trips, 0, "a success resets the ladder");
}

#[test]
fn successes_reset_the_streak_and_neutral_outcomes_do_not_count() {
    let (mut b, c) = (Breaker::from_record(&BreakerRecord::default()), cfg());
    b.record(RawOutcome::Failure, 0, &c);
    b.record(RawOutcome::Failure, 0, &c);
    assert_eq!(b.failing_since_ms(), Some(0));
    assert_eq!(b.record(RawOutcome::Success, 1, &c), None);
    assert_eq!(b.failing_since_ms(), None);
    for _ in 0..10 {
        assert_eq!(b.record(RawOutcome::Neutral, 2, &c), None);
    }
    b.record(RawOutcome::Failure, 3, &c);
    b.record(RawOutcome::Failure, 3, &c);
    assert_eq!(b.admit(3), Admit::All);
}

#[test]
fn replay_lets_the_probe_go_at_once_and_reset_closes() {
    let (mut b, c) = (Breaker::from_record(&BreakerRecord::default()), cfg());
    for _ in 0..3 {
        b.record(RawOutcome::Failure, 0, &c);
    }
    assert_eq!(b.admit(50), Admit::Wait(Some(100)));
    assert!(b.probe_now());
    assert_eq!(
        b.admit(50),
        Admit::Probe,
        "the probe goes before the cool-down ends"
    );
    b.probe_sent();
    assert!(!b.probe_now(), "a probe in flight is left alone");
    assert_eq!(b.admit(51), Admit::Wait(None));
    // The probe fails: the next rung, as usual.
    assert_eq!(
        b.record(RawOutcome::Failure, 60, &c),
        Some(Transition::Tripped {
            until_ms: 360,
            trips: 2
        })
    );
    assert!(b.reset());
    assert_eq!(b.admit(61), Admit::All);
    assert_eq!(b.to_record().trips, 0);
    assert!(!b.reset(), "already closed");
}

#[test]
fn state_survives_a_round_trip_through_the_record() {
    let (mut b, c) = (Breaker::from_record(&BreakerRecord::default()), cfg());
    for _ in 0..3 {
        b.record(RawOutcome::Failure, 0, &c);
    }
    let rec = b.to_record();
    assert_eq!(
        (rec.state.clone(), rec.open_until_ms, rec.trips),
        (BreakerState::Open.into(), Some(100), 1)
    );
    let mut back = Breaker::from_record(&rec);
    assert_eq!(back.admit(50), Admit::Wait(Some(100)));
}
