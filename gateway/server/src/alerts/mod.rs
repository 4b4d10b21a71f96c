//! Alert rules. Each rule watches one subject (an endpoint, or the whole gateway)
//! and turns a condition into one incident: a `fired` alert when it starts and a
//! `resolved` one when it clears, never more than one per subject per cool-down.
//! Every alert goes to the log; [`sender`] also delivers it as a signed webhook.
//! Deliveries to operator endpoints never feed the rules.

pub(crate) mod sender;
mod window;

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::mpsc;

use crate::config::AlertsConfig;
use crate::operator_events::is_internal;
use window::FailureWindow;

/// An alert, as logged and as delivered.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Alert {
    /// `endpoint_failing`, `give_up`, `dlq_growth`, `breaker_open`, `clock_skew`, `plugin_disabled`.
    pub rule: &'static str,
    /// `fired` or `resolved`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint_id: Option<String>,
    pub message: String,
    /// Unix ms.
    pub at_ms: u64,
}

#[derive(Debug, Default)]
struct Incident {
    active: bool,
    last_fired_ms: Option<u64>,
}

#[derive(Debug, Default)]
struct EndpointWatch {
    streak: u32,
    window: FailureWindow,
}

#[derive(Default)]
struct MonitorState {
    incidents: HashMap<(&'static str, String), Incident>,
    endpoints: HashMap<String, EndpointWatch>,
    deaths: VecDeque<u64>,
}

/// Sizes of the monitor's per-endpoint and per-incident maps.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrackedCounts {
    pub endpoints: usize,
    pub incidents: usize,
}

/// Evaluates the rules and emits alerts.
pub(crate) struct AlertMonitor {
    cfg: AlertsConfig,
    state: Mutex<MonitorState>,
    out: mpsc::UnboundedSender<Alert>,
}

/// What one attempt tells the rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AlertInput<'a> {
    pub tenant_id: &'a str,
    pub endpoint_id: &'a str,
    pub failed: bool,
    pub succeeded: bool,
    pub gave_up: bool,
    pub dead: bool,
    pub clock_skew_ms: Option<i64>,
    pub now_ms: u64,
}

impl AlertMonitor {
    /// A monitor and the receiver its alerts go to.
    pub(crate) fn new(cfg: AlertsConfig) -> (Self, mpsc::UnboundedReceiver<Alert>) {
        let (out, rx) = mpsc::unbounded_channel();
        (
            Self {
                cfg,
                state: Mutex::default(),
                out,
            },
            rx,
        )
    }

    /// Opens or closes the incident `(rule, subject)`; emits on transitions only.
    fn transition(&self, st: &mut MonitorState, alert: Alert, subject: String, active: bool) {
        let incident = st.incidents.entry((alert.rule, subject)).or_default();
        if active == incident.active {
            return;
        }
        if active {
            if incident
                .last_fired_ms
                .is_some_and(|t| alert.at_ms < t + self.cfg.cooldown)
            {
                return; // the same incident flapping: stay quiet within the cool-down
            }
            incident.last_fired_ms = Some(alert.at_ms);
        }
        incident.active = active;
        self.emit(Alert {
            state: if active { "fired" } else { "resolved" },
            ..alert
        });
    }

    fn emit(&self, alert: Alert) {
        tracing::warn!(
            alert = alert.rule, state = alert.state, tenant_id = ?alert.tenant_id,
            endpoint_id = ?alert.endpoint_id, message = %alert.message, "alert"
        );
        let _ = self.out.send(alert);
    }

    fn alert(rule: &'static str, i: &AlertInput<'_>, message: String) -> Alert {
        Alert {
            rule,
            state: "fired",
            tenant_id: Some(i.tenant_id.to_owned()),
            endpoint_id: Some(i.endpoint_id.to_owned()),
            message,
            at_ms: i.now_ms,
        }
    }

