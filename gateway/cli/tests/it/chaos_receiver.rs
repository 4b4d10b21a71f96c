//! `hookgate chaos-receiver` as a binary: with a fixed seed it answers a fixed set of
//! requests (signed well, signed badly, unsigned, repeated) exactly as its fault plan
//! says, and its summary counts statuses, resets, hangs, duplicates and signature
//! failures as the client saw them. `--down-for` refuses connections; `--duration`
//! stops it by itself.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hookgate::lab::chaos::plan::{Fault, FaultPlan, parse_statuses};
use hookgate_server::{SigningSecret, sign};

/// Every wait of these tests ends within this.
const LIMIT: Duration = Duration::from_secs(60);
/// How long a request may go unanswered before the client calls it a hang.
const HANG_AFTER: Duration = Duration::from_millis(1500);
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A running `chaos-receiver`, its address and its stderr lines as they come.
struct Receiver {
    child: Child,
    addr: SocketAddr,
    stderr: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Receiver {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookgate"))
            .arg("chaos-receiver")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hookgate chaos-receiver");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut receiver = Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            stderr: rx,
            seen: Vec::new(),
        };
        let line = receiver.wait_line("listening on http://");
        let addr = line.split("http://").nth(1).unwrap();
        let addr = addr.split(|c: char| c == ',' || c.is_whitespace()).next();
        receiver.addr = addr.unwrap().parse().unwrap();
        receiver
    }

    /// The first stderr line containing `needle`, waiting (bounded) for it.
    fn wait_line(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
                return line.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no stderr line with {needle:?}; got {:?}", self.seen),
            }
        }
    }

    /// Waits (bounded) for the exit; returns the exit code and stdout.
    fn finish(mut self) -> (i32, String) {
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("chaos-receiver did not stop within {LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        (status.code().unwrap_or(-1), out)
    }

    fn terminate(&self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // A failed assertion must not leave the receiver running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Status {
        status: u16,
        retry_after: Option<u64>,
    },
    Reset,
    Hang,
}

/// How a request is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signing {
    Good,
    WrongSecret,
    Unsigned,
}

fn now_s() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    i64::try_from(secs).unwrap()
}

