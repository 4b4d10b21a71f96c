//! Running `hookgate` subcommands as a user would: a command line split into words,
//! a bounded run with piped stdin, stdout and stderr, and a client for one gateway.

use std::process::{Command, Stdio};
use std::time::Duration;

/// Every CLI run, and every wait of the client tests, ends within this.
pub const CLI_LIMIT: Duration = Duration::from_secs(60);

/// One finished `hookgate` run.
pub struct CliRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CliRun {
    /// Stdout parsed as JSON (`--json` output).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }

    /// The first stdout line starting with `prefix`.
    pub fn line(&self, prefix: &str) -> &str {
        let found = self.stdout.lines().find(|l| l.starts_with(prefix));
        found.unwrap_or_else(|| panic!("no line starts with {prefix:?} in\n{}", self.stdout))
    }
}

/// Splits a command line into words; `'...'` keeps spaces inside one word.
pub fn cli_words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, started) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// Runs `hookgate args...` with no inherited `HOOKGATE_*` client variables, feeding
/// `stdin`; bounded by [`CLI_LIMIT`].
pub fn run_cli(env: &[(&str, &str)], args: &[String], stdin: &[u8]) -> CliRun {
    use std::io::{Read, Write};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in ["URL", "TOKEN", "TENANT", "WEBHOOK_SECRET"] {
        cmd.env_remove(format!("HOOKGATE_{var}"));
    }
    let mut child = cmd
        .envs(env.iter().copied())
        .spawn()
        .expect("spawn hookgate");
    let (mut input, stdin) = (child.stdin.take().unwrap(), stdin.to_vec());
    let writer = std::thread::spawn(move || drop(input.write_all(&stdin)));
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + CLI_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("hookgate {args:?} did not finish within {CLI_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    writer.join().unwrap();
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let code = status.code().unwrap_or(-1);
    CliRun {
        code,
        stdout,
        stderr,
    }
}

/// The CLI pointed at one gateway with one token (`HOOKGATE_URL`, `HOOKGATE_TOKEN`).
pub struct CliClient {
    pub base: String,
    pub token: String,
}

impl CliClient {
    pub fn new(base: &str, token: &str) -> Self {
        let (base, token) = (base.to_owned(), token.to_owned());
        Self { base, token }
    }

    /// Runs a command line (split by [`cli_words`]).
    pub fn run(&self, line: &str) -> CliRun {
        let env = [
            ("HOOKGATE_URL", &*self.base),
            ("HOOKGATE_TOKEN", &*self.token),
        ];
        run_cli(&env, &cli_words(line), b"")
    }

    /// Runs `line`, asserting success.
    pub fn ok(&self, line: &str) -> CliRun {
        let run = self.run(line);
        assert_eq!(run.code, 0, "{line}\n{}\n{}", run.stdout, run.stderr);
        run
    }

    /// Runs `line`, asserting the exit code and an error holding `phrase`: one line,
    /// unless it is clap's usage error.
    pub fn fails(&self, line: &str, code: i32, phrase: &str) -> CliRun {
        let run = self.run(line);
        assert_eq!(run.code, code, "{line}\n{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(phrase),
            "{line}: {:?} lacks {phrase:?}",
            run.stderr
        );
        let clap_usage = run.stderr.contains("For more information, try '--help'");
        assert!(
            clap_usage || run.stderr.trim_end().lines().count() == 1,
            "{}",
            run.stderr
        );
        run
    }

    /// Creates tenant `id`; returns a client acting with its API key.
    pub fn create_tenant(&self, id: &str) -> CliClient {
        let reply = self.ok(&format!("tenants create {id} --json")).json();
        CliClient::new(&self.base, reply["api_key"].as_str().unwrap())
    }

    /// Creates an endpoint of tenant `acme`; returns its id.
    pub fn create_endpoint(&self, url: &str, flags: &str) -> String {
        let line = format!("endpoints create --tenant acme --endpoint-url {url} --json {flags}");
        self.ok(&line).json()["id"].as_str().unwrap().to_owned()
    }
}

/// Polls `probe` until it gives a value, for at most [`CLI_LIMIT`].
pub fn wait_until<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + CLI_LIMIT;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
