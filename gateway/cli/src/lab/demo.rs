//! `hookgate demo`: hookgate's whole point in one terminal, within a minute.
//!
//! It starts a gateway in-process on a temporary data dir (loopback allowed) and a
//! chaos receiver that refuses connections for its first seconds and is flaky after
//! that (503, 429 with `Retry-After`, 500, resets, the odd hang), and checks every
//! signature. It creates a tenant and an endpoint with a short jittered policy, sends
//! a burst of events, shows live progress while the retries come in waves, and ends
//! with a summary: delivered, attempts per delivery, dead and why, time taken.
//! Everything is torn down at the end, the data dir included.

mod api;
mod progress;
mod report;

use std::io::{IsTerminal as _, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use http::{Method, StatusCode};
use serde_json::json;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::lab::chaos::plan::{FaultPlan, Latency, parse_statuses};
use crate::lab::chaos::receiver::{CHAOS_LIMITS, ReceiverContext, ReceiverSocket};
use crate::lab::chaos::tally::Tally;
use crate::lab::gateway_api::GatewayApi;
use crate::lab::in_process::InProcessGateway;
use hookgate_server::RunOptions;
use hookgate_server::SigningSecret;
use hookgate_server::{Config, StoreConfig};
use progress::{Frame, Progress};

/// How long the receiver refuses connections at the start.
const DOWN_FOR: Duration = Duration::from_secs(3);
/// The receiver's answers once it is up.
const FLAKY_STATUSES: &str = "200:70,503:15,429:10,500:5";
/// The longest the demo waits for every delivery to finish.
const DELIVERY_LIMIT: Duration = Duration::from_secs(90);
/// Events sent at once during the burst.
const SEND_CONCURRENCY: usize = 8;
const TENANT: &str = "demo";

/// Exit codes: 0 when every event was delivered or ended dead, 1 when the demo could
/// not run or did not finish in time, 130 when interrupted.
const EXIT_OK: i32 = 0;
const EXIT_FAILED: i32 = 1;
const EXIT_INTERRUPTED: i32 = 130;

/// Options of `hookgate demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Events to send in the burst.
    #[arg(long, default_value_t = 200)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=2000))]
    events: u64,
    /// Print one progress line a second instead of redrawing a table (the default
    /// when stdout is not a terminal).
    #[arg(long)]
    no_tty: bool,
    /// Seed of the receiver's faults.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Deliver into this broker instead of the flaky receiver: a destination
    /// object (docs/destinations.md), e.g.
    /// `{"type":"redis","url":"redis://127.0.0.1:6379/0","stream":"demo"}`.
    #[arg(long, value_name = "JSON")]
    destination_json: Option<String>,
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// Setting up the data dir, a socket or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The gateway refused its configuration or stopped.
    #[error("the gateway: {0}")]
    Gateway(String),
    /// An API call failed.
    #[error("API call {0}")]
    Api(String),
    /// `--destination-json` is not a JSON object.
    #[error("--destination-json: {0}")]
    Destination(String),
}

/// Runs the demo; returns the exit code.
pub fn run(args: DemoArgs) -> i32 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return EXIT_FAILED;
        }
    };
    let dir = scratch_dir();
    let code = runtime.block_on(async {
        // Ctrl-C at any point ends the demo; dropping the runtime stops the gateway.
        tokio::select! {
            ran = demo(&args, &dir) => match ran {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_FAILED
                }
            },
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ninterrupted");
                EXIT_INTERRUPTED
            }
        }
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
    code
}

/// A fresh directory under the system's temp dir.
fn scratch_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("hookgate-demo-{}-{nanos}", std::process::id()))
}