/// Sends one webhook on its own connection and reports what came back.
fn send(addr: SocketAddr, id: &str, body: &str, signing: Signing) -> Seen {
    let ts = now_s();
    let mut head = format!(
        "POST /webhooks HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\nwebhook-id: {id}\r\n",
        body.len()
    );
    let secret = match signing {
        Signing::Good => Some(SigningSecret::parse(SECRET).unwrap()),
        Signing::WrongSecret => Some(SigningSecret::generate()),
        Signing::Unsigned => None,
    };
    if let Some(secret) = secret {
        let sig = sign(&[secret], id, ts, body.as_bytes());
        head.push_str(&format!(
            "webhook-timestamp: {ts}\r\nwebhook-signature: {sig}\r\n"
        ));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(addr).expect("connect to the receiver");
    stream.set_read_timeout(Some(HANG_AFTER)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Seen::Hang,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Seen::Reset,
        Err(e) => panic!("reading the answer: {e}"),
        Ok(_) if answer.is_empty() => Seen::Reset,
        Ok(_) => {
            let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
            let status = text.split(' ').nth(1).unwrap().parse().unwrap();
            let retry_after = text
                .lines()
                .find_map(|l| l.strip_prefix("retry-after:"))
                .map(|v| v.trim().parse().unwrap());
            assert!(text.contains("\r\ndate: "), "answers carry Date:\n{text}");
            Seen::Status {
                status,
                retry_after,
            }
        }
    }
}

/// The fixed requests: 40 webhooks over 25 ids (ids 0–14 come twice), every fifth
/// signed with the wrong secret and every seventh unsigned.
fn requests() -> Vec<(String, String, Signing)> {
    (0..40)
        .map(|i| {
            let signing = match i {
                i if i % 7 == 6 => Signing::Unsigned,
                i if i % 5 == 3 => Signing::WrongSecret,
                _ => Signing::Good,
            };
            let body = format!(r#"{{"order":{i}}}"#);
            (format!("evt_{:02}", i % 25), body, signing)
        })
        .collect()
}

const STATUSES: &str = "200:60,503:25,429:15";
const SEED: u64 = 42;

#[test]
fn a_seeded_run_answers_by_its_plan_and_counts_what_the_client_saw() {
    let mut receiver = Receiver::spawn(&[
        "--status",
        STATUSES,
        "--retry-after",
        "2",
        "--latency",
        "1ms..5ms",
        "--reset-rate",
        "0.1",
        "--hang-rate",
        "0.05",
        "--fail-first",
        "2",
        "--verify-secret",
        SECRET,
        "--seed",
        "42",
        "--json-summary",
    ]);
    let plan = FaultPlan {
        statuses: parse_statuses(STATUSES).unwrap(),
        retry_after_s: Some(2),
        hang_rate: 0.05,
        reset_rate: 0.1,
        fail_first: 2,
        seed: SEED,
        ..FaultPlan::default()
    };

    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    let (mut resets, mut hangs, mut duplicates, mut bad_signatures) = (0, 0, 0, 0);
    let mut acknowledged = HashSet::new();
    let mut ids = HashSet::new();
    for (i, (id, body, signing)) in requests().into_iter().enumerate() {
        let n = i as u64 + 1;
        let seen = send(receiver.addr, &id, &body, signing);
        // The seed decides: request n gets the plan's fault n; a bad signature is 401.
        let expected = match plan.fault(n) {
            Fault::Reset { .. } => Seen::Reset,
            Fault::Hang => Seen::Hang,
            Fault::Respond { status, .. } => {
                let status = if signing == Signing::Good {
                    status
                } else {
                    401
                };
                Seen::Status {
                    status,
                    retry_after: plan.retry_after(status),
                }
            }
        };
        assert_eq!(seen, expected, "request {n} ({id}, {signing:?})");
        if n <= 2 && signing == Signing::Good {
            assert!(
                matches!(seen, Seen::Status { status: 503, .. }),
                "--fail-first 2"
            );
        }
        ids.insert(id.clone());
        if acknowledged.contains(&id) {
            duplicates += 1;
        }
        if signing != Signing::Good {
            bad_signatures += 1;
        }
        match seen {
            Seen::Status { status, .. } => {
                *by_status.entry(status.to_string()).or_default() += 1;
                if (200..300).contains(&status) {
                    acknowledged.insert(id);
                }
            }
            Seen::Reset => resets += 1,
            Seen::Hang => hangs += 1,
        }
    }
    // The run covers every kind of answer, so the counts below mean something.
    for kind in ["200", "401", "429", "503"] {
        assert!(by_status.contains_key(kind), "no {kind} in {by_status:?}");
    }
    assert!(
        resets > 0 && hangs > 0 && duplicates > 0,
        "{resets} {hangs} {duplicates}"
    );

    receiver.wait_line("requests (");
    let status_line = receiver.wait_line("signature failures");
    assert!(status_line.contains("duplicates"), "{status_line}");
    receiver.terminate();
    let (code, out) = receiver.finish();
    assert_eq!(code, 0, "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(out.lines().last().unwrap_or_default()).expect("a JSON summary");
    assert_eq!(summary["requests"], 40, "{summary}");
    assert_eq!(
        summary["by_status"],
        serde_json::json!(by_status),
        "{summary}"
    );
    assert_eq!(summary["resets"], resets, "{summary}");
    assert_eq!(summary["hangs"], hangs, "{summary}");
    assert_eq!(summary["duplicates"], duplicates, "{summary}");
    assert_eq!(
        summary["redeliveries"], 15,
        "ids 0-14 come twice: {summary}"
    );
    assert_eq!(summary["distinct_ids"], ids.len(), "{summary}");
    assert_eq!(summary["signature_failures"], bad_signatures, "{summary}");
}

#[test]
fn down_for_refuses_connections_then_duration_stops_it() {
    let receiver = Receiver::spawn(&["--down-for", "5s", "--duration", "8s"]);
    let refused = TcpStream::connect(receiver.addr).expect_err("refused while down");
    assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{refused}");
    let deadline = Instant::now() + LIMIT;
    let seen = loop {
        if TcpStream::connect(receiver.addr).is_ok() {
            break send(receiver.addr, "evt_up", "{}", Signing::Unsigned);
        }
        assert!(Instant::now() < deadline, "never came up");
        std::thread::sleep(Duration::from_millis(100));
    };
    // No --verify-secret: nothing is checked, and the default answer is 200.
    assert_eq!(
        seen,
        Seen::Status {
            status: 200,
            retry_after: None
        }
    );
    let (code, out) = receiver.finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("chaos-receiver summary after"), "{out}");
    let rows: Vec<&str> = out.lines().map(str::trim).collect();
    assert!(rows.contains(&"requests             1"), "{out}");
    assert!(rows.contains(&"status 200           1"), "{out}");
    assert!(
        rows.contains(&"signature failures   not checked (no --verify-secret)"),
        "{out}"
    );
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["--status", "200:0"][..],
        &["--latency", "9ms..1ms"],
        &["--reset-rate", "2"],
        &["--verify-secret", "nope"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hookgate"))
            .arg("chaos-receiver")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}
