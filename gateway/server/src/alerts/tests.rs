//! The rules' state machine: one alert per incident, one resolution, cool-downs.

use super::*;

fn cfg() -> AlertsConfig {
    AlertsConfig {
        consecutive_failures: 3,
        failure_rate_min_attempts: 1000,
        cooldown: 10_000,
        dlq_growth: 2,
        ..AlertsConfig::default()
    }
}

fn input(failed: bool, now_ms: u64) -> AlertInput<'static> {
    AlertInput {
        tenant_id: "acme",
        endpoint_id: "ep_1",
        failed,
        succeeded: !failed,
        gave_up: false,
        dead: false,
        clock_skew_ms: None,
        now_ms,
    }
}

fn drain(rx: &mut mpsc::UnboundedReceiver<Alert>) -> Vec<(&'static str, &'static str)> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .map(|a| (a.rule, a.state))
        .collect()
}

#[test]
fn a_failing_endpoint_fires_once_and_resolves_once() {
    let (m, mut rx) = AlertMonitor::new(cfg());
    for t in 0..10 {
        m.observe(&input(true, t));
    }
    assert_eq!(drain(&mut rx), [("endpoint_failing", "fired")]);
    m.observe(&input(false, 20));
    m.observe(&input(false, 21));
    assert_eq!(drain(&mut rx), [("endpoint_failing", "resolved")]);
    // Flapping within the cool-down stays quiet.
    for t in 30..40 {
        m.observe(&input(true, t));
    }
    assert_eq!(drain(&mut rx), []);
}

#[test]
fn give_ups_fire_once_per_cool_down_and_dlq_growth_resolves() {
    let (m, mut rx) = AlertMonitor::new(AlertsConfig {
        consecutive_failures: 100,
        ..cfg()
    });
    let give_up = |now| AlertInput {
        gave_up: true,
        dead: true,
        failed: true,
        succeeded: false,
        ..input(true, now)
    };
    m.observe(&give_up(0));
    m.observe(&give_up(1));
    m.observe(&give_up(2));
    assert_eq!(
        drain(&mut rx),
        [("give_up", "fired"), ("dlq_growth", "fired")]
    );
    m.observe(&give_up(20_000));
    assert_eq!(drain(&mut rx), [("give_up", "fired")]);
    m.tick(20_000 + 600_000);
    assert_eq!(drain(&mut rx), [("dlq_growth", "resolved")]);
}

#[test]
fn own_alert_deliveries_never_feed_the_rules() {
    let (m, mut rx) = AlertMonitor::new(cfg());
    for t in 0..10 {
        m.observe(&AlertInput {
            tenant_id: crate::operator_events::OPERATOR_TENANT,
            ..input(true, t)
        });
    }
    m.breaker(
        crate::operator_events::OPERATOR_TENANT,
        "ep_alerts",
        true,
        0,
    );
    assert_eq!(drain(&mut rx), []);
}

#[test]
fn clock_skew_and_breakers() {
    let (m, mut rx) = AlertMonitor::new(cfg());
    m.observe(&AlertInput {
        clock_skew_ms: Some(-120_000),
        ..input(false, 0)
    });
    m.observe(&AlertInput {
        clock_skew_ms: Some(1_000),
        ..input(false, 1)
    });
    m.breaker("acme", "ep_1", true, 2);
    m.breaker("acme", "ep_1", false, 3);
    assert_eq!(
        drain(&mut rx),
        [
            ("clock_skew", "fired"),
            ("clock_skew", "resolved"),
            ("breaker_open", "fired"),
            ("breaker_open", "resolved")
        ]
    );
}

/// Item 5 (growth that never shrinks): a deleted endpoint's streak, window and
/// incidents are dropped, so the maps return to their size before it existed.
#[test]
fn growth_that_never_shrinks_alert_maps_forget_deleted_endpoints() {
    let (m, _rx) = AlertMonitor::new(cfg());
    m.observe(&input(true, 0));
    let baseline = m.tracked();
    for n in 0..50_u64 {
        let endpoint_id = format!("ep_gone_{n}");
        let i = AlertInput {
            endpoint_id: &endpoint_id,
            gave_up: true,
            clock_skew_ms: Some(120_000),
            ..input(true, n)
        };
        for _ in 0..3 {
            m.observe(&i);
        }
        m.breaker("acme", &endpoint_id, true, n);
    }
    let grown = m.tracked();
    assert!(
        grown.endpoints >= baseline.endpoints + 50 && grown.incidents >= baseline.incidents + 50
    );
    for n in 0..50 {
        m.forget_endpoint(&format!("ep_gone_{n}"));
    }
    assert_eq!(m.tracked(), baseline);
}
