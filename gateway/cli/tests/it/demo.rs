//! `hookgate demo --events 50 --no-tty` runs by itself to the end: every event is
//! delivered, through retries, and the summary says so; with `--destination-json`
//! it delivers into a local broker instead.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The demo waits at most 90 s for its deliveries; this leaves room for start-up.
const LIMIT: Duration = Duration::from_secs(150);

/// The value after `label` on the summary row that starts with it.
fn row<'a>(out: &'a str, label: &str) -> &'a str {
    let summary = out
        .split("\nSummary\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary in\n{out}"));
    summary
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {label:?} row in\n{out}"))
}

/// The leading number of `text`.
fn number(text: &str) -> u64 {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number at {text:?}"))
}

/// Runs `hookgate demo` with `args` to its end; its exit status, stdout and stderr.
fn run_demo(args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .arg("demo")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hookgate demo");
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hookgate demo did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, out.join().unwrap(), err.join().unwrap())
}

/// The demo into a Redis stream of its own on the local server: every event
/// is an entry there, and the summary says all were delivered.
#[test]
fn demo_delivers_into_a_local_broker() {
    let stream = format!("hg-demo-{}", std::process::id());
    let destination =
        format!(r#"{{"type":"redis","url":"redis://127.0.0.1:6379/0","stream":"{stream}"}}"#);
    let (status, out, err) = run_demo(&[
        "--events",
        "20",
        "--no-tty",
        "--destination-json",
        &destination,
    ]);
    let xlen = Command::new("redis-cli")
        .args(["-u", "redis://127.0.0.1:6379/0", "XLEN", &stream])
        .output()
        .expect("redis-cli is on this machine");
    let _ = Command::new("redis-cli")
        .args(["-u", "redis://127.0.0.1:6379/0", "DEL", &stream])
        .output();
    assert!(status.success(), "exit {status}\n{out}\n{err}");
    assert!(
        out.contains("broker    redis redis://127.0.0.1:6379/0"),
        "{out}"
    );
    assert_eq!(number(row(&out, "delivered")), 20, "{out}");
    assert_eq!(String::from_utf8_lossy(&xlen.stdout).trim(), "20", "{out}");
    // A destination that is not a JSON object is a clear CLI error.
    let (status, _, err) = run_demo(&["--events", "1", "--no-tty", "--destination-json", "[1]"]);
    assert!(!status.success());
    assert!(
        err.contains("--destination-json: must be a JSON object"),
        "{err}"
    );
}

#[test]
fn demo_delivers_every_event_through_retries() {
    let (status, out, err) = run_demo(&["--events", "50", "--no-tty", "--seed", "7"]);
    assert!(status.success(), "exit {status}\n{out}\n{err}");

    // Live progress: one plain line a second, no terminal escapes.
    assert!(!out.contains('\x1b'), "--no-tty must not redraw:\n{out}");
    let progress: Vec<&str> = out.lines().filter(|l| l.starts_with('[')).collect();
    assert!(!progress.is_empty(), "no progress lines in\n{out}");
    assert!(
        progress
            .iter()
            .any(|l| l.contains("receiver down (refusing connections)")),
        "the receiver starts down:\n{out}"
    );
    assert!(
        progress.iter().any(|l| !l.contains("  retrying 0  ")),
        "some deliveries wait for a retry:\n{out}"
    );

    // The summary: all 50 delivered, with retries, none dead.
    assert!(row(&out, "delivered").starts_with("50 of 50 in "), "{out}");
    let attempts = number(row(&out, "attempts"));
    assert!(
        attempts > 50,
        "retries mean more attempts than events:\n{out}"
    );
    let retried = number(row(&out, "retried"));
    assert!(retried > 0 && retried <= 50, "{out}");
    assert_eq!(row(&out, "dead"), "0", "{out}");
    // Every signature verifies. Each event is answered 2xx once; a 2xx the gateway
    // did not see in time (a timeout on a loaded machine) shows as a duplicate.
    let checks = row(&out, "checks");
    assert!(checks.ends_with(", 0 signature failures"), "{out}");
    let duplicates = number(checks);
    let receiver = row(&out, "receiver");
    let ok = receiver
        .split_whitespace()
        .find_map(|w| w.strip_prefix("200:"))
        .map(number)
        .unwrap_or_else(|| panic!("no 200s at the receiver:\n{out}"));
    assert_eq!(ok, 50 + duplicates, "{out}");
    assert!(
        receiver.contains("found it down"),
        "attempts met the refusing receiver:\n{out}"
    );
    assert!(row(&out, "time taken").ends_with(" s in all"), "{out}");
}
