//! The `schedule` and `footprint` scenarios: many deliveries pending far in the
//! future, written straight into the store, then a live gateway over them.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use serde_json::json;
use serde_json::value::RawValue;

use super::harness::{ADMIN, BenchGateway, CountingReceiver, call, dir_size, tenant_and_endpoint};
use super::{Common, median, quantile};
use hookgate_server::StoreConfig;
use hookgate_server::lab::NewEvent;
use hookgate_server::{EndpointId, Store, TenantId};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A data dir with tenant `bench`, one endpoint at `url`, `pending` deliveries due in
/// 30 days and `due_now` due at once. Returns the tenant key.
async fn seed(
    dir: &std::path::Path,
    url: &str,
    pending: usize,
    due_now: usize,
) -> anyhow::Result<String> {
    let gw = BenchGateway::start(dir, |_| {}).await?;
    let (key, ep_id) = tenant_and_endpoint(&gw, json!({"url": url, "max_in_flight": 64})).await?;
    gw.stop().await?;
    let store = Store::open(&StoreConfig {
        data_dir: dir.to_path_buf(),
        cache_capacity: 64 << 20,
        min_free_disk: 0,
        ..StoreConfig::default()
    })
    .await?;
    let tenant = TenantId::from("bench");
    let ep = store
        .endpoint(&tenant, &EndpointId::from(ep_id.as_str()))
        .await?
        .context("the endpoint just created")?;
    let payload = RawValue::from_string(json!({"pad": "x".repeat(960)}).to_string())?;
    let later = now_ms() + 30 * 24 * 3_600_000;
    let mut tasks = Vec::new();
    for worker in 0..64 {
        let (store, ep, payload) = (store.clone(), ep.clone(), payload.clone());
        let tenant = tenant.clone();
        tasks.push(tokio::spawn(async move {
            for i in (worker..pending + due_now).step_by(64) {
                let when = if i < pending { later } else { now_ms() };
                let ev = NewEvent {
                    labels: Default::default(),
                    tenant_id: &tenant,
                    event_type: "bench.event",
                    payload: &payload,
                    idempotency: None,
                    endpoints: vec![&ep],
                    now_ms: when,
                };
                store.ingest(ev).await?;
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    store.close().await;
    drop(store);
    Ok(key)
}

/// `hookgate bench schedule`.
pub(super) async fn lateness(c: &Common, pending: usize) -> anyhow::Result<()> {
    let (pending, due, secs) = if c.smoke {
        (1_000, 200, 2.0)
    } else {
        (pending, 10_000, 60.0)
    };
    println!("| run | pending far out | due over {secs} s | lateness p50 ms | lateness p99 ms |");
    println!("|---|---|---|---|---|");
    let (mut p50s, mut p99s) = (Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let dir = tempfile::tempdir()?;
        let rx = CountingReceiver::start().await?;
        let key = seed(dir.path(), &rx.url(), pending, 0).await?;
        let gw = BenchGateway::start(dir.path(), |_| {}).await?;
        let url = format!("{}/v1/tenants/bench/events", gw.base);
        let body = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
        let gap = Duration::from_secs_f64(secs / due as f64);
        let mut tick = tokio::time::interval(gap);
        let (started, origin) = (Instant::now(), now_ms());
        for _ in 0..due {
            tick.tick().await;
            let (s, b) = call(&gw.api, "POST", &url, &key, Some(&body)).await?;
            if s != 202 {
                bail!("ingest answered {s}: {b}");
            }
        }
        while rx.count() < due && started.elapsed() < Duration::from_secs_f64(secs + 60.0) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        gw.stop().await?;
        // Each webhook-id is a ULID stamped with its event's creation (= due) time.
        let arrivals = rx.arrivals.lock().map(|a| a.clone()).unwrap_or_default();
        let mut late: Vec<f64> = arrivals
            .iter()
            .filter_map(|(at, id)| {
                let due_ms = ulid::Ulid::from_string(id.strip_prefix("evt_")?)
                    .ok()?
                    .timestamp_ms();
                let arrived_ms = origin + (*at - started).as_millis() as u64;
                Some(arrived_ms.saturating_sub(due_ms) as f64)
            })
            .collect();
        late.sort_by(f64::total_cmp);
        let (p50, p99) = (quantile(&late, 0.5), quantile(&late, 0.99));
        println!(
            "| {run} | {pending} | {} | {p50:.1} | {p99:.1} |",
            late.len()
        );
        p50s.push(p50);
        p99s.push(p99);
    }
    println!(
        "| median | {pending} | {due} | {:.1} | {:.1} |",
        median(p50s),
        median(p99s)
    );
    Ok(())
}

/// `hookgate bench footprint`: the gateway runs as a child process so its RSS is its own.
pub(super) async fn footprint(c: &Common, pending: usize) -> anyhow::Result<()> {
    let pending = if c.smoke { 1_000 } else { pending };
    println!("| run | pending | RSS MiB | data dir MiB | restart to first delivery ms |");
    println!("|---|---|---|---|---|");
    let (mut rss, mut disk, mut first) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let dir = tempfile::tempdir()?;
        let rx = CountingReceiver::start().await?;
        seed(dir.path(), &rx.url(), pending, 1).await?;
        let started = Instant::now();
        let mut child = std::process::Command::new(std::env::current_exe()?)
            .arg("serve")
            .env("HOOKGATE_LISTEN", "127.0.0.1:0")
            .env("HOOKGATE_STORE__DATA_DIR", dir.path())
            .env("HOOKGATE_ADMIN_TOKEN", ADMIN)
            .env("HOOKGATE_ALLOW_PRIVATE_SUBNETS", "127.0.0.0/8")
            .env("HOOKGATE_STORE__MIN_FREE_DISK", "0")
            .env("HOOKGATE_LOG", "error")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        while rx.count() == 0 && started.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let to_first = started.elapsed().as_secs_f64() * 1000.0;
        // Let start-up work settle before reading the resident set.
        tokio::time::sleep(Duration::from_secs(if c.smoke { 1 } else { 5 })).await;
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .map_or("0", |v| v.trim().trim_end_matches("kB").trim())
            .parse()
            .unwrap_or(0.0);
        let _ = child.kill();
        let _ = child.wait();
        let mib = dir_size(dir.path()) as f64 / (1024.0 * 1024.0);
        println!(
            "| {run} | {pending} | {:.0} | {mib:.0} | {to_first:.0} |",
            kb / 1024.0
        );
        rss.push(kb / 1024.0);
        disk.push(mib);
        first.push(to_first);
    }
    println!(
        "| median | {pending} | {:.0} | {:.0} | {:.0} |",
        median(rss),
        median(disk),
        median(first)
    );
    Ok(())
}
