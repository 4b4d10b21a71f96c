//! Closing a connection whose request body was left unread, without losing the
//! answer: the kernel resets a socket closed with unread bytes, and a reset can
//! reach the client before it has read the answer (it sees ECONNRESET, or EPIPE
//! while still sending). So, when an answer was sent before its body's end, the
//! connection's shutdown first ends the write side (the client reads the
//! answer, then EOF), then reads and drops what the client still sends, until
//! it closes too, for at most [`LINGER_FOR`] and [`LINGER_BYTES`].

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How long a closing connection may keep reading what its client still sends.
const LINGER_FOR: Duration = Duration::from_secs(2);
/// How much a closing connection reads and drops at most.
const LINGER_BYTES: usize = 1024 * 1024;

/// A connection's transport; its shutdown lingers once [`LingeringClose::wanted`]
/// was set, and is plain otherwise.
pub(crate) struct LingeringClose<T> {
    inner: T,
    wanted: Arc<AtomicBool>,
    linger_for: Duration,
    linger: Option<Linger>,
}

/// A lingering shutdown in progress.
struct Linger {
    deadline: Pin<Box<Sleep>>,
    write_closed: bool,
    dropped: usize,
}

impl<T> LingeringClose<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            wanted: Arc::new(AtomicBool::new(false)),
            linger_for: LINGER_FOR,
            linger: None,
        }
    }

    /// Set once an answer was sent before its request body's end.
    pub(crate) fn wanted(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.wanted)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for LingeringClose<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for LingeringClose<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.wanted.load(Ordering::Relaxed) {
            return Pin::new(&mut this.inner).poll_shutdown(cx);
        }
        let linger = this.linger.get_or_insert_with(|| Linger {
            deadline: Box::pin(tokio::time::sleep(this.linger_for)),
            write_closed: false,
            dropped: 0,
        });
        if !linger.write_closed {
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            linger.write_closed = true;
        }
        let mut scratch = [0u8; 8 * 1024];
        loop {
            if linger.dropped >= LINGER_BYTES || linger.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match ready!(Pin::new(&mut this.inner).poll_read(cx, &mut buf)) {
                // The client closed, or reset: nothing left to protect.
                Ok(()) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Err(_) => return Poll::Ready(Ok(())),
                Ok(()) => linger.dropped = linger.dropped.saturating_add(buf.filled().len()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_plain_shutdown_does_not_wait_for_the_client() {
        let (server, mut client) = tokio::io::duplex(64);
        let mut server = LingeringClose::new(server);
        server.shutdown().await.unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn a_lingering_shutdown_ends_writing_then_drops_what_the_client_sends() {
        let (server, mut client) = tokio::io::duplex(64);
        let mut server = LingeringClose::new(server);
        server.wanted().store(true, Ordering::Relaxed);
        server.write_all(b"answer").await.unwrap();
        let closing = tokio::spawn(async move { server.shutdown().await });
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).await.unwrap();
        assert_eq!(
            answer, b"answer",
            "the answer, then EOF, while the server lingers"
        );
        // More than the pipe holds: only a server still reading takes it all.
        client.write_all(&[b'x'; 1024]).await.unwrap();
        drop(client);
        closing.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_lingering_shutdown_gives_up_at_its_deadline() {
        let (server, _client_stays_open) = tokio::io::duplex(64);
        let mut server = LingeringClose::new(server);
        server.linger_for = Duration::from_millis(100);
        server.wanted().store(true, Ordering::Relaxed);
        let started = tokio::time::Instant::now();
        let closed = tokio::time::timeout(LINGER_FOR, server.shutdown()).await;
        assert!(closed.is_ok(), "the shutdown ended at its own deadline");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }
}
