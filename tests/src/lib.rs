//! Test harness: a real gateway on `127.0.0.1:0` over a temporary data dir (the
//! lab's in-process launcher), driven through the command line's API client.

use std::net::SocketAddr;
use std::sync::Arc;

pub use backend::{Backend, Bed};
pub use hookgate::client::{Answer, ApiClient, ApiRequest};
use hookgate::lab::in_process::InProcessGateway;
use hookgate_server::RunOptions;
use hookgate_server::lab::ScratchDatabase;
use hookgate_server::{Config, StoreConfig};
pub use plugin_files::{fixture_module, plugin_fixture, plugin_wasm};
use serde_json::{Value, json};

mod backend;
pub mod brokers;
pub mod holding_receiver;
pub mod moto;
pub mod otlp_collector;
mod plugin_files;
pub mod receiver;
pub mod resolvers;
pub mod tcp_proxy;
pub mod tls;
pub mod verify;

/// The admin token every test gateway is configured with.
pub const ADMIN: &str = "hgk_test-admin-token-0123456789";

/// A running gateway; stopped (gracefully) when dropped or by [`TestGateway::stop`].
pub struct TestGateway {
    pub addr: SocketAddr,
    pub base: String,
    /// The command line's API client for this gateway, with no token of its own.
    pub api: ApiClient,
    pub dir: Arc<tempfile::TempDir>,
    gateway: InProcessGateway,
    /// The scratch database of a gateway on PostgreSQL; dropped after it.
    _db: Option<Arc<ScratchDatabase>>,
}

/// A config for tests: loopback allowed, admin token fixed, data in `dir`.
pub fn test_config(dir: &std::path::Path) -> Config {
    Config {
        store: StoreConfig {
            data_dir: dir.to_path_buf(),
            min_free_disk: 0,
            ..StoreConfig::default()
        },
        admin_token: Some(ADMIN.to_owned()),
        allow_private_subnets: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::default()
    }
}

impl TestGateway {
    /// Starts a gateway with the default test config.
    pub async fn start() -> Self {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        Self::start_with(test_config(dir.path()), dir, RunOptions::default()).await
    }

    /// Starts a gateway with the default test config and `options` (a clock, a
    /// resolver, a fault hook).
    pub async fn start_with_options(options: RunOptions) -> Self {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        Self::start_with(test_config(dir.path()), dir, options).await
    }

    /// Starts a gateway with `config` (whose data dir lives in `dir`) and `options`;
    /// returns once it answers.
    pub async fn start_with(
        config: Config,
        dir: Arc<tempfile::TempDir>,
        options: RunOptions,
    ) -> Self {
        let bed = Bed {
            dir,
            config,
            db: None,
        };
        Self::start_bed(bed, options).await
    }

    /// Starts a gateway with the default test config on `backend`.
    pub async fn start_on(backend: Backend) -> Self {
        Self::start_bed(backend.bed().await, RunOptions::default()).await
    }

    /// Starts a gateway on `bed` (its config as the test left it) with `options`;
    /// returns once it answers.
    pub async fn start_bed(bed: Bed, options: RunOptions) -> Self {
        let gateway = InProcessGateway::start(bed.config, options).await.unwrap();
        let api = ApiClient::new(&gateway.base, None).unwrap();
        Self {
            addr: gateway.addr,
            base: gateway.base.clone(),
            api,
            dir: bed.dir,
            gateway,
            _db: bed.db,
        }
    }

    /// Stops the gateway and waits for it to exit.
    pub async fn stop(self) {
        self.gateway.stop().await.unwrap();
    }

    /// Sends `request`; returns the answer whatever its status.
    pub async fn exchange(&self, request: ApiRequest) -> Answer {
        self.api.exchange(request).await.unwrap()
    }

