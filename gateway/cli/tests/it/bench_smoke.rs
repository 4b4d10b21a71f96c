//! A tiny run of each benchmark scenario: they work end to end and print their
//! table. Speed is never asserted here; BENCHMARKS.md has the real figures.

use std::process::Command;

#[test]
fn every_scenario_runs_and_prints_its_row() {
    for scenario in ["ingest", "deliver", "schedule", "footprint"] {
        smoke(scenario, &[]);
    }
}

/// `ingest` and `deliver` on PostgreSQL, with their reference: on the test
/// server (scratch databases made and dropped by the bench).
#[test]
fn the_postgres_scenarios_run_against_their_reference() {
    let server = std::env::var(hookgate_server::lab::SERVER_ENV)
        .unwrap_or_else(|_| hookgate_server::lab::DEFAULT_TEST_POSTGRES.into());
    for scenario in ["ingest", "deliver"] {
        smoke(scenario, &["--store-url", &server]);
    }
}

/// Runs `hookgate bench <scenario> --smoke --runs 1 <extra>`; checks that it
/// succeeds and prints a median row with a figure in it.
fn smoke(scenario: &str, extra: &[&str]) {
    {
        let text = run_bench(&[&["bench", scenario, "--smoke", "--runs", "1"], extra].concat());
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

/// `cluster` with 1, 2 and 3 gateways on scratch databases of the test server:
/// both variants print their table, and each node count delivered something.
#[test]
fn the_cluster_scenario_measures_one_two_and_three_nodes() {
    let server = std::env::var(hookgate_server::lab::SERVER_ENV)
        .unwrap_or_else(|_| hookgate_server::lab::DEFAULT_TEST_POSTGRES.into());
    let text = run_bench(&[
        "bench",
        "cluster",
        "--smoke",
        "--runs",
        "1",
        "--store-url",
        &server,
    ]);
    for variant in ["latency-bound:", "CPU-bound:"] {
        assert!(text.contains(variant), "no {variant} table: {text}");
    }
    assert!(text.contains("targets: 2 nodes >= 1.7x"), "{text}");
    assert!(text.contains("cannot scale past them"), "{text}");
    let medians: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| median |"))
        .collect();
    assert_eq!(medians.len(), 2, "one median row per variant: {text}");
    for median in medians {
        // | median | 1 node | 2 nodes | 3 nodes | 2/1 | 3/1 | |
        let cells: Vec<&str> = median.split('|').map(str::trim).collect();
        for (nodes, cell) in cells[2..5].iter().enumerate() {
            let rate: f64 = cell.parse().unwrap_or_else(|_| panic!("{median}"));
            assert!(
                rate > 0.0,
                "nothing delivered with {} nodes: {median}",
                nodes + 1
            );
        }
    }
}

/// `e2e --smoke` on sled, on PostgreSQL, and with this build served as a
/// child (`--gateway-bin`, as a comparison with another build runs): a row per
/// load, a create→receipt row and a drained backlog, every accepted event
/// delivered, and on PostgreSQL the reference drains (behaviour only; no speed
/// asserted).
#[test]
fn the_e2e_scenario_delivers_every_accepted_event_on_both_backends() {
    let server = std::env::var(hookgate_server::lab::SERVER_ENV)
        .unwrap_or_else(|_| hookgate_server::lab::DEFAULT_TEST_POSTGRES.into());
    let this_build = env!("CARGO_BIN_EXE_hookgate");
    for extra in [
        &[][..],
        &["--store-url", &server][..],
        &["--gateway-bin", this_build][..],
    ] {
        let text = run_bench(&[&["bench", "e2e", "--smoke"], extra].concat());
        // | 1 | 4 | accepted/s | refused | kept up | arrived/accepted | s until all | ...
        let row = text
            .lines()
            .find(|l| l.starts_with("| 1 | 4 |"))
            .unwrap_or_else(|| panic!("{extra:?}: no load row: {text}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let accepted_per_s: f64 = cells[3].parse().unwrap_or_else(|_| panic!("{row}"));
        assert!(accepted_per_s > 0.0, "nothing accepted: {row}");
        let (arrived, accepted) = cells[6].split_once('/').unwrap_or_else(|| panic!("{row}"));
        assert_eq!(arrived, accepted, "not every accepted event arrived: {row}");
        assert!(cells[7].parse::<f64>().is_ok(), "{row}");
        let on_postgres = extra.first() == Some(&"--store-url");
        if on_postgres {
            assert!(cells[9].contains('/'), "no tuples on PostgreSQL: {row}");
        }
        let latency = text
            .lines()
            .find(|l| l.starts_with("| 1 | 50 |"))
            .unwrap_or_else(|| panic!("{extra:?}: no create→receipt row: {text}"));
        let cells: Vec<&str> = latency.split('|').map(str::trim).collect();
        let (arrived, sent) = cells[3]
            .split_once('/')
            .unwrap_or_else(|| panic!("{latency}"));
        assert_eq!(arrived, sent, "{latency}");
        let p99: f64 = cells[5].parse().unwrap_or_else(|_| panic!("{latency}"));
        assert!(p99 > 0.0, "{latency}");
        // | round | backlog | drained deliveries/s |
        let drained = text
            .lines()
            .find(|l| l.starts_with("| 1 | 256 |"))
            .unwrap_or_else(|| panic!("{extra:?}: no drain row: {text}"));
        let rate: f64 = drained
            .split('|')
            .map(str::trim)
            .nth(3)
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|_| panic!("{drained}"));
        assert!(rate > 0.0, "{drained}");
        let references = ["| churned database |", "| fresh database |"]
            .iter()
            .filter(|r| text.lines().any(|l| l.starts_with(*r)))
            .count();
        assert_eq!(references, if on_postgres { 2 } else { 0 }, "{text}");
    }
}

/// Runs `hookgate` with `args`; checks that it succeeds and returns what it printed.
fn run_bench(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .args(args)
        .output()
        .expect("run hookgate bench");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `bench compare` with this build as both the old and the new one, the new
/// one's endpoint carrying a channel, a filter and two custom headers: a row
/// per backend, load and run, and a median ratio per load, every figure
/// positive (behaviour only; no speed asserted).
#[test]
fn the_compare_scenario_runs_both_builds_under_each_load_on_both_backends() {
    let server = std::env::var(hookgate_server::lab::SERVER_ENV)
        .unwrap_or_else(|_| hookgate_server::lab::DEFAULT_TEST_POSTGRES.into());
    let this_build = env!("CARGO_BIN_EXE_hookgate");
    let text = run_bench(&[
        "bench",
        "compare",
        "--smoke",
        "--platform-fields",
        "--old-bin",
        this_build,
        "--new-bin",
        this_build,
        "--store-url",
        &server,
    ]);
    for backend in ["sled", "PostgreSQL"] {
        for load in [
            "ingest events/s",
            "deliver deliveries/s",
            "e2e delivered events/s",
        ] {
            let row = text
                .lines()
                .find(|l| l.starts_with(&format!("| {backend} | {load} | ")) && l.contains('.'))
                .unwrap_or_else(|| panic!("no median row for {backend} {load}: {text}"));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            for figure in &cells[3..=5] {
                let v: f64 = figure.parse().unwrap_or_else(|_| panic!("{row}"));
                assert!(v > 0.0, "{row}");
            }
        }
    }
}
