//! A receiver for the command-line tests: the lab's raw-socket receiver, keeping
//! every raw request and answering a list of statuses in turn.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate::lab::raw_receiver::{
    Action, RawRequest, ReadLimits, Responder, Response, RunningReceiver, Then,
};

use super::cli::{CLI_LIMIT, wait_until};

/// The lab's raw-socket receiver on a thread of its own that keeps every raw request
/// (request line, headers, body) and answers the given statuses in turn, the last
/// one from then on, closing each connection.
pub struct RawReceiver {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: tokio_util::sync::CancellationToken,
}

/// Records requests and answers from a list of statuses.
struct StatusList {
    statuses: Vec<u16>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Responder for StatusList {
    fn respond(&self, request: &RawRequest) -> Action {
        let mut requests = self.requests.lock().unwrap();
        let status = self.statuses[requests.len().min(self.statuses.len() - 1)];
        requests.push(request.raw.clone());
        let mut answer = Response::text(status, "");
        answer.close = true;
        Action {
            delay: Duration::ZERO,
            then: Then::Answer(answer),
        }
    }
}

const RAW_LIMITS: ReadLimits = ReadLimits {
    max_head: 64 * 1024,
    max_body: 4 * 1024 * 1024,
    idle: Duration::from_secs(10),
    read: Duration::from_secs(10),
};

impl RawReceiver {
    pub fn start(statuses: &[u16]) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let responder = Arc::new(StatusList {
            statuses: statuses.to_vec(),
            requests: Arc::clone(&requests),
        });
        let stop = tokio_util::sync::CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let until = stop.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let running = RunningReceiver::start(responder, RAW_LIMITS).unwrap();
                tx.send(running.addr).unwrap();
                until.cancelled().await;
            });
        });
        let addr = rx.recv_timeout(CLI_LIMIT).expect("the receiver starts");
        let url = format!("http://{addr}/hook");
        Self {
            url,
            requests,
            stop,
        }
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// The first request, waiting (bounded) for it.
    pub fn first(&self) -> Vec<u8> {
        wait_until("a request", || {
            self.requests.lock().unwrap().first().cloned()
        })
    }
}

impl Drop for RawReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