    /// Sends a request with an optional bearer token and JSON body; returns status and JSON body.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = ApiRequest::path(method.parse().unwrap(), path).token(token);
        if let Some(b) = body {
            request = request.json(&b);
        }
        let answer = self.exchange(request).await;
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        (
            answer.status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// Sends raw bytes as the body.
    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> (u16, String) {
        let mut request = ApiRequest::path(method.parse().unwrap(), path)
            .token(Some(token))
            .raw_body(body);
        for (k, v) in headers {
            request = request.header(k, Some(v));
        }
        let answer = self.exchange(request).await;
        (
            answer.status,
            String::from_utf8_lossy(&answer.body).into_owned(),
        )
    }

    /// Creates a tenant; returns its API key.
    pub async fn tenant(&self, id: &str) -> String {
        let (s, b) = self
            .call("POST", "/v1/tenants", Some(ADMIN), Some(json!({"id": id})))
            .await;
        assert_eq!(s, 201, "{b}");
        b["api_key"].as_str().unwrap().to_owned()
    }

    /// Creates an endpoint with `body`; returns the endpoint object (with its secret).
    pub async fn endpoint(&self, tenant: &str, key: &str, body: Value) -> Value {
        let (s, b) = self
            .call(
                "POST",
                &format!("/v1/tenants/{tenant}/endpoints"),
                Some(key),
                Some(body),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        b
    }

    /// Sends an event; returns the 202 body.
    pub async fn event(&self, tenant: &str, key: &str, event_type: &str, payload: Value) -> Value {
        let body = json!({"event_type": event_type, "payload": payload});
        let (s, b) = self
            .call(
                "POST",
                &format!("/v1/tenants/{tenant}/events"),
                Some(key),
                Some(body),
            )
            .await;
        assert_eq!(s, 202, "{b}");
        b
    }
}

impl TestGateway {
    /// Polls a delivery until `done` holds for it or `limit` passes; returns its last view.
    pub async fn wait_delivery(
        &self,
        tenant: &str,
        key: &str,
        delivery_id: &str,
        limit: std::time::Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        let path = format!("/v1/tenants/{tenant}/deliveries/{delivery_id}");
        loop {
            let (s, d) = self.call("GET", &path, Some(key), None).await;
            assert_eq!(s, 200, "{d}");
            if done(&d) || tokio::time::Instant::now() >= deadline {
                return d;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Creates tenant `acme` and one endpoint at `url` with `extra` fields; sends one
    /// event; returns (key, endpoint, delivery id).
    pub async fn one_delivery(&self, url: &str, extra: Value) -> (String, Value, String) {
        let key = self.tenant("acme").await;
        let mut body = json!({"url": url});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        let ep = self.endpoint("acme", &key, body).await;
        let ev = self
            .event(
                "acme",
                &key,
                "test.event",
                json!({"hello": "world", "n": 1}),
            )
            .await;
        let dlv = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
        (key, ep, dlv)
    }
}

/// Whether a delivery view has reached a final state.
pub fn is_final(d: &Value) -> bool {
    d["state"] == "succeeded" || d["state"] == "dead"
}

impl TestGateway {
    /// Uploads `bytes` as `tenant`'s plugin `name`; returns status and JSON body.
    pub async fn upload_plugin(
        &self,
        tenant: &str,
        key: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> (u16, Value) {
        let path = format!("/v1/tenants/{tenant}/plugins/{name}");
        let (s, text) = self
            .call_raw(
                "PUT",
                &path,
                key,
                bytes,
                &[("content-type", "application/wasm")],
            )
            .await;
        (
            s,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

/// A receiver answering each request with the next `(status, JSON body)` of
/// `script`, then 200; returns its URL. (The [`receiver::Receiver`] sends no
/// bodies; plugins that read the body need one.)
pub async fn body_receiver(script: Vec<(u16, &'static str)>) -> String {
    use std::sync::Mutex;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |_req: hyper::Request<hyper::body::Incoming>| {
                        let (status, body) =
                            script.lock().unwrap().pop_front().unwrap_or((200, "{}"));
                        async move {
                            hyper::Response::builder()
                                .status(status)
                                .header("content-type", "application/json")
                                .body(http_body_util::Full::new(bytes::Bytes::from_static(
                                    body.as_bytes(),
                                )))
                        }
                    },
                );
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, svc)
                    .await;
            });
        }
    });
    url
}

/// Uploads `plugin` (an example from `plugins/`) as `name` for tenant `acme`,
/// asserting 201 and the version; returns the body.
pub async fn upload_example(
    gw: &TestGateway,
    key: &str,
    name: &str,
    plugin: &str,
    version: u64,
) -> Value {
    let (s, b) = gw
        .upload_plugin("acme", key, name, plugin_wasm(plugin))
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(
        (b["name"].as_str(), b["version"].as_u64()),
        (Some(name), Some(version)),
        "{b}"
    );
    b
}
