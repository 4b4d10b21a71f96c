//! The `hookgate` binary: parse the command line, set up logging, call the library.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use hookgate::config::{Config, LogFormat};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(name = "hookgate", version, about = "Webhook delivery gateway")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway.
    Serve {
        /// TOML config file (defaults < file < HOOKGATE_* environment).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Operator tasks on a stopped gateway's data dir.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Replace the admin token; the new one is printed once.
    ResetToken {
        #[arg(long, default_value = "./hookgate-data")]
        data_dir: PathBuf,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve { config } => {
            let config = Config::from_env_and_file(config.as_deref())?;
            init_tracing(&config);
            runtime.block_on(serve(config))
        }
        Command::Admin {
            command: AdminCommand::ResetToken { data_dir },
        } => {
            let store = hookgate::store::Store::open(&data_dir, 8 << 20).with_context(|| {
                format!(
                    "opening {} (is the gateway still running?)",
                    data_dir.display()
                )
            })?;
            hookgate::reset_admin_token(&store)?;
            Ok(())
        }
    }
}

fn init_tracing(config: &Config) {
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        signal.cancel();
    });
    hookgate::run(config, listener, shutdown).await?;
    Ok(())
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
