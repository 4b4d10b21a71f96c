//! What the scenarios share: an in-process gateway on a temporary data dir (with
//! the lab's JSON client; or another build's `hookgate serve`, to compare), a receiver that answers 200 (at once or after a set
//! latency) and counts, and a pooled HTTP/1 client for load.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::Method;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};

use crate::lab::child_gateway::{GatewayProcess, GatewaySpec};
use crate::lab::gateway_api::GatewayApi;
use crate::lab::in_process::InProcessGateway;
use hookgate_server::RunOptions;
use hookgate_server::{Config, StoreConfig};

/// The admin token of bench gateways.
pub(super) const ADMIN: &str = "hgk_bench-admin-token-0000000000";

/// A pooled HTTP/1 client.
pub(super) type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// A new client with room for `conns` pooled connections per host.
pub(super) fn client(conns: usize) -> HttpClient {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(conns)
        .build_http()
}

/// A gateway for a scenario: in this process, or (to compare builds) a
/// `hookgate serve` child of another executable.
pub(super) struct BenchGateway {
    pub(super) base: String,
    /// A client with the admin token.
    pub(super) api: GatewayApi,
    gateway: Running,
}

enum Running {
    InProcess(InProcessGateway),
    Child(GatewayProcess),
}

impl BenchGateway {
    /// Starts a gateway over `dir` with loopback allowed; `tune` adjusts the config.
    pub(super) async fn start(
        dir: &std::path::Path,
        tune: impl FnOnce(&mut Config),
    ) -> anyhow::Result<Self> {
        let mut config = Config {
            store: StoreConfig {
                data_dir: dir.to_path_buf(),
                min_free_disk: 0,
                ..StoreConfig::default()
            },
            admin_token: Some(ADMIN.to_owned()),
            allow_private_subnets: vec!["127.0.0.0/8".parse()?],
            log: "error".to_owned(),
            ..Config::default()
        };
        tune(&mut config);
        let gateway = InProcessGateway::start(config, RunOptions::default()).await?;
        let api = GatewayApi::new(gateway.addr, ADMIN)?;
        Ok(Self {
            base: gateway.base.clone(),
            api,
            gateway: Running::InProcess(gateway),
        })
    }

    /// Starts `bin serve` over `dir` with loopback allowed and `settings`
    /// (`HOOKGATE_*` variables) on top: a build other than this one, at its own
    /// defaults, behind the same scenario.
    pub(super) async fn start_child(
        bin: &std::path::Path,
        dir: &std::path::Path,
        settings: &[(&str, String)],
    ) -> anyhow::Result<Self> {
        let mut spec = GatewaySpec::new(bin.to_path_buf(), dir.to_path_buf());
        spec.admin = ADMIN.to_owned();
        // The start-up line with the address, and no line per attempt or request.
        spec.set(
            "HOOKGATE_LOG",
            "warn,hookgate_server=info,hookgate_server::delivery=warn,hookgate_server::api=warn",
        );
        for (key, value) in settings {
            spec.set(key, value);
        }
        let child = spec.spawn().await?;
        let api = GatewayApi::new(child.addr, ADMIN)?;
        Ok(Self {
            base: format!("http://{}", child.addr),
            api,
            gateway: Running::Child(child),
        })
    }

    /// Stops it and waits.
    pub(super) async fn stop(self) -> anyhow::Result<()> {
        match self.gateway {
            Running::InProcess(gateway) => Ok(gateway.stop().await?),
            Running::Child(child) => match child.terminate().await {
                Some(status) if status.success() => Ok(()),
                other => bail!("the gateway did not stop cleanly: {other:?}"),
            },
        }
    }
}

/// Sends a JSON request to `url` (on `api`'s gateway) with `token`; returns status
/// and body.
pub(super) async fn call(
    api: &GatewayApi,
    method: &str,
    url: &str,
    token: &str,
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value)> {
    let after_scheme = url.strip_prefix("http://").unwrap_or(url);
    let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    let method: Method = method.parse()?;
    let (status, answer) = api
        .with_token(token)
        .call(method.clone(), path, body)
        .await
        .with_context(|| format!("{method} {url}"))?;
    Ok((status.as_u16(), answer))
}

/// `base` (an object) with `extra`'s fields added over it.
pub(super) fn with_fields(mut base: Value, extra: &Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    base
}

/// Creates tenant `bench` and one endpoint with `endpoint` fields; returns the key and endpoint id.
pub(super) async fn tenant_and_endpoint(
    gw: &BenchGateway,
    endpoint: Value,
) -> anyhow::Result<(String, String)> {
    tenant_named_with_endpoint(gw, "bench", endpoint).await
}

/// Creates tenant `tenant` and one endpoint with `endpoint` fields; returns the
/// key and endpoint id.
pub(super) async fn tenant_named_with_endpoint(
    gw: &BenchGateway,
    tenant: &str,
    endpoint: Value,
) -> anyhow::Result<(String, String)> {
    tenant_with_plugin_and_endpoint(gw, tenant, None, endpoint).await
}

/// A plugin to upload before the endpoint that binds it: its name and bytes.
pub(super) type BenchPlugin<'a> = (&'a str, &'a [u8]);

