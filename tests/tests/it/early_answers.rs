//! Issue 37, item 4: an answer sent before the request body was read to its
//! end says `Connection: close`, and the connection then ends cleanly, so a
//! keep-alive client sees the answer and a closed connection instead of a
//! broken pipe on its next request. Raw TCP, so the test controls every byte:
//! the head and the first half of the body are sent, the rest never is.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::tcp_proxy::TcpProxy;
use hookgate_tests::{Backend, TestGateway};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::store_outage::wait_health;

const BOUND: Duration = Duration::from_secs(10);
const EVENT: &str = r#"{"event_type":"early.answer","payload":{"n":1}}"#;
/// Half of it is more than the gateway reads ahead, so the rest waits unread
/// in the socket when the answer goes: closed then, the socket would reset.
const LARGE_PAYLOAD: usize = 256 * 1024;

/// An event of about `LARGE_PAYLOAD` bytes.
fn large_event() -> String {
    let padding = "x".repeat(LARGE_PAYLOAD);
    format!(r#"{{"event_type":"early.answer","payload":{{"padding":"{padding}"}}}}"#)
}

/// Sends the rest of a split body, as a client still uploading does, and
/// checks the gateway took it and then closed the connection without a reset.
async fn finish_upload_and_see_the_close(stream: &mut TcpStream, body: &str) {
    let rest = &body.as_bytes()[body.len() / 2..];
    let sent = tokio::time::timeout(BOUND, stream.write_all(rest)).await;
    let sent = sent.expect("the rest of the body is taken in time");
    assert!(sent.is_ok(), "the rest of the body failed with {sent:?}");
    assert_closed_cleanly(stream).await;
}

/// One answer read off a raw connection.
struct RawAnswer {
    status: u16,
    head: String,
    body: String,
}

impl RawAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// A POST of `body` to the tenant's events, with only `sent` bytes of it written.
async fn send_split(stream: &mut TcpStream, key: &str, body: &str, sent: usize) {
    let head = format!(
        "POST /v1/tenants/acme/events HTTP/1.1\r\nhost: hookgate\r\n\
         authorization: Bearer {key}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body.as_bytes()[..sent]).await.unwrap();
    stream.flush().await.unwrap();
}

/// Reads one answer (head, then a body of its `content-length`), bounded.
async fn read_answer(stream: &mut TcpStream) -> RawAnswer {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).into_owned();
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")?
                            .trim()
                            .parse()
                            .ok()
                    })
                    .expect("the answer has a content-length");
                if got.len() >= end + 4 + length {
                    let body =
                        String::from_utf8_lossy(&got[end + 4..end + 4 + length]).into_owned();
                    let status = head[9..12].parse().unwrap();
                    return RawAnswer { status, head, body };
                }
            }
            let n = stream
                .read(&mut chunk)
                .await
                .expect("the answer is read whole");
            assert!(
                n > 0,
                "the connection ended mid-answer: {:?}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(BOUND, read)
        .await
        .expect("an answer in time")
}

/// The connection ends with a clean EOF: no more bytes, and no reset.
async fn assert_closed_cleanly(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    let read = tokio::time::timeout(BOUND, stream.read_to_end(&mut rest)).await;
    let read = read.expect("the server closes the connection after the answer");
    assert!(
        read.is_ok(),
        "the connection ended with {read:?}, not a clean close"
    );
    assert!(
        rest.is_empty(),
        "bytes after the answer: {:?}",
        String::from_utf8_lossy(&rest)
    );
}

/// Item 4: the database is cut; the client's head and half its body are in,
/// and the gateway answers 503 at once, before reading the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_client_sending_a_split_request_during_an_outage_gets_a_503_and_a_closed_connection()
 {
    let mut bed = Backend::Postgres.bed().await;
    let url = bed.config.store.url.clone().unwrap();
    let (proxy, proxied) = TcpProxy::for_database(&url).await;
    bed.config.store.url = Some(proxied);
    let gw = Arc::new(TestGateway::start_bed(bed, RunOptions::default()).await);
    let key = gw.tenant("acme").await;
    proxy.cut();
    let unhealthy = wait_health(&gw, 503, BOUND).await;
    assert_eq!(unhealthy.0, 503, "{}", unhealthy.1);

    let mut stream = TcpStream::connect(gw.addr).await.unwrap();
    let event = large_event();
    send_split(&mut stream, &key, &event, event.len() / 2).await;
    let answer = read_answer(&mut stream).await;
    assert_eq!(answer.status, 503, "{}\n{}", answer.head, answer.body);
    assert!(answer.body.contains("store_unavailable"), "{}", answer.body);
    assert!(
        answer.closes(),
        "the 503 says connection: close:\n{}",
        answer.head
    );
    finish_upload_and_see_the_close(&mut stream, &event).await;
    proxy.restore();
}

/// Item 4, the same for a 401: a request on a kept-alive connection is served
/// and the connection stays open; the next, with a wrong key and half a body,
/// gets its 401 with `connection: close`, and the connection ends cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_client_sending_a_split_request_with_a_wrong_key_gets_a_401_and_a_closed_connection()
 {
    let gw = TestGateway::start_on(Backend::Sled).await;
    let key = gw.tenant("acme").await;
    let mut stream = TcpStream::connect(gw.addr).await.unwrap();
    send_split(&mut stream, &key, EVENT, EVENT.len()).await;
    let served = read_answer(&mut stream).await;
    assert_eq!(served.status, 202, "{}\n{}", served.head, served.body);
    assert!(
        !served.closes(),
        "a whole request keeps the connection:\n{}",
        served.head
    );

    let wrong = format!("{}x", &key[..key.len() - 1]);
    let event = large_event();
    send_split(&mut stream, &wrong, &event, event.len() / 2).await;
    let answer = read_answer(&mut stream).await;
    assert_eq!(answer.status, 401, "{}\n{}", answer.head, answer.body);
    assert!(
        answer.closes(),
        "the 401 says connection: close:\n{}",
        answer.head
    );
    finish_upload_and_see_the_close(&mut stream, &event).await;
}
