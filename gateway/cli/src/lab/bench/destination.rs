//! `bench deliver --destination rabbitmq|nats|redis`: a backlog published into
//! the local broker at `max_in_flight` 64, against the same-run reference of
//! the bare client publishing the same messages at the same concurrency with
//! the same confirmation (publisher confirms, `PubAck`, `XADD`'s id), and
//! against the same backlog delivered over HTTP by the same engine, which says
//! what the broker kind costs beyond the engine's own per-delivery work. Each
//! run makes its own exchange and queue, stream or key, and removes it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Connection, ConnectionProperties, ExchangeKind};
use serde_json::{Value, json};

use super::harness::{BenchGateway, CountingReceiver, call, tenant_named_with_endpoint};
use super::ingest::{CLIENTS, drain_backlog, ingest_backlog};
use super::{Common, median};

/// The broker kinds `bench deliver` can target.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchDestination {
    Rabbitmq,
    Nats,
    Redis,
}

const RABBITMQ: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const NATS: &str = "nats://127.0.0.1:4222";
const REDIS: &str = "redis://127.0.0.1:6379/0";

/// The broker-side names of one run, and a way to count what arrived.
struct Target {
    kind: BenchDestination,
    name: String,
}

impl Target {
    fn new(kind: BenchDestination) -> Self {
        let name = format!("hg-bench-{}", ulid::Ulid::new().to_string().to_lowercase());
        Self { kind, name }
    }

    /// The endpoint's destination.
    fn destination(&self) -> Value {
        match self.kind {
            BenchDestination::Rabbitmq => json!({"type": "rabbitmq",
                "url": "amqp://127.0.0.1:5672/%2f", "exchange": self.name, "routing_key": "bench",
                "credentials": {"username": "guest", "password": "guest"}}),
            BenchDestination::Nats => json!({"type": "nats", "url": NATS,
                "subject": format!("{}.bench", self.name)}),
            BenchDestination::Redis => json!({"type": "redis", "url": REDIS, "stream": self.name}),
        }
    }

    async fn setup(&self) -> anyhow::Result<()> {
        match self.kind {
            BenchDestination::Rabbitmq => {
                let ch = rabbit().await?.create_channel().await?;
                ch.exchange_declare(
                    self.name.as_str().into(),
                    ExchangeKind::Direct,
                    ExchangeDeclareOptions::default(),
                    FieldTable::default(),
                )
                .await?;
                ch.queue_declare(
                    self.name.as_str().into(),
                    QueueDeclareOptions::default(),
                    FieldTable::default(),
                )
                .await?;
                ch.queue_bind(
                    self.name.as_str().into(),
                    self.name.as_str().into(),
                    "bench".into(),
                    QueueBindOptions::default(),
                    FieldTable::default(),
                )
                .await?;
            }
            BenchDestination::Nats => {
                let js = async_nats::jetstream::new(async_nats::connect(NATS).await?);
                js.create_stream(async_nats::jetstream::stream::Config {
                    name: self.name.clone(),
                    subjects: vec![format!("{}.>", self.name)],
                    ..Default::default()
                })
                .await?;
            }
            BenchDestination::Redis => {}
        }
        Ok(())
    }

    async fn teardown(&self) -> anyhow::Result<()> {
        match self.kind {
            BenchDestination::Rabbitmq => {
                let ch = rabbit().await?.create_channel().await?;
                ch.queue_delete(self.name.as_str().into(), QueueDeleteOptions::default())
                    .await?;
                ch.exchange_delete(self.name.as_str().into(), Default::default())
                    .await?;
            }
            BenchDestination::Nats => {
                let js = async_nats::jetstream::new(async_nats::connect(NATS).await?);
                js.delete_stream(&self.name).await?;
            }
            BenchDestination::Redis => {
                let mut r = redis_connection().await?;
                let _: i64 = redis::cmd("DEL")
                    .arg(&self.name)
                    .query_async(&mut r)
                    .await?;
            }
        }
        Ok(())
    }

