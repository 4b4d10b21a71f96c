//! `hookgate bench e2e`: the whole path under sustained load. One gateway (on
//! sled, or with `--store-url` on a scratch PostgreSQL database) and one fast
//! receiver serve every round, so decay across `--rounds` shows as a trend.
//!
//! Each round, for each concurrency: that many closed-loop clients post ~500 B
//! events to one endpoint (default policy, `max_in_flight` 64) for `--seconds`;
//! then the bench waits (at most two minutes) until every accepted event has
//! arrived. A row reports accepted/s, kept up (arrived within 5 s of the load's
//! end ÷ accepted), seconds from the load's end until all arrived, the whole
//! machine's CPU time (`/proc/stat`) from the load's start until all arrived
//! per accepted event, and on PostgreSQL the live/dead tuples of `queue` and
//! `deliveries` before and after (read 11 s after all arrived, as PostgreSQL's
//! statistics lag; the smoke form does not wait, so its figures lag). After the
//! loads, an open-loop phase posts at `--rate` per second: create→receipt
//! p50/p99, from each POST's send to its first arrival at the receiver. Last in
//! each round, a backlog of `--backlog` events (a tenant of its own, held by a
//! rate limit while it is posted) is drained, and its deliveries per second
//! reported. On PostgreSQL, after the rounds, the same backlog is drained by
//! the reference (the backend's claim and outcome statements through
//! `tokio-postgres` alone, at the gateway's pool size) on the churned database
//! and on a fresh one.

use std::time::Duration;

use anyhow::Context as _;
use hookgate_server::lab::ScratchDatabase;
use serde_json::json;

use super::e2e_host::{Cpu, QueueTuples, queue_tuples};
use super::e2e_load::{await_arrivals, closed_loop, forget_arrivals, open_loop};
use super::harness::{BenchGateway, CountingReceiver, client, tenant_and_endpoint};
use super::ingest::drain_backlog;
use super::on_postgres::{DeliveryBatches, reference_drain, settings_on};
use super::{median, quantile};

/// Arrivals later than this after the load's end do not count as kept up.
const KEPT_UP_WITHIN: Duration = Duration::from_secs(5);
/// The endpoint's `max_in_flight`.
const MAX_IN_FLIGHT: usize = 64;

/// Options of `hookgate bench e2e`.
#[derive(clap::Args, Debug, Clone)]
pub struct E2eOptions {
    /// Closed-loop clients; each round runs the load once per figure.
    #[arg(long, value_delimiter = ',', default_value = "16,64")]
    pub concurrency: Vec<usize>,
    /// How long each load lasts, in seconds.
    #[arg(long, default_value_t = 25.0)]
    pub seconds: f64,
    /// Rounds on the same gateway and database, so decay shows as a trend.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Events per second of the open-loop phase that measures create→receipt.
    #[arg(long, default_value_t = 200.0)]
    pub rate: f64,
    /// Events in the backlog each round drains.
    #[arg(long, default_value_t = 20_000)]
    pub backlog: usize,
    /// Run on PostgreSQL: a scratch database on this server, kept for every round.
    #[arg(long)]
    pub store_url: Option<String>,
    /// Serve with this `hookgate` executable as a child process instead of this
    /// build in process: to compare builds under the same load. `store.*` is
    /// set as for this build; everything else is that build's default.
    #[arg(long)]
    pub gateway_bin: Option<std::path::PathBuf>,
    /// A tiny run that only shows the scenario works: 4 clients, 1.5 s, one round.
    #[arg(long)]
    pub smoke: bool,
}

/// What a run is, after `--smoke`.
struct Plan {
    concurrency: Vec<usize>,
    seconds: f64,
    rounds: usize,
    rate: f64,
    backlog: usize,
    /// How long the open-loop phase lasts.
    latency_secs: f64,
    /// The most to wait for every accepted event to arrive.
    drain_bound: Duration,
    /// The wait before reading PostgreSQL's tuple counts after a load: idle
    /// backends flush their statistics up to 10 s late.
    stats_settle: Duration,
}