/// The gateway's config: a scratch data dir, loopback allowed, no disk floor, a short
/// grace, and a breaker that stays out of the way (the demo is about retries).
fn demo_config(dir: &std::path::Path, admin: &str) -> Result<Config, DemoError> {
    let mut config = Config {
        store: StoreConfig {
            data_dir: dir.join("data"),
            min_free_disk: 0,
            cache_capacity: 16 << 20,
            ..StoreConfig::default()
        },
        admin_token: Some(admin.to_owned()),
        allow_private_subnets: vec!["127.0.0.0/8".parse().expect("a CIDR")],
        shutdown_grace_ms: 1_000,
        ..Config::default()
    };
    config.breaker.failure_threshold = 100_000;
    config
        .validate()
        .map_err(|e| DemoError::Gateway(e.to_string()))?;
    Ok(config)
}

/// The receiver's faults once it is up.
fn flaky_plan(seed: u64) -> FaultPlan {
    FaultPlan {
        statuses: parse_statuses(FLAKY_STATUSES).expect("valid weights"),
        retry_after_s: Some(1),
        latency: Latency::Range(Duration::from_millis(5), Duration::from_millis(50)),
        hang_rate: 0.01,
        reset_rate: 0.03,
        fail_first: 0,
        seed,
    }
}

async fn demo(args: &DemoArgs, dir: &std::path::Path) -> Result<i32, DemoError> {
    let started = Instant::now();
    let admin = hookgate_server::generate_token();
    let config = demo_config(dir, &admin)?;
    let mut gateway = InProcessGateway::start(config, RunOptions::default())
        .await
        .map_err(|e| DemoError::Gateway(e.to_string()))?;
    let gateway_addr = gateway.addr;
    let shutdown = CancellationToken::new();
    let admin_api = GatewayApi::new(gateway_addr, &admin)?;

    let socket = ReceiverSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let receiver_url = format!("http://{}/webhooks", socket.local_addr());
    let tenant = admin_api
        .expect(
            Method::POST,
            "/v1/tenants",
            Some(&json!({"id": TENANT})),
            StatusCode::CREATED,
        )
        .await?;
    let api = admin_api.with_token(tenant["api_key"].as_str().unwrap_or_default());
    let broker = match &args.destination_json {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) if v.is_object() => Some(v),
            Ok(_) => return Err(DemoError::Destination("must be a JSON object".into())),
            Err(e) => return Err(DemoError::Destination(e.to_string())),
        },
    };
    let mut endpoint = json!({
        "url": receiver_url,
        "description": "hookgate demo: a flaky receiver",
        "timeout_ms": 2_000,
        "policy": {
            "base_ms": 500, "factor": 2, "max_delay_ms": 3_000, "jitter": "equal",
            "max_attempts": 20, "retry_window_ms": 60_000
        }
    });
    if let Some(destination) = &broker {
        endpoint["destination"] = destination.clone();
        endpoint["description"] = json!("hookgate demo: into a broker");
        if let Some(e) = endpoint.as_object_mut() {
            e.remove("url");
        }
    }
    let endpoint = api
        .expect(
            Method::POST,
            &format!("/v1/tenants/{TENANT}/endpoints"),
            Some(&endpoint),
            StatusCode::CREATED,
        )
        .await?;
    let secret = SigningSecret::parse(endpoint["secret"].as_str().unwrap_or_default())
        .map_err(|e| DemoError::Api(format!("endpoint secret: {e}")))?;

    let target = match &broker {
        Some(d) => format!(
            "{} {}",
            d["type"].as_str().unwrap_or("?"),
            d["url"].as_str().unwrap_or("?")
        ),
        None => receiver_url.clone(),
    };
    print_intro(args, gateway_addr, &target, broker.is_some());
    let tally = Arc::new(Tally::new());
    let ctx = Arc::new(ReceiverContext::new(
        flaky_plan(args.seed),
        vec![secret],
        Arc::clone(&tally),
    ));
    let burst = Instant::now();
    send_burst(&api, args.events).await?;
    // The receiver's down time starts once the burst is in: every first attempt
    // meets a refusal, however long the burst took.
    let receiver_started = Instant::now();
    // Into a broker there is no receiver to take down: it is up from the start.
    let down_for = if broker.is_some() {
        Duration::ZERO
    } else {
        DOWN_FOR
    };
    let receiver = tokio::spawn(socket.serve_after(DOWN_FOR, ctx, CHAOS_LIMITS, shutdown.clone()));

    let tty = !args.no_tty && std::io::stdout().is_terminal();
    let mut progress = Progress::new(tty, args.events);
    let mut tick = tokio::time::interval(progress.interval());
    let deadline = burst + DELIVERY_LIMIT;
    let (finished, counts) = loop {
        tokio::select! {
            _ = tick.tick() => {}
            why = gateway.exited() => return Err(DemoError::Gateway(why)),
        }
        let counts = api::counts(&api, TENANT).await?;
        let up = receiver_started
            .elapsed()
            .checked_sub(down_for)
            .map(|_| receiver_started.duration_since(burst) + down_for);
        progress.show(&Frame {
            elapsed: burst.elapsed(),
            counts: &counts,
            receiver: &tally.snapshot(),
            receiver_up_at: up,
        });
        if counts.finished() >= args.events {
            break (true, counts);
        }
        if Instant::now() >= deadline {
            break (false, counts);
        }
    };
    let taken = burst.elapsed();
    shutdown.cancel();
    gateway.stop_within(Duration::from_secs(10)).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), receiver).await;
    let receiver = tally.snapshot();
    out(&report::summary(
        args.events,
        &counts,
        &receiver,
        taken,
        started.elapsed(),
    ));
    if !finished {
        let pending = args.events - counts.finished();
        eprintln!("error: {pending} deliveries were still pending after {DELIVERY_LIMIT:?}");
        return Ok(EXIT_FAILED);
    }
    Ok(EXIT_OK)
}

