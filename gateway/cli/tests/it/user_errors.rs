//! Issue 17, item 12: a user's mistake (bad config, bad usage, a data dir that is
//! unusable or already in use, a port in use) prints one clear line and exits 2,
//! even with `RUST_BACKTRACE=1`; and logs written to a pipe carry no colour codes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ADMIN, Gateway};

/// A hang guard only: every case here ends in well under a second.
const LIMIT: Duration = Duration::from_secs(60);

/// `hookgate serve` over `data_dir` with the usual test settings, as a developer
/// shell might run it (`RUST_BACKTRACE=1`), and `env` on top.
fn serve(data_dir: &std::path::Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
    cmd.arg("serve")
        .env("HOOKGATE_LISTEN", "127.0.0.1:0")
        .env("HOOKGATE_STORE__DATA_DIR", data_dir)
        .env("HOOKGATE_ADMIN_TOKEN", ADMIN)
        .env("HOOKGATE_STORE__MIN_FREE_DISK", "0")
        .env("HOOKGATE_LOG", "info")
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `cmd` to its exit (bounded).
fn run_to_exit(mut cmd: Command) -> Output {
    let mut child = cmd.spawn().expect("spawn hookgate");
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("hookgate did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Asserts exit code 2 and exactly one line on stderr, free of any backtrace;
/// returns that line.
fn one_line_exit_2(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code; stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "exactly one line: {stderr}");
    let lower = stderr.to_lowercase();
    assert!(
        !lower.contains("backtrace") && !lower.contains("caused by"),
        "no backtrace or cause chain: {stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "no colour codes: {stderr:?}");
    lines[0].to_owned()
}

#[test]
fn config_errors_print_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_to_exit(serve(dir.path(), &[("HOOKGATE_ADMIN_TOKEN", "short")]));
    let line = one_line_exit_2(&out);
    assert!(line.contains("admin_token"), "names the key: {line}");
    assert!(!line.contains("short"), "never echoes the token: {line}");

    let file = dir.path().join("hookgate.toml");
    std::fs::write(&file, "log = 'info'\n[limits\n").unwrap();
    let mut cmd = serve(dir.path(), &[]);
    cmd.arg("--config").arg(&file);
    let line = one_line_exit_2(&run_to_exit(cmd));
    assert!(
        line.contains("hookgate.toml") && line.contains("line 2"),
        "{line}"
    );

    // Usage errors are clap's (which already exits 2): no backtrace either.
    let mut cmd = serve(dir.path(), &[]);
    cmd.arg("--no-such-flag");
    let out = run_to_exit(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.to_lowercase().contains("backtrace"), "{stderr}");
}

#[test]
fn a_data_dir_in_use_says_so_once_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let first = Gateway::spawn(dir.path(), &[]);
    let out = run_to_exit(serve(dir.path(), &[("HOOKGATE_LOG_FORMAT", "json")]));
    let line = one_line_exit_2(&out);
    let said = "is in use by another hookgate process";
    assert!(line.contains(said), "{line}");
    assert!(
        line.contains(&dir.path().display().to_string()),
        "names the data dir: {line}"
    );
    assert!(
        !line.contains("WouldBlock") && !line.contains("Os {"),
        "{line}"
    );
    // `admin reset-token` on a running gateway's data dir says the same.
    let out = run_to_exit({
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
        cmd.args(["admin", "reset-token", "--data-dir"])
            .arg(dir.path())
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    });
    assert!(one_line_exit_2(&out).contains(said));
    drop(first);
}

#[test]
fn an_unusable_data_dir_prints_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the data dir should be.
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let line = one_line_exit_2(&run_to_exit(serve(&file, &[])));
    assert!(line.contains("not-a-dir"), "names the data dir: {line}");
}

#[test]
fn a_port_in_use_prints_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run_to_exit(serve(dir.path(), &[("HOOKGATE_LISTEN", &addr)]));
    let line = one_line_exit_2(&out);
    assert!(line.contains(&addr) && line.contains("in use"), "{line}");
    drop(taken);
}

#[test]
fn piped_logs_have_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(dir.path(), &[("HOOKGATE_LOG_FORMAT", "text")])
        .spawn()
        .expect("spawn hookgate");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut lines = BufReader::new(stderr);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            seen.extend_from_slice(&line);
            if String::from_utf8_lossy(&line).contains("hookgate listening") {
                let _ = tx.send(());
            }
            line.clear();
        }
        seen
    });
    let listening = rx.recv_timeout(LIMIT);
    let _ = child.kill();
    let _ = child.wait();
    let seen = reader.join().unwrap();
    let text = String::from_utf8_lossy(&seen);
    assert!(listening.is_ok(), "the gateway started: {text}");
    assert!(
        !seen.contains(&0x1b),
        "no ESC bytes in piped logs: {text:?}"
    );
}

/// Item 4 of tenant fairness: the database password is never printed. Each form
/// the parser takes names a database that does not exist (the local server
/// trusts, so the password is never checked): `migrate` fails and says where,
/// `serve` fails in its one line, and its logs before that carry no password.
#[test]
fn the_database_password_is_never_printed() {
    let server = std::env::var("HOOKGATE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let server: tokio_postgres::Config = server.parse().unwrap();
    let host = match &server.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(h) => h.clone(),
        tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
    };
    let port = server.get_ports().first().copied().unwrap_or(5432);
    let user = server.get_user().unwrap_or("postgres").to_owned();
    let db = "hookgate_no_such_database";
    let forms = [
        format!("postgres://{user}:Pw1Secret@{host}:{port}/{db}"),
        format!("postgres://{user}@{host}:{port}/{db}?password=Pw1Secret"),
        format!("postgresql://{user}@{host}:{port}/{db}?sslmode=disable&password=Pw1%20Secret"),
        format!("host={host} port={port} user={user} dbname={db} password=Pw1Secret"),
        format!("host={host} port={port} user={user} dbname={db} password='Pw1 Secret'"),
        format!("host={host} port={port} user={user} dbname={db} password = 'Pw1\\' Secret'"),
    ];
    for url in &forms {
        let migrate = run_to_exit({
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
            cmd.args(["migrate", "--store-url", url])
                .env_remove("HOOKGATE_STORE__URL")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd
        });
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&migrate.stdout),
            String::from_utf8_lossy(&migrate.stderr)
        );
        assert_ne!(migrate.status.code(), Some(0), "{url}: {shown}");
        assert!(
            shown.contains("redacted") && !shown.contains("Pw1"),
            "{url}: {shown}"
        );

        let dir = tempfile::tempdir().unwrap();
        let env = [
            ("HOOKGATE_STORE__BACKEND", "postgres"),
            ("HOOKGATE_STORE__URL", url.as_str()),
            ("HOOKGATE_LOG", "debug"),
        ];
        // Debug logs on, so whatever the start logs is read too (on stderr).
        let out = run_to_exit(serve(dir.path(), &env));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{url}: {said}");
        let error = said
            .lines()
            .rfind(|l| l.starts_with("hookgate:"))
            .unwrap_or_default();
        assert!(error.contains("redacted"), "{url}: {said}");
        assert!(!said.contains("Pw1"), "{url}: {said}");
    }
}
