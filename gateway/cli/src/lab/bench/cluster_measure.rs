//! One measurement of `hookgate bench cluster`: gateways started as child
//! processes on a fresh scratch database, a tenant with its endpoints, a backlog
//! ingested over every node's API while a 1/s rate limit holds it, then the
//! limits lifted and the deliveries counted at the receiver.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use hookgate_server::lab::ScratchDatabase;
use serde_json::json;
use tokio::task::JoinSet;

use super::cluster::{Shape, Variant};
use super::harness::{CountingReceiver, call};
use crate::lab::child_gateway::{GatewayProcess, GatewaySpec};
use crate::lab::gateway_api::GatewayApi;

/// Each endpoint's `max_in_flight`.
pub(super) const ENDPOINT_MAX_IN_FLIGHT: usize = 64;
/// Ingest calls at once while the backlog is loaded.
const LOADERS: usize = 32;
/// The longest wait for the backlog to be ingested.
const LOAD_LIMIT: Duration = Duration::from_secs(300);

/// One measurement on a fresh scratch database with `nodes` gateways: the
/// deliveries per second, and the most requests the receiver held at once.
pub(super) async fn measure(
    bin: &std::path::Path,
    server: &str,
    shape: &Shape,
    variant: &Variant,
    nodes: usize,
) -> anyhow::Result<(f64, usize)> {
    let db = ScratchDatabase::create_on(server).await?;
    let dir = tempfile::tempdir()?;
    let rx = CountingReceiver::start_after(variant.latency).await?;
    let admin = hookgate_server::generate_token();
    let mut gateways: Vec<GatewayProcess> = Vec::new();
    for n in 0..nodes {
        let mut spec = GatewaySpec::new(bin.to_path_buf(), dir.path().join(format!("node-{n}")));
        spec.admin.clone_from(&admin);
        spec.set("HOOKGATE_STORE__BACKEND", "postgres")
            .set("HOOKGATE_STORE__URL", &db.url)
            .set(
                "HOOKGATE_CLUSTER__NODE_MAX_IN_FLIGHT",
                &variant.node_cap.to_string(),
            )
            .set("HOOKGATE_LOG", "warn,hookgate=info");
        gateways.push(spec.spawn().await?);
    }
    let apis = gateways
        .iter()
        .map(|g| GatewayApi::new(g.addr, &admin))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let result = load_and_count(&apis, &rx, shape).await;
    for g in gateways {
        // The measurement is over: no need to wait for a clean shutdown.
        g.kill();
    }
    result
}

/// Sets up the tenant and its endpoints (each held by a 1/s rate limit), loads
/// the backlog over every node's API, lifts the limits and counts.
async fn load_and_count(
    apis: &[GatewayApi],
    rx: &CountingReceiver,
    shape: &Shape,
) -> anyhow::Result<(f64, usize)> {
    let admin = &apis[0];
    let (s, tenant) = call(
        admin,
        "POST",
        "/v1/tenants",
        admin.token(),
        Some(&json!({"id": "bench"})),
    )
    .await?;
    if s != 201 {
        bail!("creating the tenant: {s} {tenant}");
    }
    let key = tenant["api_key"].as_str().unwrap_or_default().to_owned();
    let mut endpoints = Vec::new();
    for _ in 0..shape.endpoints {
        let body = json!({"url": rx.url(), "max_in_flight": ENDPOINT_MAX_IN_FLIGHT, "rate_limit_per_s": 1});
        let (s, e) = call(
            admin,
            "POST",
            "/v1/tenants/bench/endpoints",
            &key,
            Some(&body),
        )
        .await?;
        if s != 201 {
            bail!("creating an endpoint: {s} {e}");
        }
        endpoints.push(e["id"].as_str().unwrap_or_default().to_owned());
    }
    // Every node's read cache forgets the tenant's endpoints within a second.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    tokio::time::timeout(LOAD_LIMIT, load(apis, &key, shape.backlog))
        .await
        .context("loading the backlog took too long")??;
    let total = shape.backlog * shape.endpoints;
    let held = rx.count();
    for id in &endpoints {
        let path = format!("/v1/tenants/bench/endpoints/{id}");
        let (s, e) = call(
            admin,
            "PATCH",
            &path,
            &key,
            Some(&json!({"rate_limit_per_s": null})),
        )
        .await?;
        if s != 200 {
            bail!("lifting a rate limit: {s} {e}");
        }
    }
    tokio::time::sleep(shape.warm_up).await;
    let (from, counted_from) = (rx.count(), Instant::now());
    // Before the backlog runs low, the node caps (or the cores) still bind.
    let enough = held + total * 9 / 10;
    while counted_from.elapsed() < shape.duration && rx.count() < enough {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let counted = rx.count().saturating_sub(from);
    Ok((
        counted as f64 / counted_from.elapsed().as_secs_f64(),
        rx.most_in_flight(),
    ))
}

/// Ingests `backlog` events, round robin over the nodes, [`LOADERS`] at a time;
/// each must be acknowledged.
async fn load(apis: &[GatewayApi], key: &str, backlog: usize) -> anyhow::Result<()> {
    let event = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
    let mut sending = JoinSet::new();
    for i in 0..backlog {
        if sending.len() >= LOADERS
            && let Some(sent) = sending.join_next().await
        {
            sent??;
        }
        let (api, key, event) = (apis[i % apis.len()].clone(), key.to_owned(), event.clone());
        sending.spawn(async move {
            let (s, answer) =
                call(&api, "POST", "/v1/tenants/bench/events", &key, Some(&event)).await?;
            if s != 202 {
                bail!("ingest answered {s}: {answer}");
            }
            anyhow::Ok(())
        });
    }
    while let Some(sent) = sending.join_next().await {
        sent??;
    }
    Ok(())
}