    /// How many messages the broker holds now.
    async fn count(&self) -> anyhow::Result<usize> {
        Ok(match self.kind {
            BenchDestination::Rabbitmq => {
                let ch = rabbit().await?.create_channel().await?;
                let q = ch
                    .queue_declare(
                        self.name.as_str().into(),
                        QueueDeclareOptions {
                            passive: true,
                            ..Default::default()
                        },
                        FieldTable::default(),
                    )
                    .await?;
                q.message_count() as usize
            }
            BenchDestination::Nats => {
                let js = async_nats::jetstream::new(async_nats::connect(NATS).await?);
                let mut stream = js.get_stream(&self.name).await?;
                usize::try_from(stream.info().await?.state.messages)?
            }
            BenchDestination::Redis => {
                let mut r = redis_connection().await?;
                redis::cmd("XLEN")
                    .arg(&self.name)
                    .query_async(&mut r)
                    .await?
            }
        })
    }
}

async fn rabbit() -> anyhow::Result<Connection> {
    Ok(Connection::connect(RABBITMQ, ConnectionProperties::default()).await?)
}

async fn redis_connection() -> anyhow::Result<redis::aio::MultiplexedConnection> {
    Ok(redis::Client::open(REDIS)?
        .get_multiplexed_async_connection()
        .await?)
}

/// The event every publish carries, about 1 KiB, and the headers it goes with.
fn payload() -> (Bytes, Vec<(&'static str, String)>) {
    let body = json!({"pad": "x".repeat(960)}).to_string();
    let headers = vec![
        ("content-type", "application/json".to_owned()),
        ("webhook-id", "msg_0123456789abcdefghijklmnop".to_owned()),
        ("webhook-timestamp", "1733500000".to_owned()),
        ("webhook-signature", format!("v1,{}", "A".repeat(44))),
        ("hookgate-event-type", "bench.event".to_owned()),
    ];
    (Bytes::from(body), headers)
}

/// Runs the scenario.
pub(super) async fn deliver(c: &Common, kind: BenchDestination) -> anyhow::Result<()> {
    let n = if c.smoke { 300 } else { 20_000 };
    println!(
        "| run | backlog | deliveries/s | bare client publishes/s | ratio | http deliveries/s | ratio to http |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (mut rates, mut ratios, mut to_http) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let target = Target::new(kind);
        target.setup().await?;
        let dir = tempfile::tempdir()?;
        let gw = BenchGateway::start(dir.path(), |_| {}).await?;
        let measured = drain(&gw, &target, n).await;
        gw.stop().await?;
        let (n, rate) = measured?;
        target.teardown().await?;
        let reference = Target::new(kind);
        reference.setup().await?;
        let bare = bare_client(&reference, n).await;
        reference.teardown().await?;
        let bare = bare?;
        let http = over_http(n).await?;
        println!(
            "| {run} | {n} | {rate:.0} | {bare:.0} | {:.2} | {http:.0} | {:.2} |",
            rate / bare,
            rate / http
        );
        rates.push(rate);
        ratios.push(rate / bare);
        to_http.push(rate / http);
    }
    println!(
        "| median | {n} | {:.0} | | {:.2} | | {:.2} |",
        median(rates),
        median(ratios),
        median(to_http)
    );
    Ok(())
}

/// Ingests `n` events while a rate limit of 1/s holds them, lifts it, and
/// waits for the broker to hold them all: (backlog, deliveries/s).
async fn drain(gw: &BenchGateway, target: &Target, n: usize) -> anyhow::Result<(usize, f64)> {
    let ep = json!({"destination": target.destination(), "max_in_flight": CLIENTS,
                    "rate_limit_per_s": 1, "event_types": ["bench.event"]});
    let (key, ep_id) = tenant_named_with_endpoint(gw, "bench", ep).await?;
    let body = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
    let n = ingest_backlog(gw, "bench", &key, n, &body).await?;
    let held = target.count().await?;
    let started = Instant::now();
    let path = format!("{}/v1/tenants/bench/endpoints/{ep_id}", gw.base);
    let lift = json!({"rate_limit_per_s": null});
    call(&gw.api, "PATCH", &path, &key, Some(&lift)).await?;
    let deadline = started + Duration::from_secs(300);
    let mut arrived = held;
    while arrived < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        arrived = target.count().await?;
    }
    if arrived < n {
        bail!("only {arrived} of {n} messages arrived");
    }
    Ok((n, (arrived - held) as f64 / started.elapsed().as_secs_f64()))
}

