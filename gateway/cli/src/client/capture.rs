//! A captured raw HTTP request, as `hookgate verify` reads it: a request line,
//! headers, a blank line, then the body (CRLF or LF line ends). The request line
//! may be left out. `content-length` trims what follows the body; a chunked body
//! is decoded.

/// The parts of a request that a signature covers.
#[derive(Debug)]
pub(super) struct Captured {
    /// Lower-cased names, values trimmed, in order.
    headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Captured {
    /// The first value of a header, by lower-case name.
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why the input is not a usable raw request.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum CaptureError {
    #[error(
        "no blank line ends the headers: give the raw request (request line, headers, a blank line, then the body)"
    )]
    NoHeaderEnd,
    #[error("content-length {0:?} is not a number")]
    BadLength(String),
    #[error("the body has {got} bytes but content-length says {want}: the capture is cut off")]
    Truncated { got: usize, want: usize },
    #[error("the chunked body is malformed")]
    BadChunks,
}

/// Parses a captured request.
///
/// # Errors
/// [`CaptureError`] when there is no header block, or the body does not match its
/// framing.
pub(super) fn parse(raw: &[u8]) -> Result<Captured, CaptureError> {
    let start = raw
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(raw.len());
    let raw = &raw[start..];
    let (head_len, sep_len) = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| find(raw, sep).map(|at| (at, sep.len())))
        .min()
        .ok_or(CaptureError::NoHeaderEnd)?;
    let head = String::from_utf8_lossy(&raw[..head_len]);
    let rest = &raw[head_len + sep_len..];
    let mut headers = Vec::new();
    for (i, line) in head.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if i == 0 && is_request_line(line) {
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut captured = Captured {
        headers,
        body: Vec::new(),
    };
    let chunked = captured
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    captured.body = if chunked {
        dechunk(rest)?
    } else if let Some(len) = captured.header("content-length") {
        let want: usize = len
            .parse()
            .map_err(|_| CaptureError::BadLength(len.to_owned()))?;
        if rest.len() < want {
            return Err(CaptureError::Truncated {
                got: rest.len(),
                want,
            });
        }
        rest[..want].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(captured)
}

/// `POST /hook HTTP/1.1`.
fn is_request_line(line: &str) -> bool {
    let parts: Vec<&str> = line.split_whitespace().collect();
    parts.len() == 3 && parts[2].starts_with("HTTP/")
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Decodes a chunked body (extensions and trailers ignored).
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, CaptureError> {
    let mut body = Vec::new();
    loop {
        let eol = find(rest, b"\n").ok_or(CaptureError::BadChunks)?;
        let line = String::from_utf8_lossy(&rest[..eol]);
        let size_text = line.trim_end_matches('\r');
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| CaptureError::BadChunks)?;
        rest = &rest[eol + 1..];
        if size == 0 {
            return Ok(body);
        }
        let chunk = rest.get(..size).ok_or(CaptureError::BadChunks)?;
        body.extend_from_slice(chunk);
        rest = &rest[size..];
        rest = rest
            .strip_prefix(b"\r\n")
            .or_else(|| rest.strip_prefix(b"\n"))
            .ok_or(CaptureError::BadChunks)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_request_line_headers_and_body() {
        let raw = b"POST /hook HTTP/1.1\r\nHost: x\r\nWebhook-Id: evt_1\r\ncontent-length: 7\r\n\r\n{\"a\":1}\n";
        let c = parse(raw).unwrap();
        assert_eq!(c.header("webhook-id"), Some("evt_1"));
        assert_eq!(c.header("host"), Some("x"));
        assert_eq!(c.body, b"{\"a\":1}");
    }

    #[test]
    fn accepts_lf_only_and_no_request_line() {
        let c = parse(b"\nwebhook-id: evt_2\n\n{\"b\":2}").unwrap();
        assert_eq!(c.header("webhook-id"), Some("evt_2"));
        assert_eq!(c.body, b"{\"b\":2}");
    }

    #[test]
    fn decodes_chunked_bodies() {
        let raw = b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{\"a\r\n4;x=y\r\n\":1}\r\n0\r\n\r\n";
        assert_eq!(parse(raw).unwrap().body, b"{\"a\":1}");
    }

    #[test]
    fn refuses_what_is_not_a_request() {
        assert_eq!(
            parse(b"just some text").unwrap_err(),
            CaptureError::NoHeaderEnd
        );
        assert_eq!(
            parse(b"content-length: 10\n\nabc").unwrap_err(),
            CaptureError::Truncated { got: 3, want: 10 }
        );
        assert!(matches!(
            parse(b"content-length: x\n\nabc").unwrap_err(),
            CaptureError::BadLength(_)
        ));
        assert_eq!(
            parse(b"transfer-encoding: chunked\n\nzz\r\n").unwrap_err(),
            CaptureError::BadChunks
        );
    }
}
