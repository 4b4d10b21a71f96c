//! A real HTTP receiver for delivery tests: it records every request and answers
//! from a script (status, headers, delay), then with 200 once the script runs out;
//! on `/fail-first/{n}` it fails each message's first `n` attempts instead.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::Notify;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Wait this long before answering (a hang, when longer than the timeout).
    pub delay: Duration,
}

impl Reply {
    /// An immediate answer with `status`.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// Adds a header.
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_owned(), v.to_owned()));
        self
    }

    /// Answers only after `d`.
    pub fn after(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

/// A request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub at: Instant,
    pub path: String,
    /// The method, e.g. `POST`.
    pub method: String,
    /// The query, when there was one (without the `?`).
    pub query: Option<String>,
}

/// The most arrivals in any sliding `window` (arrivals in order).
pub fn most_within(got: &[Received], window: Duration) -> usize {
    (0..got.len())
        .map(|i| {
            let start = got[i].at;
            got[i..]
                .iter()
                .take_while(|s| s.at - start < window)
                .count()
        })
        .max()
        .unwrap_or(0)
}

impl Received {
    /// A header's value (names are lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    received: Vec<Received>,
    in_flight: usize,
    max_in_flight: usize,
}

/// A running receiver; it stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Starts a receiver on `127.0.0.1:0` answering from `script`.
    pub async fn start(script: Vec<Reply>) -> Self {
        Self::start_with_tls(script, None).await
    }

    /// Like [`Receiver::start`], over TLS when `tls` is given.
    pub async fn start_with_tls(
        script: Vec<Reply>,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let arrived = Arc::new(Notify::new());
        let (st, ar) = (Arc::clone(&state), Arc::clone(&arrived));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (st, ar, tls) = (Arc::clone(&st), Arc::clone(&ar), tls.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req| answer(req, Arc::clone(&st), Arc::clone(&ar)));
                    let conn = http1::Builder::new();
                    match tls {
                        None => {
                            let _ = conn.serve_connection(TokioIo::new(stream), svc).await;
                        }
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(stream).await {
                                let _ = conn.serve_connection(TokioIo::new(s), svc).await;
                            }
                        }
                    }
                });
            }
        });
        Self {
            addr,
            state,
            arrived,
            task,
        }
    }

    /// The URL deliveries should go to.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// A URL whose deliveries fail their first `n` attempts each (503, counted by
    /// `webhook-id`), then get 200: deterministic retries, whatever the order.
    pub fn failing_first_url(&self, n: u32) -> String {
        format!("http://{}/fail-first/{n}", self.addr)
    }

    /// The HTTPS URL, for a receiver started with TLS.
    pub fn https_url(&self) -> String {
        format!("https://{}/hook", self.addr)
    }

    /// The most requests that were ever being answered at once.
    pub fn max_concurrent(&self) -> usize {
        self.state.lock().unwrap().max_in_flight
    }

    /// Appends replies to the script.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().script.extend(replies);
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// Waits until at least `n` requests arrived, or `limit` passed; returns what arrived.
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.arrived.notified();
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.received();
            }
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    req: Request<Incoming>,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let path = req.uri().path().to_owned();
    let method = req.method().as_str().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let message = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let (reply, body_text) = {
        let mut st = state.lock().unwrap();
        st.in_flight += 1;
        st.max_in_flight = st.max_in_flight.max(st.in_flight);
        let failing = failing_first(&st.received, &path, &message);
        st.received.push(Received {
            headers,
            body,
            at: Instant::now(),
            path,
            method,
            query,
        });
        match failing {
            Some(text) => (Reply::status(503), text),
            None => (
                st.script.pop_front().unwrap_or_else(|| Reply::status(200)),
                "ok".to_owned(),
            ),
        }
    };
    arrived.notify_waiters();
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    state.lock().unwrap().in_flight -= 1;
    let mut resp = Response::builder().status(reply.status);
    for (k, v) in &reply.headers {
        resp = resp.header(k, v);
    }
    Ok(resp.body(Full::new(Bytes::from(body_text))).unwrap())
}

/// On a `/fail-first/{n}` path, the body of a 503 while this message has had
/// fewer than `n` attempts before this one; `None` otherwise.
fn failing_first(received: &[Received], path: &str, message: &str) -> Option<String> {
    let n: usize = path.strip_prefix("/fail-first/")?.parse().ok()?;
    let before = received
        .iter()
        .filter(|r| r.path == path && r.header("webhook-id") == Some(message))
        .count();
    (before < n).then(|| format!("not yet: attempt {} of {n} that fail", before + 1))
}
