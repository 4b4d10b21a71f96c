//! `hookgate bench compare`: two builds, each served as a `hookgate serve`
//! child, under the same three loads, alternately (old, new, then new, old, ...)
//! in one run, on sled and, with `--store-url`, on PostgreSQL:
//!
//! - ingest: 64 clients post for a fixed time (events/s);
//! - deliver: a backlog held by a rate limit is drained (deliveries/s);
//! - e2e: 64 closed-loop clients post for a fixed time, and every accepted
//!   event must arrive (events delivered per second from the load's start to
//!   the last arrival).
//!
//! With `--platform-fields`, the new build's endpoint carries what the platform
//! model put on the hot path (a channel, a payload filter that passes, two
//! custom headers) and its events a channel; the old build's, which knows none
//! of them, gets the plain endpoint. Each load prints its runs and the median
//! ratio new ÷ old.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use super::e2e_load::{await_arrivals, closed_loop_with, forget_arrivals};
use super::harness::{BenchGateway, CountingReceiver, client, tenant_and_endpoint, with_fields};
use super::ingest::{CLIENTS, drain_shaped_backlog, post_body_for};
use super::median;
use super::on_postgres::{scratch, settings_on};

/// Options of `hookgate bench compare`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareOptions {
    /// The build compared against (the previous release's `hookgate`).
    #[arg(long)]
    pub old_bin: PathBuf,
    /// The build measured (this release's `hookgate`).
    #[arg(long)]
    pub new_bin: PathBuf,
    /// Pairs of runs per load (each pair runs both builds, in alternating order).
    #[arg(long, default_value_t = 2)]
    pub pairs: usize,
    /// How long each ingest and e2e load lasts, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Events in the backlog `deliver` drains.
    #[arg(long, default_value_t = 20_000)]
    pub backlog: usize,
    /// Give the new build's endpoint a channel, a filter and two custom
    /// headers, and its events a channel.
    #[arg(long)]
    pub platform_fields: bool,
    /// Also run on PostgreSQL: each run gets a scratch database on this server.
    #[arg(long)]
    pub store_url: Option<String>,
    /// Run on PostgreSQL only (needs `--store-url`), not on sled.
    #[arg(long, requires = "store_url")]
    pub postgres_only: bool,
    /// Run only this load (repeatable); every load when none is given.
    #[arg(long = "load", value_enum)]
    pub loads: Vec<Load>,
    /// A tiny run that only shows the scenario works.
    #[arg(long)]
    pub smoke: bool,
}

/// Which build a run serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    Old,
    New,
}

/// The three loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Load {
    Ingest,
    Deliver,
    E2e,
}

impl Load {
    const ALL: [Self; 3] = [Self::Ingest, Self::Deliver, Self::E2e];

    fn name(self) -> &'static str {
        match self {
            Self::Ingest => "ingest events/s",
            Self::Deliver => "deliver deliveries/s",
            Self::E2e => "e2e delivered events/s",
        }
    }
}

/// What one run sets up and sends, by build.
struct Shape {
    platform: bool,
}

impl Shape {
    /// Extra endpoint fields for `build`.
    fn endpoint_extra(&self, build: Build) -> Value {
        if self.platform && build == Build::New {
            json!({
                "channels": ["bench"],
                "filter": {"pad": {"$exists": true}},
                "headers": {"x-bench-tenant": "bench", "x-bench-key": "k-0123456789"},
                "sensitive_headers": ["x-bench-key"],
            })
        } else {
            json!({})
        }
    }

    /// One event for `build`, `pad` bytes of padding.
    fn event(&self, build: Build, pad: usize) -> Value {
        let mut ev = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(pad)}});
        if self.platform && build == Build::New {
            ev["channels"] = json!(["bench"]);
        }
        ev
    }
}

