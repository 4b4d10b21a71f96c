//! `hookgate policy ...`: the herd simulator.
//!
//! `hookgate policy simulate` runs [`simulate`] on a preset or a policy file and shows
//! the schedule, the outcome, a histogram of retry arrivals over time, the peak per
//! second and the herd ratio, as text or JSON, optionally drawing the histogram as SVG.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::{Args, Subcommand, ValueEnum};

use hookgate_server::{
    DEFAULT_ATTEMPT_MS, EffectivePolicy, PRESET_NAMES, PolicySpec, SimulationConfig, simulate,
};

/// Policy subcommands.
#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Simulate N deliveries failing together against an outage, in virtual time, and
    /// show how the policy spreads their retries.
    Simulate(SimulateArgs),
}

/// Options of `hookgate policy simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// A preset to simulate [default: default].
    #[arg(long, conflicts_with = "policy")]
    #[arg(value_parser = PossibleValuesParser::new(PRESET_NAMES))]
    preset: Option<String>,
    /// A JSON file holding a policy object, as in the endpoint API's "policy".
    #[arg(long, value_name = "FILE.json")]
    policy: Option<PathBuf>,
    /// Deliveries that fail together at t=0 (at most 100000).
    #[arg(long, default_value_t = 1000)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=100_000))]
    events: u64,
    /// How long the receiver answers 503 (e.g. 90s, 10m, 2h).
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    outage: Duration,
    /// Seed of the jitter draws; the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also draw the histogram of retry arrivals as an SVG picture to this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

/// Output format of `simulate`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Runs a policy subcommand; returns the process exit code: 0 on success, 1 when the
/// output could not be written, 2 for a usage error such as an invalid policy file.
pub fn run(command: PolicyCommand) -> i32 {
    match command {
        PolicyCommand::Simulate(args) => run_simulate(&args),
    }
}

fn run_simulate(args: &SimulateArgs) -> i32 {
    let policy = match load_policy(args) {
        Ok(policy) => policy,
        Err(message) => {
            eprintln!("error: {message}");
            return 2;
        }
    };
    let report = simulate(&SimulationConfig {
        policy,
        events: usize::try_from(args.events).unwrap_or(usize::MAX),
        outage_ms: u64::try_from(args.outage.as_millis()).unwrap_or(u64::MAX),
        seed: args.seed,
        attempt_ms: DEFAULT_ATTEMPT_MS,
    });
    let output = match args.format {
        Format::Text => render_text(&report).map_err(|e| e.to_string()),
        Format::Json => serde_json::to_string_pretty(&report).map_err(|e| e.to_string()),
    };
    let written = output.and_then(|text| {
        let mut stdout = std::io::stdout().lock();
        match writeln!(stdout, "{}", text.trim_end()) {
            // A closed pipe (`| head`) is the reader's choice, not a failure.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string())?,
            _ => {}
        }
        let Some(path) = &args.svg else { return Ok(()) };
        let svg = render_svg(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
    });
    match written {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("error: {message}");
            1
        }
    }
}

/// The policy of `--policy FILE` or `--preset NAME`; the error is one line for stderr.
fn load_policy(args: &SimulateArgs) -> Result<EffectivePolicy, String> {
    let Some(path) = &args.policy else {
        let name = args.preset.as_deref().unwrap_or("default");
        return EffectivePolicy::preset(name).ok_or_else(|| {
            let known = PRESET_NAMES.join(", ");
            format!("--preset: unknown preset {name:?}; expected one of {known}")
        });
    };
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown} is not valid JSON: {e}"))?;
    PolicySpec::from_json(&value)
        .and_then(|spec| spec.resolve())
        .map_err(|e| format!("{shown}: invalid {}: {}", e.field, e.message))
}

mod render;
use render::{render_svg, render_text};

#[cfg(test)]
mod tests;