    /// Feeds one attempt to the rules.
    pub(crate) fn observe(&self, i: &AlertInput<'_>) {
        if is_internal(i.tenant_id) {
            return;
        }
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let st = &mut *st;
        let watch = st.endpoints.entry(i.endpoint_id.to_owned()).or_default();
        watch.streak = if i.failed { watch.streak + 1 } else { 0 };
        watch.window.record(i.now_ms, self.cfg.window, i.failed);
        let (streak, (attempts, failures)) =
            (watch.streak, watch.window.totals(i.now_ms, self.cfg.window));
        let rate_high = attempts >= self.cfg.failure_rate_min_attempts
            && failures as f64 > self.cfg.failure_rate * attempts as f64;
        let failing = streak >= self.cfg.consecutive_failures || (i.failed && rate_high);
        if failing || i.succeeded {
            let msg = format!(
                "{streak} consecutive failures; {failures} of {attempts} attempts failed in the window"
            );
            self.transition(
                st,
                Self::alert("endpoint_failing", i, msg),
                i.endpoint_id.to_owned(),
                failing,
            );
        }
        if i.gave_up {
            // An event, not a state: fire, and let the cool-down keep it to one.
            let key = ("give_up", i.endpoint_id.to_owned());
            let inc = st.incidents.entry(key).or_default();
            if inc
                .last_fired_ms
                .is_none_or(|t| i.now_ms >= t + self.cfg.cooldown)
            {
                inc.last_fired_ms = Some(i.now_ms);
                self.emit(Self::alert(
                    "give_up",
                    i,
                    "a non-retryable answer made a delivery dead".into(),
                ));
            }
        }
        if let Some(skew) = i.clock_skew_ms {
            let off = skew.unsigned_abs() > self.cfg.clock_skew;
            let msg = format!("receiver clock is {}s off ours", skew / 1000);
            self.transition(
                st,
                Self::alert("clock_skew", i, msg),
                i.endpoint_id.to_owned(),
                off,
            );
        }
        if i.dead {
            st.deaths.push_back(i.now_ms);
        }
        self.check_dlq(st, i.now_ms);
    }

    fn check_dlq(&self, st: &mut MonitorState, now_ms: u64) {
        while st
            .deaths
            .front()
            .is_some_and(|t| t.saturating_add(self.cfg.window) <= now_ms)
        {
            st.deaths.pop_front();
        }
        let n = st.deaths.len() as u64;
        let alert = Alert {
            rule: "dlq_growth",
            state: "fired",
            tenant_id: None,
            endpoint_id: None,
            message: format!(
                "{n} deliveries became dead within the window (threshold {})",
                self.cfg.dlq_growth
            ),
            at_ms: now_ms,
        };
        self.transition(st, alert, String::new(), n > self.cfg.dlq_growth);
    }

    /// Re-checks the time-based rules (called periodically).
    pub(crate) fn tick(&self, now_ms: u64) {
        if let Ok(mut st) = self.state.lock() {
            self.check_dlq(&mut st, now_ms);
        }
    }

    /// A breaker opened or closed.
    pub(crate) fn breaker(&self, tenant_id: &str, endpoint_id: &str, open: bool, now_ms: u64) {
        if is_internal(tenant_id) {
            return;
        }
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let msg = if open {
            "circuit breaker opened"
        } else {
            "circuit breaker closed"
        };
        let alert = Alert {
            rule: "breaker_open",
            state: "fired",
            tenant_id: Some(tenant_id.to_owned()),
            endpoint_id: Some(endpoint_id.to_owned()),
            message: msg.into(),
            at_ms: now_ms,
        };
        self.transition(&mut st, alert, endpoint_id.to_owned(), open);
    }

    /// Drops everything kept about a deleted endpoint: its streak and rate window,
    /// and its incidents, so deleted endpoints do not pile up in memory.
    pub(crate) fn forget_endpoint(&self, endpoint_id: &str) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.endpoints.remove(endpoint_id);
        st.incidents
            .retain(|(_, subject), _| subject != endpoint_id);
    }

    /// How many endpoints and incidents the monitor keeps state for, to show that
    /// deleting endpoints gives the memory back.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> TrackedCounts {
        self.state
            .lock()
            .map(|st| TrackedCounts {
                endpoints: st.endpoints.len(),
                incidents: st.incidents.len(),
            })
            .unwrap_or_default()
    }

    /// A plugin was disabled after repeated failures.
    pub(crate) fn plugin_disabled(&self, tenant_id: &str, plugin: &str, now_ms: u64) {
        self.emit(Alert {
            rule: "plugin_disabled",
            state: "fired",
            tenant_id: Some(tenant_id.to_owned()),
            endpoint_id: None,
            message: format!(
                "plugin {plugin} disabled after repeated failures; the built-in policy decides"
            ),
            at_ms: now_ms,
        });
    }
}

#[cfg(test)]
mod tests;