/// The engine's own reference: the same backlog delivered by a fresh gateway
/// over HTTP to a local receiver; deliveries/s.
async fn over_http(n: usize) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let rx = CountingReceiver::start().await?;
    let gw = BenchGateway::start(dir.path(), |_| {}).await?;
    let drained = drain_backlog(&gw, &rx, "bench", n).await;
    gw.stop().await?;
    Ok(drained?.1)
}

/// The reference: `CLIENTS` tasks publishing `n` messages in all with the
/// kind's usual client and confirmation; publishes/s.
async fn bare_client(target: &Target, n: usize) -> anyhow::Result<f64> {
    let (body, headers) = payload();
    let per_task = n / CLIENTS;
    let started;
    let mut tasks = Vec::new();
    match target.kind {
        BenchDestination::Rabbitmq => {
            let conn = Arc::new(rabbit().await?);
            let ch = conn.create_channel().await?;
            ch.confirm_select(ConfirmSelectOptions::default()).await?;
            let mut table = FieldTable::default();
            for (k, v) in &headers {
                table.insert(
                    (*k).into(),
                    AMQPValue::LongString(LongString::from(v.as_str())),
                );
            }
            started = Instant::now();
            for _ in 0..CLIENTS {
                let (ch, body, table, exchange) =
                    (ch.clone(), body.clone(), table.clone(), target.name.clone());
                tasks.push(tokio::spawn(async move {
                    for _ in 0..per_task {
                        let props = BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_headers(table.clone());
                        let options = BasicPublishOptions {
                            mandatory: true,
                            ..Default::default()
                        };
                        let confirm = ch
                            .basic_publish(
                                exchange.as_str().into(),
                                "bench".into(),
                                options,
                                &body,
                                props,
                            )
                            .await?
                            .await?;
                        if !confirm.is_ack() || confirm.take_message().is_some() {
                            bail!("the broker did not confirm");
                        }
                    }
                    anyhow::Ok(())
                }));
            }
        }
        BenchDestination::Nats => {
            let js = async_nats::jetstream::new(async_nats::connect(NATS).await?);
            started = Instant::now();
            for task in 0..CLIENTS {
                let (js, body, headers) = (js.clone(), body.clone(), headers.clone());
                let subject = format!("{}.bench", target.name);
                tasks.push(tokio::spawn(async move {
                    for i in 0..per_task {
                        let mut map = async_nats::HeaderMap::new();
                        map.insert("Nats-Msg-Id", format!("{task}-{i}").as_str());
                        for (k, v) in &headers {
                            map.insert(*k, v.as_str());
                        }
                        js.publish_with_headers(subject.clone(), map, body.clone())
                            .await?
                            .await
                            .context("no PubAck")?;
                    }
                    anyhow::Ok(())
                }));
            }
        }
        BenchDestination::Redis => {
            let r = redis_connection().await?;
            started = Instant::now();
            for _ in 0..CLIENTS {
                let (mut r, body, headers, key) = (
                    r.clone(),
                    body.clone(),
                    headers.clone(),
                    target.name.clone(),
                );
                tasks.push(tokio::spawn(async move {
                    for _ in 0..per_task {
                        let mut xadd = redis::cmd("XADD");
                        xadd.arg(&key).arg("*");
                        for (k, v) in &headers {
                            xadd.arg(*k).arg(v);
                        }
                        let _: String = xadd.arg("body").arg(&body[..]).query_async(&mut r).await?;
                    }
                    anyhow::Ok(())
                }));
            }
        }
    }
    for t in tasks {
        t.await??;
    }
    Ok((per_task * CLIENTS) as f64 / started.elapsed().as_secs_f64())
}