/// [`tenant_named_with_endpoint`], uploading `plugin` between the tenant and
/// the endpoint, so the endpoint can bind it.
pub(super) async fn tenant_with_plugin_and_endpoint(
    gw: &BenchGateway,
    tenant: &str,
    plugin: Option<BenchPlugin<'_>>,
    endpoint: Value,
) -> anyhow::Result<(String, String)> {
    let base = &gw.base;
    let (s, t) = call(
        &gw.api,
        "POST",
        &format!("{base}/v1/tenants"),
        ADMIN,
        Some(&json!({"id": tenant})),
    )
    .await?;
    if s != 201 {
        bail!("creating the tenant: {s} {t}");
    }
    let key = t["api_key"].as_str().unwrap_or_default().to_owned();
    if let Some((name, wasm)) = plugin {
        upload_plugin(gw, tenant, &key, name, wasm).await?;
    }
    let (s, e) = call(
        &gw.api,
        "POST",
        &format!("{base}/v1/tenants/{tenant}/endpoints"),
        &key,
        Some(&endpoint),
    )
    .await?;
    if s != 201 {
        bail!("creating the endpoint: {s} {e}");
    }
    Ok((key, e["id"].as_str().unwrap_or_default().to_owned()))
}

/// Uploads `wasm` as `tenant`'s plugin `name`.
pub(super) async fn upload_plugin(
    gw: &BenchGateway,
    tenant: &str,
    key: &str,
    name: &str,
    wasm: &[u8],
) -> anyhow::Result<()> {
    let path = format!("/v1/tenants/{tenant}/plugins/{name}");
    let request = crate::client::ApiRequest::path(http::Method::PUT, &path)
        .token(Some(key))
        .raw_body(wasm.to_vec());
    let answer = gw.api.client().exchange(request).await?;
    if answer.status != 201 {
        bail!(
            "uploading plugin {name}: {} {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
    }
    Ok(())
}

/// A receiver that answers 200 (at once, or after a set latency) and records
/// when each request arrived, and the most requests it held at once.
pub(super) struct CountingReceiver {
    pub(super) addr: SocketAddr,
    pub(super) arrivals: Arc<Mutex<Vec<(Instant, String)>>>,
    in_flight: Arc<InFlight>,
    task: tokio::task::JoinHandle<()>,
}

/// Requests held now, and the most ever held at once.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl CountingReceiver {
    /// Answers 200 to everything.
    pub(super) async fn start() -> anyhow::Result<Self> {
        Self::start_with(false, Duration::ZERO).await
    }

    /// Answers 200 to everything after `latency`.
    pub(super) async fn start_after(latency: Duration) -> anyhow::Result<Self> {
        Self::start_with(false, latency).await
    }

    /// Answers 503 to the first request of each `webhook-id` and 200 after, so a
    /// bound plugin is really consulted.
    pub(super) async fn start_fail_once() -> anyhow::Result<Self> {
        Self::start_with(true, Duration::ZERO).await
    }

    async fn start_with(fail_first: bool, latency: Duration) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let arrivals: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
        let seen = Arc::clone(&arrivals);
        let failed: Arc<Mutex<std::collections::HashSet<String>>> = Arc::default();
        let in_flight = Arc::new(InFlight::default());
        let held = Arc::clone(&in_flight);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (seen, failed, held) =
                    (Arc::clone(&seen), Arc::clone(&failed), Arc::clone(&held));
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(
                        move |req: http::Request<hyper::body::Incoming>| {
                            let (seen, failed, held) =
                                (Arc::clone(&seen), Arc::clone(&failed), Arc::clone(&held));
                            async move {
                                let now = held.now.fetch_add(1, Ordering::SeqCst) + 1;
                                held.most.fetch_max(now, Ordering::SeqCst);
                                let id = req
                                    .headers()
                                    .get("webhook-id")
                                    .and_then(|v| v.to_str().ok())
                                    .unwrap_or("")
                                    .to_owned();
                                let _ = req.into_body().collect().await;
                                let first = fail_first
                                    && failed.lock().is_ok_and(|mut f| f.insert(id.clone()));
                                if let Ok(mut s) = seen.lock() {
                                    s.push((Instant::now(), id));
                                }
                                if !latency.is_zero() {
                                    tokio::time::sleep(latency).await;
                                }
                                held.now.fetch_sub(1, Ordering::SeqCst);
                                let mut resp =
                                    http::Response::new(Full::new(Bytes::from_static(b"ok")));
                                if first {
                                    *resp.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                                }
                                Ok::<_, std::convert::Infallible>(resp)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok(Self {
            addr,
            arrivals,
            in_flight,
            task,
        })
    }

    /// The most requests it held at once.
    pub(super) fn most_in_flight(&self) -> usize {
        self.in_flight.most.load(Ordering::SeqCst)
    }

    pub(super) fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub(super) fn count(&self) -> usize {
        self.arrivals.lock().map_or(0, |a| a.len())
    }
}

impl Drop for CountingReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Bytes used under `dir`.
pub(super) fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
