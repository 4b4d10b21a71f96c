//! A tiny run of each benchmark scenario: they work end to end and print their
//! table. Speed is never asserted here; BENCHMARKS.md has the real figures.

use std::process::Command;

#[test]
fn every_scenario_runs_and_prints_its_row() {
    for scenario in ["ingest", "deliver", "schedule", "footprint"] {
        let out = Command::new(env!("CARGO_BIN_EXE_hookgate"))
            .args(["bench", scenario, "--smoke", "--runs", "1"])
            .output()
            .expect("run hookgate bench");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{scenario}: {}{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        let median = text
            .lines()
            .find(|l| l.starts_with("| median |"))
            .unwrap_or_else(|| panic!("{scenario}: {text}"));
        let figures: Vec<f64> = median
            .split('|')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        assert!(
            figures.iter().any(|f| *f > 0.0),
            "{scenario} measured nothing: {median}"
        );
    }
}