/// Sends `n` events, a few at a time; each is acknowledged durable (202).
async fn send_burst(api: &GatewayApi, n: u64) -> Result<(), DemoError> {
    let path = format!("/v1/tenants/{TENANT}/events");
    let mut sending = JoinSet::new();
    for i in 1..=n {
        if sending.len() >= SEND_CONCURRENCY
            && let Some(sent) = sending.join_next().await
        {
            sent.map_err(|e| DemoError::Api(e.to_string()))??;
        }
        let (api, path) = (api.clone(), path.clone());
        sending.spawn(async move {
            let event = json!({"event_type": "order.paid", "payload": {"order": i, "amount_cents": 1200 + i}});
            api.expect(Method::POST, &path, Some(&event), StatusCode::ACCEPTED)
                .await
                .map(drop)
        });
    }
    while let Some(sent) = sending.join_next().await {
        sent.map_err(|e| DemoError::Api(e.to_string()))??;
    }
    Ok(())
}

fn print_intro(args: &DemoArgs, gateway: SocketAddr, receiver: &str, broker: bool) {
    let down = DOWN_FOR.as_secs();
    let (events, seed) = (args.events, args.seed);
    let target = if broker {
        format!(
            "\x20 broker    {receiver}: delivered once it confirms each message; a consumer\n\
             \x20           verifies them with the endpoint's secret (docs/destinations.md)\n"
        )
    } else {
        format!(
            "\x20 receiver  {receiver}: refuses connections for {down} s, then answers {FLAKY_STATUSES}\n\
             \x20           (429/503 with Retry-After: 1), resets 3 %, hangs 1 %; it verifies every signature\n"
        )
    };
    out(&format!(
        "hookgate demo\n\
         \x20 gateway   http://{gateway} (in-process, temporary data dir, loopback allowed)\n\
         {target}\
         \x20 policy    exponential from 500 ms, factor 2, capped at 3 s, equal jitter, 20 attempts\n\
         \x20 sending   {events} events (seed {seed})\n\n"
    ));
}

/// Writes to stdout; a closed stdout (`| head`) is not an error worth a panic.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
