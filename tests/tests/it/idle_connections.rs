//! Tenant fairness, item 5: idle connections give their places back soon, and
//! one client address cannot take every place. Raw TCP sockets, so the test
//! controls every byte; a second address is `127.0.0.2`, which Linux routes
//! over loopback like `127.0.0.1`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::{TestGateway, test_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Far longer than the deadline below; only a connection held open reaches it.
const BOUND: Duration = Duration::from_secs(10);
const PER_PEER: usize = 8;

async fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(to).await.unwrap()
}

/// What the server sends before it closes (bounded).
async fn read_all(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(BOUND, stream.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the server kept the connection open");
    String::from_utf8_lossy(&got).into_owned()
}

async fn healthz(stream: &mut TcpStream) -> String {
    let request = b"GET /healthz HTTP/1.1\r\nhost: hookgate\r\nconnection: close\r\n\r\n";
    stream.write_all(request).await.unwrap();
    read_all(stream).await
}

#[tokio::test]
async fn idle_connections_give_their_places_back_and_one_address_cannot_take_them_all() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.limits.max_connections = 2 * PER_PEER;
    config.limits.connections_per_peer = PER_PEER;
    config.limits.header_read_timeout = 500;
    let gw = TestGateway::start_with(config, dir, RunOptions::default()).await;

    let mut idle = Vec::new();
    for _ in 0..PER_PEER {
        idle.push(connect_from("127.0.0.1", gw.addr).await);
    }
    let mut one_more = connect_from("127.0.0.1", gw.addr).await;
    let refused = read_all(&mut one_more).await;
    assert!(refused.contains("too_many_connections"), "{refused}");
    let mut other = connect_from("127.0.0.2", gw.addr).await;
    let answer = healthz(&mut other).await;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "another address is served: {answer}"
    );

    // Idle connections are closed by the head deadline, and give their places back.
    for stream in &mut idle {
        let left = read_all(stream).await;
        assert!(!left.contains("200"), "{left}");
    }
    let mut again = connect_from("127.0.0.1", gw.addr).await;
    let answer = healthz(&mut again).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
