//! A moto server of a test's own, the stand-in for Amazon SQS, SNS and Kinesis
//! in the destination tests: one process per test, so every test has its own
//! account (`123456789012`, region `us-east-1`) and the one that enforces
//! credentials touches no other. The consumer is `scripts/broker_consume.py`
//! (boto3), as for the other brokers. moto 5.2.1 and boto3 come from PyPI
//! (`tests/run.sh`).
//!
//! What moto 5.2.1 answers (its status, and the code in the body):
//!
//! | fault | SQS | SNS | Kinesis |
//! |---|---|---|---|
//! | unknown key ([`OwnMoto::start_with_auth`]) | 403 `InvalidClientTokenId` | 403 `InvalidClientTokenId` | 403 `InvalidClientTokenId` |
//! | known key, wrong secret | 403 `SignatureDoesNotMatch` | 403 `SignatureDoesNotMatch` | 403 `SignatureDoesNotMatch` |
//! | key without the right ([`OwnMoto::user`]) | 403 `AccessDenied` | 403 `AccessDenied` | 403 `AccessDenied` |
//! | no such queue, topic, stream | 400 `AWS.SimpleQueueService.NonExistentQueue` (`QueueDoesNotExist`) | 404 `NotFound` | 400 `ResourceNotFoundException` |
//! | message too large | 400 `InvalidParameterValue` | 400 `InvalidParameter` | not checked by `PutRecord` (`PutRecords`: 400 `ValidationException`) |
//!
//! The 403s come as an XML body (`text/html`) even from the JSON services (SQS,
//! Kinesis), so the Rust SDK cannot read their code there: it has the status
//! alone. moto checks an SQS body's length in characters against the queue's
//! `MaximumMessageSize` (message attributes not counted); SNS refuses a
//! message above 262144 characters.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::brokers::free_port;

/// The account and region of every moto resource.
pub const ACCOUNT: &str = "123456789012";
pub const REGION: &str = "us-east-1";

/// A moto server on a free loopback port; stopped when dropped.
pub struct OwnMoto {
    addr: SocketAddr,
    auth: bool,
    child: Child,
    /// moto's output, shown when it does not start.
    log: tempfile::NamedTempFile,
}

impl OwnMoto {
    /// A server that takes any credentials.
    pub fn start() -> Self {
        Self::launch(false)
    }

    /// A server that checks every request's signature against its IAM users
    /// (`INITIAL_NO_AUTH_ACTION_COUNT=0`): any key it did not issue is refused
    /// with a 403 `InvalidClientTokenId`, for SQS, SNS and Kinesis alike (the
    /// table above). [`OwnMoto::user`] makes keys it accepts.
    pub fn start_with_auth() -> Self {
        Self::launch(true)
    }

    /// `http://127.0.0.1:PORT`, the endpoint of every service.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A new IAM user of a server started with auth, allowed `actions`
    /// (`"sqs:SendMessage"`, `"sns:*"`, `"*"`; none is a user with no right);
    /// returns its (access key id, secret access key). Make users before the
    /// gateway talks to the server: the few requests that make one go through
    /// unsigned, whoever sends them.
    pub fn user(&self, actions: &[&str]) -> (String, String) {
        assert!(self.auth, "OwnMoto::user is for a server started with auth");
        // moto lets the next N requests through unsigned: exactly the calls
        // that make the user, after which it checks again.
        let calls = if actions.is_empty() { 2 } else { 3 };
        let answer = http(
            self.addr,
            "POST",
            "/moto-api/reset-auth",
            &calls.to_string(),
        );
        assert!(is_200(&answer), "reset-auth: {answer}");
        let name = format!("u{}", ulid::Ulid::new().to_string().to_lowercase());
        let script = r#"
import json, sys, boto3
url, name, actions = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id="testing", aws_secret_access_key="testing")
iam.create_user(UserName=name)
key = iam.create_access_key(UserName=name)["AccessKey"]
if actions:
    doc = {"Version": "2012-10-17",
           "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
    iam.put_user_policy(UserName=name, PolicyName="hookgate", PolicyDocument=json.dumps(doc))
print(json.dumps([key["AccessKeyId"], key["SecretAccessKey"]]))
"#;
        let out = Command::new("python3")
            .args(["-c", script, &self.url(), &name])
            .arg(serde_json::to_string(actions).unwrap())
            .output()
            .expect("python3 runs boto3");
        assert!(
            out.status.success(),
            "making an IAM user failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let key: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            key[0].as_str().unwrap().to_owned(),
            key[1].as_str().unwrap().to_owned(),
        )
    }

    fn launch(auth: bool) -> Self {
        // The port is free when picked, not when moto binds it: another
        // process can take it in between, and moto then exits; a few tries.
        let mut last = String::new();
        for _ in 0..3 {
            let log = tempfile::NamedTempFile::new().unwrap();
            let port = free_port();
            let mut cmd = Command::new("python3");
            cmd.args(["-m", "moto.server", "-H", "127.0.0.1", "-p"])
                .arg(port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log.reopen().unwrap());
            if auth {
                cmd.env("INITIAL_NO_AUTH_ACTION_COUNT", "0");
            }
            let child = cmd.spawn().expect("python3 runs moto");
            let mut moto = Self {
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
                auth,
                child,
                log,
            };
            // It answers after some 1.5 s of imports; 30 s is a machine under load.
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if moto.child.try_wait().unwrap().is_some() {
                    last = std::fs::read_to_string(moto.log.path()).unwrap_or_default();
                    break;
                }
                if is_200(&http(moto.addr, "GET", "/moto-api/", "")) {
                    return moto;
                }
                if Instant::now() >= deadline {
                    let log = std::fs::read_to_string(moto.log.path()).unwrap_or_default();
                    panic!("moto did not answer within 30 s: {log}");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("moto exited before answering, 3 times: {last}");
    }
}

impl Drop for OwnMoto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One plain HTTP/1.1 request (moto's own API needs no signature); the answer
/// as text, or "" when there is none within 5 s.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> String {
    let limit = Duration::from_secs(5);
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, limit) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(limit));
    let _ = stream.set_write_timeout(Some(limit));
    // text/plain: moto reads reset-auth's count from the raw body, which
    // Flask leaves empty for a form.
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// Whether an answer's status line says 200.
fn is_200(answer: &str) -> bool {
    answer.split(' ').nth(1) == Some("200")
}
