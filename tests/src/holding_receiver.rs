//! A receiver that holds requests until the test lets them go: it records the
//! order in which requests arrive, by path, and answers those under `/hold/`
//! only once released (one at a time, or all), the rest at once. Fairness tests
//! ask it about order ("did this arrive while those were all held?"), never
//! about time.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::{Notify, Semaphore};

/// One request, as it arrived.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub path: String,
    pub webhook_id: String,
    /// Held requests still unanswered when this one arrived.
    pub held_then: usize,
}

#[derive(Default)]
struct State {
    arrivals: Vec<Arrival>,
    held: usize,
}

struct Shared {
    state: Mutex<State>,
    changed: Notify,
    /// One permit answers one held request; closed, it answers all.
    release: Semaphore,
}

/// The running receiver; stopped when dropped.
pub struct HoldingReceiver {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl HoldingReceiver {
    /// Starts a receiver on `127.0.0.1:0`.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Notify::new(),
            release: Semaphore::new(0),
        });
        let accepting = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let shared = Arc::clone(&accepting);
                tokio::spawn(async move {
                    let svc = service_fn(move |req| answer(req, Arc::clone(&shared)));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Self { addr, shared, task }
    }

    /// A URL whose requests are held until released.
    pub fn held_url(&self, name: &str) -> String {
        format!("http://{}/hold/{name}", self.addr)
    }

    /// A URL whose requests are answered 200 at once.
    pub fn prompt_url(&self, name: &str) -> String {
        format!("http://{}/prompt/{name}", self.addr)
    }

    /// Requests held right now.
    pub fn held(&self) -> usize {
        self.shared.state.lock().unwrap().held
    }

    /// Every request so far, in the order they arrived.
    pub fn arrivals(&self) -> Vec<Arrival> {
        self.shared.state.lock().unwrap().arrivals.clone()
    }

    /// Answers `n` held requests (and as many later ones, as they arrive).
    pub fn release(&self, n: usize) {
        self.shared.release.add_permits(n);
    }

    /// Answers every held request, and every later one at once.
    pub fn release_all(&self) {
        self.shared.release.close();
    }

    /// Waits until `ready` holds of the arrivals so far, or `limit` passes;
    /// returns the arrivals and whether it held.
    pub async fn wait_until(
        &self,
        limit: Duration,
        ready: impl Fn(&[Arrival]) -> bool,
    ) -> (Vec<Arrival>, bool) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.shared.changed.notified();
            let arrivals = self.arrivals();
            if ready(&arrivals) {
                return (arrivals, true);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let arrivals = self.arrivals();
                let ok = ready(&arrivals);
                return (arrivals, ok);
            }
        }
    }
}

impl Drop for HoldingReceiver {
    fn drop(&mut self) {
        self.shared.release.close();
        self.task.abort();
    }
}

async fn answer(
    req: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_owned();
    let webhook_id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let hold = path.starts_with("/hold/");
    {
        let mut state = shared.state.lock().unwrap();
        let held_then = state.held;
        state.arrivals.push(Arrival {
            path,
            webhook_id,
            held_then,
        });
        if hold {
            state.held += 1;
        }
    }
    shared.changed.notify_waiters();
    if hold {
        // Counted out however the request ends, answered or dropped by its client.
        let _held = Held(Arc::clone(&shared));
        // A closed semaphore answers everyone; a permit answers one.
        if let Ok(permit) = shared.release.acquire().await {
            permit.forget();
        }
    }
    Ok(Response::new(Full::new(Bytes::from_static(b"ok"))))
}

/// One held request, counted out when it ends.
struct Held(Arc<Shared>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.state.lock().unwrap().held -= 1;
        self.0.changed.notify_waiters();
    }
}
