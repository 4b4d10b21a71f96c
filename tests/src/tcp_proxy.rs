//! A TCP proxy a test puts between a gateway and its database, to cut the
//! connection and restore it without touching the shared server: while cut,
//! every open connection is closed and new ones are closed as soon as they are
//! accepted, as when the database's host goes away.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A running proxy; stops when dropped.
pub struct TcpProxy {
    pub addr: SocketAddr,
    /// Cancelled to cut; replaced by a fresh token to restore.
    link: Arc<Mutex<Option<CancellationToken>>>,
    stop: CancellationToken,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let link = Arc::new(Mutex::new(Some(CancellationToken::new())));
        let stop = CancellationToken::new();
        let (links, stopped) = (Arc::clone(&link), stop.clone());
        tokio::spawn(async move {
            loop {
                let (client, _) = tokio::select! {
                    () = stopped.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok(a) => a,
                        Err(_) => continue,
                    },
                };
                let Some(live) = links.lock().unwrap().clone() else {
                    drop(client); // cut: closed at once
                    continue;
                };
                tokio::spawn(forward(client, upstream, live));
            }
        });
        Self { addr, link, stop }
    }

    /// Closes every connection and refuses new ones until [`TcpProxy::restore`].
    /// A proxy in front of the database at `url`; returns it with the URL that
    /// goes through it.
    pub async fn for_database(url: &str) -> (Self, String) {
        let start = url
            .find('@')
            .map_or_else(|| url.find("://").unwrap() + 3, |at| at + 1);
        let end = start + url[start..].find('/').unwrap();
        let upstream = tokio::net::lookup_host(&url[start..end])
            .await
            .unwrap()
            .next()
            .unwrap();
        let proxy = Self::start(upstream).await;
        let proxied = format!("{}{}{}", &url[..start], proxy.addr, &url[end..]);
        (proxy, proxied)
    }

    pub fn cut(&self) {
        if let Some(live) = self.link.lock().unwrap().take() {
            live.cancel();
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        let mut link = self.link.lock().unwrap();
        if link.is_none() {
            *link = Some(CancellationToken::new());
        }
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut();
        self.stop.cancel();
    }
}

/// Copies both ways until either side closes or the link is cut.
async fn forward(mut client: TcpStream, upstream: SocketAddr, live: CancellationToken) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    tokio::select! {
        () = live.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
    }
}
