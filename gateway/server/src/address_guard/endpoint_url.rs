//! What an endpoint URL may be before any address is looked at (scheme, length,
//! credentials, host), its normalized form, and the errors the guard answers with.

use std::io;
use std::net::IpAddr;

use url::Url;

/// Why an endpoint URL was refused; the API maps these to 422 responses.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// The input is not a URL; the message says why.
    #[error("invalid URL: {0}")]
    Invalid(String),
    /// Only `http` and `https` are delivered to.
    #[error("unsupported URL scheme {0:?}: only http and https are allowed")]
    Scheme(String),
    /// The input is longer than the configured limit.
    #[error("URL is longer than {max} bytes")]
    TooLong {
        /// The limit, in bytes.
        max: usize,
    },
    /// `user:pass@` would leak into logs and requests, so it is refused.
    #[error("URL must not contain credentials")]
    HasCredentials,
    /// There is nothing to connect to.
    #[error("URL has no host")]
    NoHost,
    /// The host is, or resolves to, an address hookgate may not reach.
    #[error("URL host is or resolves to the blocked address {addr}")]
    Blocked {
        /// The first address that was refused.
        addr: IpAddr,
    },
    /// `outbound.allow_only` is set and the host matches none of its entries.
    #[error("URL host {host} is not in the egress allow-list (outbound.allow_only)")]
    NotAllowListed {
        /// The host as the URL gives it.
        host: String,
    },
}

/// Why the connector refused to open a connection.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectGuardError {
    /// The host is, or resolves to, an address hookgate may not reach; the
    /// delivery becomes dead (`blocked_address`) rather than retried.
    #[error("connection to blocked address {addr} refused")]
    Blocked {
        /// The first address that was refused.
        addr: IpAddr,
    },
    /// `outbound.allow_only` is set and the host matches none of its entries;
    /// the delivery is ended as for a blocked address, before any lookup.
    #[error("host {host} is not in the egress allow-list (outbound.allow_only)")]
    NotAllowListed {
        /// The host as the URL gives it.
        host: String,
    },
    /// The host could not be resolved (a retryable DNS failure).
    #[error("could not resolve host: {0}")]
    Resolve(#[source] io::Error),
}

/// Parses and normalizes an endpoint URL so the stored form is the one that
/// gets checked and connected to.
///
/// The `url` crate turns `127.1` and `0x7f.1` into `127.0.0.1`, lower-cases
/// the host and drops the scheme's default port. The fragment is removed.
/// `max_len` (in bytes) applies to the input.
///
/// # Errors
///
/// [`UrlError::TooLong`], [`UrlError::Invalid`], [`UrlError::Scheme`] (not
/// http or https), [`UrlError::HasCredentials`] or [`UrlError::NoHost`].
/// Addresses are not checked here; see [`super::AddressGuard::check_at_creation`].
pub fn normalize_endpoint_url(input: &str, max_len: usize) -> Result<Url, UrlError> {
    if input.len() > max_len {
        return Err(UrlError::TooLong { max: max_len });
    }
    let mut url = Url::parse(input).map_err(|e| UrlError::Invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::HasCredentials);
    }
    if url.host().is_none() {
        return Err(UrlError::NoHost);
    }
    url.set_fragment(None);
    Ok(url)
}

/// Whether `s` is an origin as CSP's `frame-ancestors` takes one: `http(s)://`
/// and a host (with a port), nothing after it, nothing that could end the
/// header's directive.
pub(crate) fn is_origin(s: &str) -> bool {
    let Some(rest) = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
    else {
        return false;
    };
    !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'*'))
}
