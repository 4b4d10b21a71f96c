//! `hookgate plugin-check FILE [--event EVENT.json]`: runs upload checks 1–9 (docs/plugins.md)
//! on a plugin locally, exactly as the gateway would, and reports the fuel and memory its
//! conformance samples used against the production limits. With `--event`, a transform that
//! passed is then run on that event and the request it would send printed, as
//! `transform try` prints it (the code is shared: [`super::transform_try`]).
//!
//! Exit codes: 0 passed (and the transform sent or skipped); 1 refused (the output names the
//! check), or the transform failed on the event; 2 the file or the event could not be read,
//! or `--event` was given for a retry policy.
//!
//! (Most of the `plugin` subcommand family talks to a running gateway; this one
//! never does, hence its own name.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use hookgate_server::{COMPILE_LIMIT, CheckedPlugin, PluginError, PluginHost, PluginKind};

use super::transform_try::{
    EndpointArgs, Rendered, TRANSFORM_FAILED, TRY_NAME, TRY_TENANT, TryEndpoint, TryError,
    TryEvent, read_event, render, run_transform,
};

/// Arguments of `plugin-check`.
#[derive(clap::Args, Debug)]
pub struct PluginCheckArgs {
    /// The .wasm file: a core module built for wasm32-unknown-unknown, or a component.
    pub file: PathBuf,
    /// The size limit of check 1, in bytes (the gateway's `limits.plugin_upload_bytes`).
    #[arg(long, default_value_t = 512 * 1024)]
    pub max_bytes: usize,
    /// Once the checks pass, run the transform on this event (the JSON body a
    /// platform POSTs to /v1/tenants/{t}/events) and print the request it would
    /// send. Transforms only.
    #[arg(long, value_name = "EVENT.json")]
    pub event: Option<PathBuf>,
    #[command(flatten)]
    pub endpoint: EndpointArgs,
}

/// An event to run a transform on once it passed, and the endpoint it goes to.
#[derive(Debug)]
pub struct EventRun {
    pub event: TryEvent,
    pub endpoint: TryEndpoint,
}

/// Why a check run did not pass.
#[derive(Debug, thiserror::Error)]
pub enum CheckFailure {
    /// The file could not be read, or the engine not started.
    #[error("{0}")]
    Usage(String),
    /// A check refused the plugin; the text names it.
    #[error("{0}")]
    Refused(String),
    /// The plugin passed, and `--event` asks for what a retry policy cannot
    /// do; the report comes first.
    #[error("{} is a retry policy; --event runs a transform on an event", path.display())]
    EventForPolicy { report: String, path: PathBuf },
    /// The plugin passed, and the transform failed on the event.
    #[error("{0}")]
    TransformFailed(String),
}

/// Runs `plugin-check`; returns the exit code.
pub fn run(args: PluginCheckArgs) -> i32 {
    let event_run = match args
        .event
        .as_deref()
        .map(|path| event_run(path, &args.endpoint))
    {
        None => None,
        Some(Ok(event_run)) => Some(event_run),
        Some(Err(message)) => {
            eprintln!("hookgate plugin-check: {message}");
            return 2;
        }
    };
    match check_file_with_event(&args.file, args.max_bytes, event_run.as_ref()) {
        Ok(report) => {
            print!("{report}");
            0
        }
        Err(CheckFailure::Refused(report) | CheckFailure::TransformFailed(report)) => {
            print!("{report}");
            1
        }
        Err(e) => {
            if let CheckFailure::EventForPolicy { report, .. } = &e {
                print!("{report}");
            }
            eprintln!("hookgate plugin-check: {e}");
            2
        }
    }
}

/// The event file and endpoint options, read before any check runs so that a
/// mistake in them costs no compile.
fn event_run(path: &Path, endpoint: &EndpointArgs) -> Result<EventRun, TryError> {
    Ok(EventRun {
        event: read_event(path)?,
        endpoint: endpoint.parse()?,
    })
}

/// Checks the plugin in `path` and renders the report.
///
/// # Errors
/// `Usage` for an unreadable file; `Refused` with the report naming the check.
pub fn check_file(path: &Path, max_bytes: usize) -> Result<String, CheckFailure> {
    check_file_with_event(path, max_bytes, None)
}