impl Plan {
    fn of(o: &E2eOptions) -> Self {
        if o.smoke {
            return Self {
                concurrency: vec![4],
                seconds: 1.5,
                rounds: 1,
                rate: 50.0,
                backlog: 256,
                latency_secs: 1.0,
                drain_bound: Duration::from_secs(60),
                stats_settle: Duration::ZERO,
            };
        }
        Self {
            concurrency: o.concurrency.clone(),
            seconds: o.seconds,
            rounds: o.rounds.max(1),
            rate: o.rate,
            backlog: o.backlog.max(64),
            latency_secs: 5.0,
            drain_bound: Duration::from_secs(120),
            stats_settle: Duration::from_secs(11),
        }
    }
}

/// One load's figures, for the median rows.
struct Figures {
    clients: usize,
    accepted_per_s: f64,
    kept_up: f64,
    all_after_s: Option<f64>,
    cpu_ms: f64,
}

/// `hookgate bench e2e`.
pub(super) async fn e2e(o: &E2eOptions) -> anyhow::Result<()> {
    let plan = Plan::of(o);
    let dir = tempfile::tempdir()?;
    let db = match &o.store_url {
        Some(server) => Some(super::on_postgres::scratch(server).await?),
        None => None,
    };
    let rx = CountingReceiver::start().await?;
    let gw = match &o.gateway_bin {
        Some(bin) => {
            let settings = db.as_ref().map(settings_on).unwrap_or_default();
            BenchGateway::start_child(bin, dir.path(), &settings).await?
        }
        None => {
            BenchGateway::start(dir.path(), |cfg| {
                if let Some(db) = &db {
                    super::on_postgres::on(db, cfg);
                }
            })
            .await?
        }
    };
    let endpoint = json!({"url": rx.url(), "max_in_flight": MAX_IN_FLIGHT});
    let (key, _) = tenant_and_endpoint(&gw, endpoint).await?;
    let url = format!("{}/v1/tenants/bench/events", gw.base);
    let http = client(plan.concurrency.iter().copied().max().unwrap_or(1));
    println!(
        "| round | clients | accepted/s | refused | kept up | delivered | s until all delivered \
         | CPU ms per msg | queue live/dead before | after | deliveries live/dead before | after |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut all, mut latencies, mut drains) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=plan.rounds {
        for &clients in &plan.concurrency {
            let before = tuples(db.as_ref()).await?;
            forget_arrivals(&rx);
            let cpu = Cpu::now()?;
            let load = closed_loop(&http, &url, &key, clients, plan.seconds).await?;
            let arrived = await_arrivals(&rx, &load.accepted, plan.drain_bound).await;
            let cpu_s = Cpu::now()?.since(cpu);
            if db.is_some() {
                tokio::time::sleep(plan.stats_settle).await;
            }
            let after = tuples(db.as_ref()).await?;
            let accepted = load.accepted.len();
            let kept = arrived
                .values()
                .filter(|at| at.saturating_duration_since(load.ended) <= KEPT_UP_WITHIN)
                .count();
            let last = arrived.values().max().copied();
            let all_after_s = (arrived.len() == accepted).then(|| {
                last.map_or(0.0, |t| {
                    t.saturating_duration_since(load.ended).as_secs_f64()
                })
            });
            let f = Figures {
                clients,
                accepted_per_s: accepted as f64 / load.secs,
                kept_up: ratio(kept, accepted),
                all_after_s,
                cpu_ms: cpu_s * 1000.0 / accepted.max(1) as f64,
            };
            let until = match f.all_after_s {
                Some(s) => format!("{s:.1}"),
                None => format!("not all after {} s", plan.drain_bound.as_secs()),
            };
            let (b, a) = match (before, after) {
                (Some(b), Some(a)) => (b, a),
                _ => (QueueTuples::default(), QueueTuples::default()),
            };
            let pg = db.is_some();
            println!(
                "| {round} | {clients} | {:.0} | {} | {:.2} | {}/{accepted} | {until} | {:.3} | {} | {} | {} | {} |",
                f.accepted_per_s,
                load.refused,
                f.kept_up,
                arrived.len(),
                f.cpu_ms,
                cell(pg, b.queue),
                cell(pg, a.queue),
                cell(pg, b.deliveries),
                cell(pg, a.deliveries),
            );
            all.push(f);
        }
        latencies.push(create_to_receipt(&http, &url, &key, &rx, &plan).await?);
        forget_arrivals(&rx);
        let tenant = format!("drain{round}");
        // A build whose delivery has collapsed does not drain it: a row says so.
        let drained = drain_backlog(&gw, &rx, &tenant, plan.backlog).await;
        drains.push(drained.map_err(|e| e.to_string()));
        if db.is_some() {
            // So the next round's "before" counts this phase's writes too.
            tokio::time::sleep(plan.stats_settle).await;
        }
    }
    for &clients in &plan.concurrency {
        let of: Vec<&Figures> = all.iter().filter(|f| f.clients == clients).collect();
        let pick = |get: fn(&Figures) -> f64| median(of.iter().map(|f| get(f)).collect());
        let until = if of.iter().all(|f| f.all_after_s.is_some()) {
            format!("{:.1}", pick(|f| f.all_after_s.unwrap_or(0.0)))
        } else {
            "not all".to_owned()
        };
        println!(
            "| median | {clients} | {:.0} | | {:.2} | | {until} | {:.3} | | | | |",
            pick(|f| f.accepted_per_s),
            pick(|f| f.kept_up),
            pick(|f| f.cpu_ms),
        );
    }
    println!();
    println!("| round | open-loop events/s | delivered | create→receipt p50 ms | p99 ms |");
    println!("|---|---|---|---|---|");
    for (round, (sent, arrived, p50, p99)) in latencies.iter().enumerate() {
        println!(
            "| {} | {:.0} | {arrived}/{sent} | {p50:.1} | {p99:.1} |",
            round + 1,
            plan.rate
        );
    }
    println!();
    println!("| round | backlog | drained deliveries/s |");
    println!("|---|---|---|");
    for (round, drained) in drains.iter().enumerate() {
        match drained {
            Ok((n, rate)) => println!("| {} | {n} | {rate:.0} |", round + 1),
            Err(e) => println!("| {} | {} | {e} |", round + 1, plan.backlog),
        }
    }
    let batches = DeliveryBatches::of(&gw).await;
    gw.stop().await.context("stopping the gateway")?;
    if let (Some(db), Some(server), Some(Ok((n, last)))) = (&db, &o.store_url, drains.last()) {
        references(db, server, *n, batches?, *last).await?;
    }
    drop(db);
    Ok(())
}

