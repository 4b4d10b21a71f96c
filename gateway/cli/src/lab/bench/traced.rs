//! `hookgate bench ingest --traced` and `deliver --traced`: the same scenario
//! with OpenTelemetry traces exported (OTLP/HTTP to a local sink that accepts
//! and discards) against without, alternately within each run, the first leg
//! alternating between runs. The ratio traced ÷ untraced is what turning
//! tracing on costs; senders send no `traceparent`, so the gateway starts
//! every trace, keeps it with the event and sends it with every attempt.
//!
//! `hookgate bench ingest --validated` runs the ingest the same way with the
//! event's type in the catalog, its payload checked against a JSON Schema at
//! ingest, against the same type not validating.

use hookgate_server::Config;
use hookgate_server::lab::ScratchDatabase;
use serde_json::json;

use super::harness::{ADMIN, BenchGateway, CountingReceiver, call, client, tenant_and_endpoint};
use super::ingest::{CLIENTS, backlog, drain_backlog, post_for};
use super::{Common, median};

/// What an ingest run turns on in one leg and off in the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Feature {
    /// OpenTelemetry export.
    Tracing,
    /// The catalog's payload validation of the bench's event type.
    Validation,
}

impl Feature {
    /// The table's header for this feature's legs.
    fn header(self) -> &'static str {
        match self {
            Self::Tracing => "| run | untraced events/s | traced events/s | OTLP exports | ratio |",
            Self::Validation => {
                "| run | unvalidated events/s | validated events/s | exports | ratio |"
            }
        }
    }
}

/// The schema the validated leg checks each bench event against: what a
/// platform would write for it (the type, the one field, its bounds).
fn bench_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["pad"],
        "additionalProperties": false,
        "properties": {"pad": {"type": "string", "minLength": 1, "maxLength": 4096}}
    })
}

/// Puts the bench's event type in the catalog, validating when `on`.
async fn catalog_type(gw: &BenchGateway, on: bool) -> anyhow::Result<()> {
    let body = json!({"name": "bench.event", "schemas": {"1": bench_schema()}, "validate": on});
    let url = format!("{}/v1/event-types", gw.base);
    let (s, b) = call(&gw.api, "POST", &url, ADMIN, Some(&body)).await?;
    if s != 201 {
        anyhow::bail!("creating the bench's event type: {s} {b}");
    }
    Ok(())
}

/// The legs of a run, in the order run `run` takes them: `true` is traced.
fn legs(run: usize) -> [bool; 2] {
    if run % 2 == 1 {
        [false, true]
    } else {
        [true, false]
    }
}

/// A scratch database for one leg, with `--store-url`.
async fn database(c: &Common) -> anyhow::Result<Option<ScratchDatabase>> {
    match &c.store_url {
        Some(server) => Ok(Some(super::on_postgres::scratch(server).await?)),
        None => Ok(None),
    }
}

/// Points `cfg` at the leg's store, and with `traced` at `sink` as its collector.
fn tune(cfg: &mut Config, traced: bool, sink: &CountingReceiver, db: Option<&ScratchDatabase>) {
    if let Some(db) = db {
        super::on_postgres::on(db, cfg);
    }
    if traced {
        cfg.telemetry.otlp.endpoint = Some(format!("http://{}", sink.addr));
    }
}

fn row(run: &str, [untraced, traced]: [f64; 2], exports: usize) {
    println!(
        "| {run} | {untraced:.0} | {traced:.0} | {exports} | {:.2} |",
        traced / untraced
    );
}

/// `hookgate bench ingest --traced` or `--validated`.
pub(super) async fn ingest(c: &Common, feature: Feature) -> anyhow::Result<()> {
    let secs = if c.smoke { 1.0 } else { 10.0 };
    println!("{}", feature.header());
    println!("|---|---|---|---|---|");
    let (mut offs, mut ons, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let (mut rates, mut exports) = ([0.0; 2], 0);
        for on in legs(run) {
            let (dir, db, sink) = (
                tempfile::tempdir()?,
                database(c).await?,
                CountingReceiver::start().await?,
            );
            let traced = on && feature == Feature::Tracing;
            // As `bench ingest`: the endpoint refuses and its breaker opens at
            // once, so delivery stays out of the measurement.
            let gw = BenchGateway::start(dir.path(), |cfg| {
                cfg.breaker.failure_threshold = 1;
                cfg.breaker.cooldowns = vec![3_600_000];
                tune(cfg, traced, &sink, db.as_ref());
            })
            .await?;
            if feature == Feature::Validation {
                catalog_type(&gw, on).await?;
            }
            let http = client(CLIENTS);
            let (key, _) = tenant_and_endpoint(&gw, json!({"url": "http://127.0.0.1:9/"})).await?;
            let url = format!("{}/v1/tenants/bench/events", gw.base);
            let (rate, _) = post_for(&http, &url, &key, secs).await?;
            gw.stop().await?;
            rates[usize::from(on)] = rate;
            exports += sink.count();
        }
        row(&run.to_string(), rates, exports);
        offs.push(rates[0]);
        ons.push(rates[1]);
        ratios.push(rates[1] / rates[0]);
    }
    let medians = [median(offs), median(ons)];
    println!(
        "| median | {:.0} | {:.0} | | {:.2} |",
        medians[0],
        medians[1],
        median(ratios)
    );
    Ok(())
}

/// `hookgate bench deliver --traced`.
pub(super) async fn deliver(c: &Common) -> anyhow::Result<()> {
    let n = backlog(c);
    println!("| run | untraced deliveries/s | traced deliveries/s | OTLP exports | ratio |");
    println!("|---|---|---|---|---|");
    let (mut offs, mut ons, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let (mut rates, mut exports) = ([0.0; 2], 0);
        for traced in legs(run) {
            let (dir, db, sink) = (
                tempfile::tempdir()?,
                database(c).await?,
                CountingReceiver::start().await?,
            );
            let rx = CountingReceiver::start().await?;
            let gw = BenchGateway::start(dir.path(), |cfg| tune(cfg, traced, &sink, db.as_ref()))
                .await?;
            let (_, rate) = drain_backlog(&gw, &rx, "bench", n).await?;
            gw.stop().await?;
            rates[usize::from(traced)] = rate;
            exports += sink.count();
        }
        row(&run.to_string(), rates, exports);
        offs.push(rates[0]);
        ons.push(rates[1]);
        ratios.push(rates[1] / rates[0]);
    }
    println!(
        "| median | {:.0} | {:.0} | | {:.2} |",
        median(offs),
        median(ons),
        median(ratios)
    );
    Ok(())
}
