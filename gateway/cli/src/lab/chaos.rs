//! `hookgate chaos-receiver`: a webhook receiver built for fault drills.
//!
//! It answers with weighted statuses (`--status 200:70,503:20,429:10`), adds
//! `Retry-After` to 429 and 503, waits a fixed or ranged latency, hangs or resets a
//! share of requests, fails the first N, and can refuse connections for its first
//! seconds (`--down-for`). With `--verify-secret` it checks every Standard Webhooks
//! signature. It prints one status line a second on stderr (requests, status mix,
//! duplicates by `webhook-id`, signature failures) and a summary on stdout when it
//! stops, after `--duration` or on Ctrl-C; `--json-summary` prints the summary as JSON.
//! The same `--seed` and the same requests give the same answers.
//!
//! [`receiver`] is also what `hookgate demo` runs in-process.

pub mod plan;
pub mod receiver;
pub mod tally;

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use hookgate_server::SigningSecret;
use plan::{FaultPlan, Latency, StatusWeights, parse_latency, parse_rate, parse_statuses};
use receiver::{CHAOS_LIMITS, ReceiverContext, ReceiverSocket};
use tally::{Snapshot, Tally};

/// Exit codes: 0 after a normal stop, 1 when the address cannot be bound, 2 for a
/// usage error.
const EXIT_OK: i32 = 0;
const EXIT_FAILED: i32 = 1;
const EXIT_USAGE: i32 = 2;

/// Options of `hookgate chaos-receiver`.
#[derive(Args, Debug)]
#[command(after_help = "\
Example: a receiver that is down for 10 s, then fails a third of the time and checks
every signature:
  hookgate chaos-receiver --down-for 10s --status 200:67,503:23,429:10 --retry-after 2 \\
    --latency 10ms..200ms --reset-rate 0.02 --verify-secret whsec_...")]
pub struct ChaosArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9000")]
    listen: SocketAddr,
    /// Statuses to answer, with weights: STATUS[:WEIGHT],...
    #[arg(long, default_value = "200", value_parser = parse_statuses)]
    status: StatusWeights,
    /// Seconds of `Retry-After` sent with every 429 and 503.
    #[arg(long, value_name = "S")]
    retry_after: Option<u64>,
    /// Delay before each answer: fixed (50ms) or uniform in a range (10ms..200ms).
    #[arg(long, default_value = "0ms", value_parser = parse_latency)]
    latency: Latency,
    /// Share of requests never answered (0 to 1).
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    hang_rate: f64,
    /// Share of requests whose connection is reset without an answer (0 to 1).
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    reset_rate: f64,
    /// Answer the first N requests 503, whatever else is asked.
    #[arg(long, value_name = "N", default_value_t = 0)]
    fail_first: u64,
    /// Refuse connections (bound, not listening) for this long first, e.g. 30s.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = humantime::parse_duration)]
    down_for: Duration,
    /// Check every request's signature with this secret; a failure is answered 401.
    /// Repeat it for several secrets (a rotation).
    #[arg(long, value_name = "whsec_...")]
    verify_secret: Vec<String>,
    /// Stop after this long, e.g. 2m [default: run until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Seed of the fault draws: the same seed and requests give the same answers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the final summary as one JSON object.
    #[arg(long)]
    json_summary: bool,
}

/// Runs the receiver until `--duration` passes or the process is interrupted;
/// returns the exit code.
pub fn run(args: ChaosArgs) -> i32 {
    let mut secrets = Vec::new();
    for text in &args.verify_secret {
        match SigningSecret::parse(text) {
            Ok(s) => secrets.push(s),
            Err(e) => {
                eprintln!("error: --verify-secret: {e}");
                return EXIT_USAGE;
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return EXIT_FAILED;
        }
    };
    runtime.block_on(run_async(args, secrets))
}

async fn run_async(args: ChaosArgs, secrets: Vec<SigningSecret>) -> i32 {
    let socket = match ReceiverSocket::bind(args.listen) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot bind {}: {e}", args.listen);
            return EXIT_FAILED;
        }
    };
    let addr = socket.local_addr();
    let verifying = !secrets.is_empty();
    let plan = FaultPlan {
        statuses: args.status,
        retry_after_s: args.retry_after,
        latency: args.latency,
        hang_rate: args.hang_rate,
        reset_rate: args.reset_rate,
        fail_first: args.fail_first,
        seed: args.seed,
    };
    let tally = Arc::new(Tally::new());
    let ctx = Arc::new(ReceiverContext::new(plan, secrets, Arc::clone(&tally)));
    let shutdown = CancellationToken::new();
    let server = if args.down_for.is_zero() {
        let listener = match socket.listen() {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot listen on {addr}: {e}");
                return EXIT_FAILED;
            }
        };
        eprintln!("chaos-receiver: listening on http://{addr}");
        tokio::spawn(listener.serve(ctx, CHAOS_LIMITS, shutdown.clone()))
    } else {
        let down = humantime::format_duration(args.down_for);
        eprintln!(
            "chaos-receiver: listening on http://{addr}, refusing connections for the first {down}"
        );
        tokio::spawn(socket.serve_after(args.down_for, ctx, CHAOS_LIMITS, shutdown.clone()))
    };
    let ticker = tokio::spawn(status_lines(
        Arc::clone(&tally),
        args.down_for,
        shutdown.clone(),
    ));
    let until = async {
        match args.duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = until => {}
        () = interrupted() => {}
    }
    shutdown.cancel();
    let served = server.await;
    let _ = ticker.await;
    let summary = tally.snapshot();
    let mut out = std::io::stdout().lock();
    let printed = if args.json_summary {
        let json = serde_json::to_string(&summary).unwrap_or_default();
        writeln!(out, "{json}")
    } else {
        write!(out, "{}", summary.summary(verifying))
    };
    let _ = printed.and_then(|()| out.flush());
    match served {
        Ok(Ok(())) => EXIT_OK,
        Ok(Err(e)) => {
            eprintln!("error: listening on {addr}: {e}");
            EXIT_FAILED
        }
        Err(e) => {
            eprintln!("error: the server stopped: {e}");
            EXIT_FAILED
        }
    }
}

/// One line a second on stderr until `shutdown`.
async fn status_lines(tally: Arc<Tally>, down_for: Duration, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let mut previous = Snapshot::default();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = tally.snapshot();
        let elapsed = Duration::from_millis(now.elapsed_ms);
        if elapsed < down_for {
            let left = (down_for - elapsed).as_secs_f64();
            eprintln!(
                "[{:>4}s] down: refusing connections for {left:.0}s more",
                now.elapsed_ms / 1000
            );
        } else {
            eprintln!("{}", now.status_line(&previous));
        }
        previous = now;
    }
}

async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
