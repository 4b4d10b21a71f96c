//! HTTP/1.1 on a raw socket: reading one request whole (`content-length` bodies,
//! keep-alive), and writing one answer, fast, slow or big.

use std::time::{Duration, Instant, SystemTime};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// How much a request may hold, and how long reading it may take.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// The largest request head.
    pub max_head: usize,
    /// The largest request body.
    pub max_body: usize,
    /// How long a connection may idle before its next request begins.
    pub idle: Duration,
    /// How long each read may take once a request has begun.
    pub read: Duration,
}

/// One request, read whole.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// The request line and headers, then the body, exactly as they came.
    pub raw: Vec<u8>,
    /// Header names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The client asked to close the connection after this request.
    pub close: bool,
    /// The client's address, when the socket could tell (it tells which process
    /// sent the request: the crash drills map it to the gateway they kill).
    pub peer: Option<std::net::SocketAddr>,
}

impl RawRequest {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// How long a request may take to arrive from its first byte to its last.
const WHOLE_REQUEST: Duration = Duration::from_secs(60);

/// Why a connection stops without a request.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed, the read failed, or the connection idled out.
    Gone,
    /// The request cannot be served; answer this status and close.
    Bad(u16),
}

/// Reads one request from `stream`; `buf` carries bytes already read past the
/// previous request.
pub(super) async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    limits: ReadLimits,
) -> Result<RawRequest, ReadError> {
    // The wait for a first byte is the idle limit; from then on the whole request
    // must arrive within WHOLE_REQUEST, so a trickling peer cannot hold on.
    let mut deadline = None;
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buf.len() > limits.max_head {
            return Err(ReadError::Bad(431));
        }
        let wait = deadline.map_or(limits.idle, |d: Instant| {
            limits.read.min(d.saturating_duration_since(Instant::now()))
        });
        fill(stream, buf, wait).await?;
        deadline.get_or_insert_with(|| Instant::now() + WHOLE_REQUEST);
    };
    let deadline = deadline.unwrap_or_else(|| Instant::now() + WHOLE_REQUEST);
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let version_ok = request_line
        .split(' ')
        .nth(2)
        .is_some_and(|v| v.starts_with("HTTP/1."));
    if !version_ok {
        return Err(ReadError::Bad(400));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Bad(400));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = RawRequest {
        raw: Vec::new(),
        headers,
        body: Vec::new(),
        close: request_line.ends_with("HTTP/1.0"),
        peer: None,
    };
    if let Some(conn) = request.header("connection") {
        request.close = conn.eq_ignore_ascii_case("close");
    }
    if request.header("transfer-encoding").is_some() {
        return Err(ReadError::Bad(411));
    }
    let len = match request.header("content-length") {
        None => 0,
        Some(v) => v.parse::<usize>().map_err(|_| ReadError::Bad(400))?,
    };
    if len > limits.max_body {
        return Err(ReadError::Bad(413));
    }
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        fill(
            stream,
            buf,
            limits
                .read
                .min(deadline.saturating_duration_since(Instant::now())),
        )
        .await?;
    }
    request.body = buf[body_start..body_start + len].to_vec();
    request.raw = buf.drain(..body_start + len).collect();
    Ok(request)
}

/// Reads what is there (waiting at most `wait`) onto `buf`.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, wait: Duration) -> Result<(), ReadError> {
    let mut chunk = [0u8; 16 * 1024];
    match tokio::time::timeout(wait, stream.read(&mut chunk)).await {
        Ok(Ok(n)) if n > 0 => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(())
        }
        _ => Err(ReadError::Gone),
    }
}

/// The body of an answer.
#[derive(Debug, Clone)]
pub enum ReplyBody {
    /// These bytes.
    Text(String),
    /// `chunks` chunks of 100 bytes, one every `every`.
    Slow { chunks: u32, every: Duration },
    /// This many bytes, as fast as the peer reads them.
    Big(usize),
}

/// One answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Seconds for a `Retry-After` header.
    pub retry_after_s: Option<u64>,
    /// Says `connection: close` (and the connection is closed after it).
    pub close: bool,
    pub body: ReplyBody,
}

impl Response {
    /// `status` with a short text body.
    pub fn text(status: u16, body: &str) -> Self {
        Self {
            status,
            retry_after_s: None,
            close: false,
            body: ReplyBody::Text(body.to_owned()),
        }
    }
}

/// Writes `response` whole.
pub(super) async fn write_response(
    stream: &mut TcpStream,
    response: &Response,
) -> std::io::Result<()> {
    let status = response.status;
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    let len = match &response.body {
        ReplyBody::Text(text) => text.len(),
        ReplyBody::Slow { chunks, .. } => 100 * *chunks as usize,
        ReplyBody::Big(n) => *n,
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ndate: {}\r\ncontent-type: text/plain\r\ncontent-length: {len}\r\n",
        httpdate::fmt_http_date(SystemTime::now()),
    );
    if let Some(s) = response.retry_after_s {
        head.push_str(&format!("retry-after: {s}\r\n"));
    }
    if response.close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    match &response.body {
        ReplyBody::Text(text) => stream.write_all(text.as_bytes()).await?,
        ReplyBody::Slow { chunks, every } => {
            for _ in 0..*chunks {
                tokio::time::sleep(*every).await;
                stream.write_all(&[b's'; 100]).await?;
            }
        }
        ReplyBody::Big(n) => {
            let block = vec![b'x'; 64 * 1024];
            let mut left = *n;
            while left > 0 {
                let k = left.min(block.len());
                stream.write_all(&block[..k]).await?;
                left -= k;
            }
        }
    }
    stream.flush().await
}
