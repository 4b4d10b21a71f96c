//! The unit tests of `exposition.rs`.

use super::{Exposition, negotiate, to_classic_text};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

const PROMETHEUS: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

#[test]
fn prometheus_gets_openmetrics_and_everyone_else_the_classic_text() {
    let cases = [
        (Some(PROMETHEUS), Exposition::OpenMetrics),
        (
            Some("application/openmetrics-text;version=0.0.1,text/plain;version=0.0.4;q=0.5"),
            Exposition::OpenMetricsDraft,
        ),
        (
            Some("application/openmetrics-text"),
            Exposition::OpenMetrics,
        ),
        (
            Some("Application/OpenMetrics-Text; Version=\"1.0.0\""),
            Exposition::OpenMetrics,
        ),
        (None, Exposition::Text),
        (Some(""), Exposition::Text),
        (Some("*/*"), Exposition::Text),
        (Some("text/*"), Exposition::Text),
        (Some("text/plain"), Exposition::Text),
        (Some("text/plain;version=0.0.4"), Exposition::Text),
        (Some("application/json"), Exposition::Text),
        (Some("garbage, ;;, /"), Exposition::Text),
        // The client prefers the text, though it takes OpenMetrics.
        (
            Some("application/openmetrics-text;q=0.3,text/plain;q=0.9"),
            Exposition::Text,
        ),
        // Equal preference: OpenMetrics, the native encoding.
        (
            Some("text/plain,application/openmetrics-text"),
            Exposition::OpenMetrics,
        ),
        // A more specific range decides: version 1.0.0 refused, 0.0.1 taken.
        (
            Some("application/openmetrics-text;version=1.0.0;q=0,application/openmetrics-text"),
            Exposition::OpenMetricsDraft,
        ),
        // A version we do not speak.
        (
            Some("application/openmetrics-text;version=2.0.0"),
            Exposition::Text,
        ),
        // A malformed q discards its range only.
        (
            Some("application/openmetrics-text;q=high,text/plain"),
            Exposition::Text,
        ),
    ];
    for (accept, want) in cases {
        assert_eq!(negotiate(accept), want, "Accept: {accept:?}");
    }
}

#[test]
fn the_classic_text_names_counters_by_their_samples_and_has_no_eof() {
    let mut registry = Registry::with_prefix("hookgate");
    let c = Counter::<u64>::default();
    c.inc_by(30);
    registry.register("events_ingested", "Events accepted", c);
    let f = Family::<Vec<(String, String)>, Counter>::default();
    f.get_or_create(&vec![("outcome".into(), "2xx".into())])
        .inc_by(3);
    registry.register("attempts", "Attempts", f);
    let g = Gauge::<i64>::default();
    g.set(-2);
    registry.register("pending", "Pending", g);
    let h = Histogram::new([1.0, 2.0]);
    h.observe(1.5);
    registry.register_with_unit("attempt", "Duration", Unit::Seconds, h);
    let u = Counter::<u64>::default();
    registry.register_with_unit("busy", "Busy time", Unit::Seconds, u);
    registry.register(
        "build",
        "Build",
        Info::new(vec![("version".to_owned(), "1".to_owned())]),
    );
    let mut om = String::new();
    encode(&mut om, &registry).unwrap();

    let text = to_classic_text(&om);
    let want = "\
# HELP hookgate_events_ingested_total Events accepted.
# TYPE hookgate_events_ingested_total counter
hookgate_events_ingested_total 30
# HELP hookgate_attempts_total Attempts.
# TYPE hookgate_attempts_total counter
hookgate_attempts_total{outcome=\"2xx\"} 3
# HELP hookgate_pending Pending.
# TYPE hookgate_pending gauge
hookgate_pending -2
# HELP hookgate_attempt_seconds Duration.
# TYPE hookgate_attempt_seconds histogram
hookgate_attempt_seconds_sum 1.5
hookgate_attempt_seconds_count 1
hookgate_attempt_seconds_bucket{le=\"1.0\"} 0
hookgate_attempt_seconds_bucket{le=\"2.0\"} 1
hookgate_attempt_seconds_bucket{le=\"+Inf\"} 1
# HELP hookgate_busy_seconds_total Busy time.
# TYPE hookgate_busy_seconds_total counter
hookgate_busy_seconds_total 0
# HELP hookgate_build_info Build.
# TYPE hookgate_build_info gauge
hookgate_build_info{version=\"1\"} 1
";
    assert_eq!(text, want, "from:\n{om}");
}

#[test]
fn exemplars_are_dropped_from_the_classic_text() {
    let om = "# HELP x X.\n# TYPE x counter\nx_total 1 # {trace=\"a\"} 1.0\n# EOF\n";
    assert_eq!(
        to_classic_text(om),
        "# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n"
    );
}