/// `hookgate bench compare`.
pub(super) async fn compare(o: &CompareOptions) -> anyhow::Result<()> {
    let shape = Shape {
        platform: o.platform_fields,
    };
    let (secs, backlog, pairs) = if o.smoke {
        (1.0, 256, 1)
    } else {
        (o.seconds, o.backlog.max(CLIENTS), o.pairs.max(1))
    };
    let sled = (!o.postgres_only).then_some(None);
    let backends: Vec<Option<&str>> = sled
        .into_iter()
        .chain(o.store_url.as_deref().map(Some))
        .collect();
    let loads: Vec<Load> = Load::ALL
        .into_iter()
        .filter(|l| o.loads.is_empty() || o.loads.contains(l))
        .collect();
    println!("| backend | load | run | old | new |");
    println!("|---|---|---|---|---|");
    let mut summary = Vec::new();
    for server in backends {
        let backend = if server.is_some() {
            "PostgreSQL"
        } else {
            "sled"
        };
        for &load in &loads {
            let (mut olds, mut news) = (Vec::new(), Vec::new());
            for pair in 0..pairs {
                // Alternate which build goes first, so a drift favours neither.
                let order = if pair % 2 == 0 {
                    [Build::Old, Build::New]
                } else {
                    [Build::New, Build::Old]
                };
                for build in order {
                    let bin = match build {
                        Build::Old => &o.old_bin,
                        Build::New => &o.new_bin,
                    };
                    let rate = run(bin, server, load, build, &shape, secs, backlog).await?;
                    match build {
                        Build::Old => olds.push(rate),
                        Build::New => news.push(rate),
                    }
                }
                println!(
                    "| {backend} | {} | {} | {:.0} | {:.0} |",
                    load.name(),
                    pair + 1,
                    olds[pair],
                    news[pair]
                );
            }
            let (old, new) = (median(olds), median(news));
            summary.push((backend, load, old, new));
        }
    }
    println!();
    println!("| backend | load | old median | new median | new ÷ old |");
    println!("|---|---|---|---|---|");
    for (backend, load, old, new) in summary {
        println!(
            "| {backend} | {} | {old:.0} | {new:.0} | {:.2} |",
            load.name(),
            new / old.max(f64::MIN_POSITIVE)
        );
    }
    Ok(())
}

/// One run of `load` on a fresh gateway of `bin` (and a fresh scratch database
/// on `server`, if given); returns its rate.
async fn run(
    bin: &std::path::Path,
    server: Option<&str>,
    load: Load,
    build: Build,
    shape: &Shape,
    secs: f64,
    backlog: usize,
) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let db = match server {
        Some(s) => Some(scratch(s).await?),
        None => None,
    };
    let settings = db.as_ref().map(settings_on).unwrap_or_default();
    let gw = BenchGateway::start_child(bin, dir.path(), &settings).await?;
    let rx = CountingReceiver::start().await?;
    let extra = shape.endpoint_extra(build);
    let rate = match load {
        Load::Ingest => {
            // Nothing listens on port 9: delivery stays a small, equal share
            // of both builds' work (each opens the endpoint's breaker).
            let ep = with_fields(json!({"url": "http://127.0.0.1:9/"}), &extra);
            let (key, _) = tenant_and_endpoint(&gw, ep).await?;
            let url = format!("{}/v1/tenants/bench/events", gw.base);
            let body = Bytes::from(shape.event(build, 960).to_string());
            post_body_for(&client(CLIENTS), &url, &key, body, secs)
                .await?
                .0
        }
        Load::Deliver => {
            let event = shape.event(build, 960);
            drain_shaped_backlog(&gw, &rx, "bench", backlog, &extra, &event, None)
                .await?
                .1
        }
        Load::E2e => {
            let ep = with_fields(json!({"url": rx.url(), "max_in_flight": CLIENTS}), &extra);
            let (key, _) = tenant_and_endpoint(&gw, ep).await?;
            let url = format!("{}/v1/tenants/bench/events", gw.base);
            let body = Bytes::from(shape.event(build, 380).to_string());
            forget_arrivals(&rx);
            let started = Instant::now();
            let http = client(CLIENTS);
            let load = closed_loop_with(&http, &url, &key, body, CLIENTS, secs).await?;
            let arrived = await_arrivals(&rx, &load.accepted, Duration::from_secs(120)).await;
            if arrived.len() < load.accepted.len() {
                anyhow::bail!(
                    "only {} of {} accepted events arrived in 120 s",
                    arrived.len(),
                    load.accepted.len()
                );
            }
            let last = arrived.values().max().copied().unwrap_or(started);
            arrived.len() as f64 / last.duration_since(started).as_secs_f64().max(1e-3)
        }
    };
    gw.stop().await?;
    Ok(rate)
}
