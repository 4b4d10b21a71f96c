//! An OTLP/HTTP trace collector nobody here wrote the decoding of:
//! `scripts/otlp_receiver.py`, on the official `opentelemetry-proto` messages,
//! run as a child process; the spans it decoded are read back as JSON.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// A running collector; killed when dropped.
pub struct OtlpCollector {
    /// Its base URL, as `telemetry.otlp.endpoint` takes it.
    pub endpoint: String,
    spans: Arc<Mutex<Vec<Value>>>,
    child: Child,
}

impl OtlpCollector {
    /// Starts one on `127.0.0.1`. Without python3 and `opentelemetry-proto`
    /// (`tests/run.sh` installs it) the test fails, saying so.
    pub async fn start() -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/otlp_receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 is needed to run the OTLP receiver");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Its first line (the port) comes within a second; reading it blocks
        // this test's thread only.
        let port = tokio::task::block_in_place(|| lines.next())
            .and_then(Result::ok)
            .unwrap_or_else(|| {
                panic!("the OTLP receiver ended: pip install opentelemetry-proto==1.45.2 (tests/run.sh)")
            });
        let spans = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&spans);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let span: Value = serde_json::from_str(&line).expect("a span as JSON");
                kept.lock().unwrap().push(span);
            }
        });
        Self {
            endpoint: format!("http://127.0.0.1:{}", port.trim()),
            spans,
            child,
        }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Value> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits until `done` holds for the spans received, or `limit` passes;
    /// returns them.
    pub async fn wait_for(&self, limit: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let spans = self.spans();
            if done(&spans) || tokio::time::Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for OtlpCollector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