/// Checks the plugin in `path` and renders the report; when it passed and
/// `event_run` is given, runs the transform on it and adds what it answered.
///
/// # Errors
/// As [`check_file`]; `EventForPolicy` for an event given to a retry policy,
/// `TransformFailed` with the report for a transform that failed on it.
pub fn check_file_with_event(
    path: &Path,
    max_bytes: usize,
    event_run: Option<&EventRun>,
) -> Result<String, CheckFailure> {
    let bytes = std::fs::read(path)
        .map_err(|e| CheckFailure::Usage(format!("cannot read {}: {e}", path.display())))?;
    let host = PluginHost::new(max_bytes).map_err(|e| CheckFailure::Usage(e.to_string()))?;
    let host = Arc::new(host);
    let head = format!("plugin-check {}\n", path.display());
    // The compile limit applies here as at upload: the checks run on a thread.
    let (tx, rx) = mpsc::channel();
    let checker = Arc::clone(&host);
    std::thread::spawn(move || {
        let _ = tx.send(checker.check(&bytes));
    });
    let checked = match rx.recv_timeout(COMPILE_LIMIT) {
        Ok(checked) => checked,
        Err(_) => Err(PluginError::Compile(format!(
            "checks did not finish within {} s",
            COMPILE_LIMIT.as_secs()
        ))),
    };
    let checked = match checked {
        Ok(c) => c,
        Err(e) => {
            return Err(CheckFailure::Refused(format!(
                "{head}refused by check {}: {e}\n",
                e.check().unwrap_or("?")
            )));
        }
    };
    let report = head + &passed(&checked, max_bytes);
    let Some(event_run) = event_run else {
        return Ok(report);
    };
    if checked.wit.kind() != PluginKind::Transform {
        return Err(CheckFailure::EventForPolicy {
            report,
            path: path.to_owned(),
        });
    }
    // Installed as it passed: no second compile.
    host.install(TRY_TENANT, TRY_NAME, 1, 0, checked);
    let run = run_transform(&host, &event_run.event, &event_run.endpoint)
        .map_err(|e| CheckFailure::Usage(e.to_string()))?;
    let Rendered { stdout, code } = render(&run, &event_run.endpoint.url);
    let report = format!("{report}\n{stdout}");
    if code == TRANSFORM_FAILED {
        return Err(CheckFailure::TransformFailed(report));
    }
    Ok(report)
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / f64::from(1 << 20))
}

fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole.max(1) as f64)
}

/// The report of a plugin that passed.
fn passed(c: &CheckedPlugin, max_bytes: usize) -> String {
    let r = &c.conformance;
    let memory_limit = r.memory_limit as u64;
    let kind = if c.componentized {
        "a core module"
    } else {
        "a component"
    };
    let mut out = String::new();
    let mut line =
        |check: &str, text: String| out.push_str(&format!("  check {check:<15} {text}\n"));
    line(
        "1 size",
        format!("ok: {} bytes (limit {max_bytes})", c.size),
    );
    line("2 sha256", c.sha256.clone());
    line("3 validation", format!("ok: {kind}"));
    let componentized = if c.componentized {
        format!("ok: made a component of the host's {}", c.wit.world())
    } else {
        "ok: taken as is".to_owned()
    };
    line("4 componentize", componentized);
    line(
        "5 compile",
        format!(
            "ok in {} ms (limit {} s)",
            c.compile_ms,
            COMPILE_LIMIT.as_secs()
        ),
    );
    line("6 imports", "ok: none".to_owned());
    line(
        "7 exports",
        format!("ok: {} {}", c.wit.interface(), c.wit.functions().join(", ")),
    );
    line(
        "8 resources",
        format!(
            "ok: {} of initial memory (limit {})",
            mib(c.initial_memory),
            mib(memory_limit)
        ),
    );
    line(
        "9 conformance",
        format!(
            "ok: {} samples, the same answers in fresh and reused instances",
            r.samples.len()
        ),
    );
    out.push_str(&format!(
        "\n  {:<44} {:>18} {:>18}  answer\n",
        "sample",
        format!("fuel of {}", r.fuel_limit),
        format!("memory of {}", mib(memory_limit))
    ));
    for s in &r.samples {
        out.push_str(&format!(
            "  {:<44} {:>10} {:>7} {:>10} {:>7}  {}\n",
            s.name,
            s.usage.fuel,
            percent(s.usage.fuel, r.fuel_limit),
            mib(s.usage.memory_bytes as u64),
            percent(s.usage.memory_bytes as u64, memory_limit),
            s.answer
        ));
    }
    let fuel = r.samples.iter().map(|s| s.usage.fuel).max().unwrap_or(0);
    let memory = r
        .samples
        .iter()
        .map(|s| s.usage.memory_bytes as u64)
        .max()
        .unwrap_or(0);
    out.push_str(&format!(
        "  {:<44} {:>10} {:>7} {:>10} {:>7}\n\npassed checks 1-9: upload it with PUT /v1/tenants/{{tenant}}/plugins/{{name}}\n",
        "most used",
        fuel,
        percent(fuel, r.fuel_limit),
        mib(memory),
        percent(memory, memory_limit)
    ));
    out
}
