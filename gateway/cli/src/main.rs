//! The `hookgate` binary: parse the command line, set up logging, call the library.
//!
//! How it ends: 0 on success; 2 with one line on stderr for a mistake the user can
//! fix (usage, config, an unusable or busy data dir, a port in use), whatever
//! `RUST_BACKTRACE` says; 1 with the whole error, and a backtrace if asked for, for
//! anything else, which may be a bug. Subcommands that report for themselves
//! (`policy`, `bench`, `client`, ...) choose their own code.

use std::ffi::OsStr;
use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use hookgate::{Cli, Command, client, lab, ops};
use hookgate_server::RunError;
use hookgate_server::{Config, ConfigError, LogFormat};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the delivery path allocates per attempt
/// (records, requests, sled pages), and glibc's allocator was ~15 % of its CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit code of a mistake the user can fix (clap uses it for usage errors too).
const USER_ERROR: u8 = 2;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits 2.
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(Failure::User(message)) => {
            eprintln!("hookgate: {message}");
            ExitCode::from(USER_ERROR)
        }
        Err(Failure::Internal(e)) => {
            eprintln!("hookgate: {e:?}");
            ExitCode::FAILURE
        }
    }
}

/// Why `main` failed; decides what is printed and the exit code.
enum Failure {
    /// The user's to fix: printed as one line, exit 2. No backtrace: it would
    /// point into hookgate, where nothing is wrong.
    User(String),
    /// Possibly a bug: printed with its causes (and a backtrace when
    /// `RUST_BACKTRACE` asks), exit 1.
    Internal(anyhow::Error),
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Self::User(e.to_string())
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Self {
        if e.is_user_error() {
            Self::User(e.to_string())
        } else {
            Self::Internal(e.into())
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self::Internal(e.into())
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Serve { config } => {
            let config = Config::from_env_and_file(config.as_deref())?;
            init_tracing(&config);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve(config))?;
        }
        Command::Admin { command } => ops::admin::run(command)?,
        Command::Migrate(args) => return Ok(exit_code(ops::migrate::run(args))),
        Command::Policy { command } => return Ok(exit_code(ops::policy::run(command))),
        Command::Bench { command } => return Ok(exit_code(lab::bench::run(command))),
        Command::Chaos(args) => return Ok(exit_code(lab::chaos::run(args))),
        Command::Demo(args) => return Ok(exit_code(lab::demo::run(args))),
        Command::Transform { command } => return Ok(exit_code(ops::transform_try::run(command))),
        Command::PluginCheck(args) => {
            return Ok(exit_code(ops::plugin_check::run(args)));
        }
        Command::Drill { command } => return Ok(exit_code(lab::drill::run(command))),
        Command::Openapi { svix: false } => print!("{}", hookgate_server::openapi_document()),
        Command::Openapi { svix: true } => print!("{}", hookgate_server::svix_openapi_document()),
        Command::Client(command) => return Ok(exit_code(client::run(command))),
    }
    Ok(ExitCode::SUCCESS)
}

/// A subcommand's exit code; one that does not fit a process exit status is 1
/// (`exit(256)` would report success).
fn exit_code(code: i32) -> ExitCode {
    u8::try_from(code).map_or(ExitCode::FAILURE, ExitCode::from)
}

fn init_tracing(config: &Config) {
    // The filter was validated with the config.
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let colour = log_colour(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    match config.log_format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

/// Colour the text log only for a person watching it: stderr is a terminal (not a
/// pipe or a file, where escape codes are noise) and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
fn log_colour(stderr_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(OsStr::is_empty)
}

async fn serve(config: Config) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| Failure::User(cannot_listen(config.listen, &e)))?;
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        signal.cancel();
    });
    hookgate_server::run(config, listener, shutdown).await?;
    Ok(())
}

/// Why `listen` cannot be bound, in one line. Every cause (in use, not a local
/// address, a privileged port) is the configured address's, so the user's to fix.
fn cannot_listen(addr: SocketAddr, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "cannot listen on {addr}: the address is in use by another process; \
             stop it or set `listen` (HOOKGATE_LISTEN) to another address"
        ),
        _ => format!("cannot listen on {addr} (`listen`, HOOKGATE_LISTEN): {e}"),
    }
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::{exit_code, log_colour};

    #[test]
    fn logs_are_coloured_only_on_a_terminal_without_no_color() {
        assert!(log_colour(true, None));
        assert!(
            log_colour(true, Some(OsStr::new(""))),
            "empty NO_COLOR is unset"
        );
        assert!(!log_colour(true, Some(OsStr::new("1"))));
        assert!(!log_colour(false, None), "a pipe or a file gets no colour");
        assert!(!log_colour(false, Some(OsStr::new("1"))));
    }

    #[test]
    fn subcommand_exit_codes_that_do_not_fit_are_failures() {
        assert_eq!(exit_code(0), std::process::ExitCode::SUCCESS);
        assert_eq!(exit_code(2), std::process::ExitCode::from(2));
        assert_eq!(exit_code(256), std::process::ExitCode::FAILURE);
        assert_eq!(exit_code(-1), std::process::ExitCode::FAILURE);
    }
}
