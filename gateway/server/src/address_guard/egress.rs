//! The egress allow-list (`outbound.allow_only`): which endpoint hosts may be
//! reached at all, judged from the URL's host alone, never from DNS.
//!
//! A host name matches only host patterns (`api.example.com`, or
//! `*.example.com` for one or more labels below `example.com`), compared
//! without regard to case. An IP-literal host matches only CIDRs, judged as
//! the SSRF guard judges it (IPv4-mapped IPv6 as the IPv4 address). Because
//! no name is resolved, a name cannot reach an address by way of a CIDR, and
//! DNS cannot widen or narrow the list.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use url::Host;

use super::canonical_net;

/// One entry of `outbound.allow_only`, checked when the config is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub enum EgressRule {
    /// IP-literal hosts inside this net.
    Cidr(IpNet),
    /// Exactly this host name (lower-case, IDNA ASCII form).
    Host(String),
    /// Any name one or more labels below this suffix (from `*.suffix`).
    Subdomains(String),
}

impl FromStr for EgressRule {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.contains('/') {
            return text
                .parse::<IpNet>()
                .map(EgressRule::Cidr)
                .map_err(|e| format!("{text:?} is not a valid CIDR: {e}"));
        }
        let (wildcard, name) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let name = host_name(text, name)?;
        Ok(if wildcard {
            EgressRule::Subdomains(name)
        } else {
            EgressRule::Host(name)
        })
    }
}

/// Checks the name part of a pattern and returns it in the form URLs are
/// stored in (lower-case, IDNA ASCII), so matching compares like with like.
fn host_name(pattern: &str, name: &str) -> Result<String, String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.contains('*') || name.is_empty() {
        return Err(format!(
            "{pattern:?} is not a host pattern: `*.` may only open one \
             (\"*.example.com\"), and a name must follow it"
        ));
    }
    if let Ok(ip) = name.parse::<IpAddr>() {
        let bits = if ip.is_ipv4() { 32 } else { 128 };
        return Err(format!(
            "{pattern:?} is an IP address: write it as a CIDR (\"{ip}/{bits}\")"
        ));
    }
    let domain = match Host::parse(name) {
        Ok(Host::Domain(domain)) => domain,
        Ok(_) => return Err(format!("{pattern:?} is an IP address: write it as a CIDR")),
        Err(e) => return Err(format!("{pattern:?} is not a valid host name: {e}")),
    };
    let label_ok = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !domain.split('.').all(label_ok) {
        return Err(format!(
            "{pattern:?} is not a valid host name: labels are letters, digits, \
             '-' and '_', separated by single dots"
        ));
    }
    Ok(domain)
}

impl TryFrom<String> for EgressRule {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl fmt::Display for EgressRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EgressRule::Cidr(net) => write!(f, "{net}"),
            EgressRule::Host(name) => f.write_str(name),
            EgressRule::Subdomains(suffix) => write!(f, "*.{suffix}"),
        }
    }
}

impl From<EgressRule> for String {
    fn from(rule: EgressRule) -> String {
        rule.to_string()
    }
}

/// The allow-list as the guard consults it: nets canonicalized once, names
/// kept apart from nets since a host is only ever compared with its own kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct EgressAllowList {
    nets: Vec<IpNet>,
    names: Vec<EgressRule>,
}

impl EgressAllowList {
    /// The list holding `rules`.
    pub(crate) fn new(rules: &[EgressRule]) -> Self {
        let mut list = Self::default();
        for rule in rules {
            match rule {
                EgressRule::Cidr(net) => list.nets.push(canonical_net(*net)),
                named => list.names.push(named.clone()),
            }
        }
        list
    }

    /// True if the IP-literal host `addr` lies inside a listed CIDR.
    pub(crate) fn permits_ip(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.nets.iter().any(|net| net.contains(&addr))
    }

    /// True if the host name `host` matches a listed pattern (case-insensitive;
    /// one trailing dot, the DNS root, is ignored).
    pub(crate) fn permits_name(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        self.names.iter().any(|rule| match rule {
            EgressRule::Host(name) => host == *name,
            EgressRule::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .and_then(|below| below.strip_suffix('.'))
                .is_some_and(|below| !below.is_empty() && !below.ends_with('.')),
            EgressRule::Cidr(_) => false,
        })
    }
}

#[cfg(test)]
mod tests;
