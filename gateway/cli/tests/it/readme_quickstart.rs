//! The README's quickstart, executed as written: its shell blocks run in order under
//! bash, against the real binary, and each step must do what the text says.
//!
//! Only what the machine requires changes: `cargo run --release -p hookgate --`
//! becomes the already-built binary, the gateway's port and data dir come from the
//! environment (free loopback ports, a temp dir), `localhost:8080` and the
//! receiver's port 9000 follow, and `hgk_...` becomes the admin token the gateway
//! printed. Needs `curl`, and `python3` with `standardwebhooks` (the README's test
//! command installs it). Every wait is bounded; everything runs on loopback.

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::sh_blocks;

const README: &str = include_str!("../../../../README.md");
/// Every wait of this test ends within this.
const LIMIT: Duration = Duration::from_secs(60);

/// The `sh` blocks of the README section whose heading starts with `heading`.
fn shell_blocks(heading: &str) -> Vec<String> {
    sh_blocks(README, heading)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (bounded) until something listens on `port`.
fn wait_listening(port: u16, what: &str) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + LIMIT;
    while TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A bash process in its own process group, with its output collected; the whole
/// group (background jobs included) is killed on drop.
struct Shell {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Shell {
    fn run(script: &str, env: &[(&str, String)]) -> Self {
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(script)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env_remove("HOOKGATE_ADMIN_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn bash");
        let collect = |pipe: Box<dyn Read + Send>| {
            let text = Arc::new(Mutex::new(String::new()));
            let kept = Arc::clone(&text);
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut t = kept.lock().unwrap();
                    t.push_str(&line);
                    t.push('\n');
                }
            });
            text
        };
        let stdout = collect(Box::new(child.stdout.take().unwrap()));
        let stderr = collect(Box::new(child.stderr.take().unwrap()));
        Self {
            child,
            stdout,
            stderr,
        }
    }

    fn out(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    fn err(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (bounded) until stdout holds `needle`; returns stdout.
    fn wait_out(&self, needle: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let out = self.out();
            if out.contains(needle) {
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "no {needle:?} within {LIMIT:?}\nstdout:\n{out}\nstderr:\n{}",
                self.err()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (bounded) until stderr holds `needle`; returns stderr.
    fn wait_err(&self, needle: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let err = self.err();
            if err.contains(needle) {
                return err;
            }
            assert!(
                Instant::now() < deadline,
                "no {needle:?} on stderr within {LIMIT:?}:\n{err}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = self.child.wait();
    }
}

/// The value printed after `marker=` on its own line.
fn marked(out: &str, marker: &str) -> String {
    let prefix = format!("{marker}=");
    out.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix} line in\n{out}"))
        .to_owned()
}

/// The JSON values printed between `from` and `to`. curl prints no newline after a
/// body, so they may run together; the receiver's `verified ...` lines, printed from
/// the background, may land anywhere between them and are taken out first.
fn json_values(out: &str, from: &str, to: &str) -> Vec<serde_json::Value> {
    let start = out
        .find(from)
        .unwrap_or_else(|| panic!("no {from:?} in\n{out}"))
        + from.len();
    let end = out[start..].find(to).map_or(out.len(), |i| start + i);
    let mut text = out[start..end].to_owned();
    while let Some(i) = text.find("verified evt_") {
        let line_end = text[i..].find('\n').map_or(text.len(), |j| i + j + 1);
        text.replace_range(i..line_end, "");
    }
    serde_json::Deserializer::from_str(&text)
        .into_iter::<serde_json::Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not JSON values ({e}):\n{text}"))
}

#[test]
fn the_readme_quickstart_runs_as_written() {
    let python = Command::new("python3")
        .args(["-c", "import standardwebhooks"])
        .output()
        .expect("python3 is needed");
    assert!(
        python.status.success(),
        "python3 lacks standardwebhooks: run the README's test command, which installs it"
    );
    let blocks = shell_blocks("Quickstart");
    assert_eq!(blocks.len(), 3, "start, set up, send: {blocks:#?}");
    let bin = env!("CARGO_BIN_EXE_hookgate");
    let data = tempfile::tempdir().unwrap();
    let (gateway_port, receiver_port) = (free_port(), free_port());
    let adapt = |block: &str| {
        block
            .replace("cargo run --release -p hookgate --", bin)
            .replace("localhost:8080", &format!("127.0.0.1:{gateway_port}"))
            .replace("9000", &receiver_port.to_string())
    };

    // 1. "Start the gateway with loopback receivers allowed": it starts, and prints
    //    the admin token once (the data dir is new).
    assert!(blocks[0].contains("HOOKGATE_ALLOW_PRIVATE_SUBNETS=127.0.0.0/8"));
    let env = [
        ("HOOKGATE_LISTEN", format!("127.0.0.1:{gateway_port}")),
        (
            "HOOKGATE_STORE__DATA_DIR",
            data.path().display().to_string(),
        ),
        ("HOOKGATE_STORE__MIN_FREE_DISK", "0".to_owned()),
    ];
    let gateway = Shell::run(&adapt(&blocks[0]), &env);
    let err = gateway.wait_err("admin token");
    let admin = err
        .split_whitespace()
        .find(|w| w.starts_with("hgk_"))
        .unwrap_or_else(|| panic!("no hgk_ token in\n{err}"))
        .to_owned();
    wait_listening(gateway_port, "the gateway");

    // 2. "Create a tenant and an endpoint, then start a receiver". The script prints
    //    what it made, and waits (bounded) for the receiver before step 3 runs.
    assert!(blocks[1].contains("export ADMIN=hgk_..."), "{}", blocks[1]);
    let setup = adapt(&blocks[1]).replace("hgk_...", &admin);
    let stop_file = data.path().join("stop-the-receiver");
    let script = format!(
        "set -eo pipefail\n{setup}\n\
         echo KEY=$KEY\necho SECRET=$SECRET\n\
         for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/{receiver_port}) 2>/dev/null && break; sleep 0.1; done\n\
         echo SETUP-DONE\n{send}\necho\necho SEND-DONE\n\
         for i in $(seq 600); do [ -e '{stop}' ] && break; sleep 0.1; done\n\
         kill $!\nwait || true\necho RECEIVER-STOPPED\n",
        send = adapt(&blocks[2]),
        stop = stop_file.display(),
    );
    let shell = Shell::run(&script, &[]);
    let out = shell.wait_out("SETUP-DONE");
    let key = marked(&out, "KEY");
    let secret = marked(&out, "SECRET");
    assert!(
        key.starts_with("hgk_"),
        "the tenant's API key: {key:?}\n{}",
        shell.err()
    );
    assert!(
        secret.starts_with("whsec_"),
        "the endpoint's secret: {secret:?}\n{}",
        shell.err()
    );

    // 3. "Send an event (202 means it is on disk), then look at the delivery": the
    //    ingest answer names the event, the list shows its delivery, and "the receiver
    //    prints `verified evt_... {"id":42}`".
    let out = shell.wait_out("SEND-DONE");
    let answers = json_values(&out, "SETUP-DONE\n", "SEND-DONE");
    assert_eq!(
        answers.len(),
        2,
        "the ingest answer, then the list: {answers:?}"
    );
    let (ingested, listed) = (&answers[0], &answers[1]);
    let event_id = ingested["id"].as_str().expect("an event id").to_owned();
    assert!(event_id.starts_with("evt_"), "{ingested}");
    assert_eq!(
        ingested["deliveries"].as_array().map(Vec::len),
        Some(1),
        "{ingested}"
    );
    let listed = listed["data"].as_array().expect("a delivery list");
    assert!(
        listed.iter().any(|d| d["event_id"] == event_id.as_str()),
        "the list shows the event's delivery: {listed:?}"
    );
    let verified = format!("verified {event_id} {{\"id\":42}}");
    shell.wait_out(&verified);

    // "Stop it and send another event to watch retries": the delivery's attempt log
    // shows the failed attempt, its error, the delay chosen and the next attempt.
    std::fs::write(&stop_file, b"").unwrap();
    shell.wait_out("RECEIVER-STOPPED");
    let base = format!("http://127.0.0.1:{gateway_port}");
    let auth = format!("authorization: Bearer {key}");
    let send = Command::new("curl")
        .args([
            "-s",
            "-X",
            "POST",
            &format!("{base}/v1/tenants/acme/events"),
        ])
        .args([
            "-H",
            &auth,
            "-d",
            r#"{"event_type":"order.paid","payload":{"id":43}}"#,
        ])
        .output()
        .unwrap();
    let second: serde_json::Value = serde_json::from_slice(&send.stdout).unwrap_or_default();
    let delivery = second["deliveries"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no delivery in {second}"))
        .to_owned();
    let deadline = Instant::now() + LIMIT;
    let attempt = loop {
        let show = Command::new("curl")
            .args([
                "-s",
                &format!("{base}/v1/tenants/acme/deliveries/{delivery}"),
            ])
            .args(["-H", &auth])
            .output()
            .unwrap();
        let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap_or_default();
        if let Some(first) = shown["attempt_log"].as_array().and_then(|a| a.first()) {
            break first.clone();
        }
        assert!(Instant::now() < deadline, "no attempt logged: {shown}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(attempt["attempt"], 1, "{attempt}");
    assert_eq!(
        attempt["error_kind"], "connect",
        "the receiver is stopped: {attempt}"
    );
    assert_eq!(attempt["verdict"], "retry", "{attempt}");
    assert!(attempt["delay_ms"].as_u64().is_some(), "{attempt}");
    assert!(attempt["next_attempt_at"].is_string(), "{attempt}");
    drop(gateway);
}