/// The reference drains after the rounds, on the churned database and on a
/// fresh one, and the last round's drain as a share of each.
async fn references(
    churned: &ScratchDatabase,
    server: &str,
    n: usize,
    batches: DeliveryBatches,
    last: f64,
) -> anyhow::Result<()> {
    let on_churned = reference_drain(&churned.url, n, batches).await?;
    let fresh = super::on_postgres::scratch(server).await?;
    let on_fresh = reference_drain(&fresh.url, n, batches).await?;
    println!();
    println!(
        "| reference ({} rows per claim, {} per outcome statement) | deliveries/s | last round's drain ÷ reference |",
        batches.per_claim, batches.per_statement
    );
    println!("|---|---|---|");
    println!(
        "| churned database | {on_churned:.0} | {:.2} |",
        last / on_churned
    );
    println!(
        "| fresh database | {on_fresh:.0} | {:.2} |",
        last / on_fresh
    );
    Ok(())
}

/// The open-loop phase: (accepted, arrived, p50 ms, p99 ms).
async fn create_to_receipt(
    http: &super::harness::HttpClient,
    url: &str,
    key: &str,
    rx: &CountingReceiver,
    plan: &Plan,
) -> anyhow::Result<(usize, usize, f64, f64)> {
    forget_arrivals(rx);
    let sent = open_loop(http, url, key, plan.rate, plan.latency_secs).await?;
    let arrived = await_arrivals(rx, sent.iter().map(|(id, _)| id), plan.drain_bound).await;
    let mut ms: Vec<f64> = sent
        .iter()
        .filter_map(|(id, at)| {
            let got = arrived.get(id)?;
            Some(got.saturating_duration_since(*at).as_secs_f64() * 1000.0)
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    Ok((
        sent.len(),
        arrived.len(),
        quantile(&ms, 0.5),
        quantile(&ms, 0.99),
    ))
}

async fn tuples(db: Option<&ScratchDatabase>) -> anyhow::Result<Option<QueueTuples>> {
    match db {
        Some(db) => Ok(Some(queue_tuples(&db.url).await?)),
        None => Ok(None),
    }
}

fn cell(pg: bool, t: super::e2e_host::Tuples) -> String {
    if pg { t.to_string() } else { "–".to_owned() }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
