//! Parsing of allow-list entries and the matching of hosts against them.

use std::net::SocketAddr;
use std::sync::Arc;

use url::Url;

use super::*;
use crate::address_guard::{AddressGuard, ConnectGuardError, LookupFuture, Resolver, UrlError};

fn list(entries: &[&str]) -> EgressAllowList {
    let rules: Vec<EgressRule> = entries
        .iter()
        .map(|e| e.parse().expect("test entry"))
        .collect();
    EgressAllowList::new(&rules)
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

#[test]
fn exact_host_matches_only_itself_in_any_case() {
    let l = list(&["api.example.com"]);
    assert!(l.permits_name("api.example.com"));
    assert!(l.permits_name("API.Example.COM"));
    assert!(
        l.permits_name("api.example.com."),
        "the root dot is ignored"
    );
    for other in [
        "example.com",
        "x.api.example.com",
        "api.example.co",
        "apiexample.com",
    ] {
        assert!(!l.permits_name(other), "{other}");
    }
}

#[test]
fn wildcard_matches_one_or_more_labels_below_the_suffix() {
    let l = list(&["*.example.com"]);
    for inside in ["a.example.com", "a.b.example.com", "HOOKS.Example.Com"] {
        assert!(l.permits_name(inside), "{inside}");
    }
    for outside in [
        "example.com",
        "badexample.com",
        "a.badexample.com",
        ".example.com",
        "a..example.com",
        "example.com.evil.net",
    ] {
        assert!(!l.permits_name(outside), "{outside}");
    }
}

#[test]
fn names_never_match_cidrs_and_addresses_never_match_names() {
    let l = list(&["0.0.0.0/0", "::/0"]);
    assert!(!l.permits_name("localhost"));
    assert!(!l.permits_name("example.com"));
    let l = list(&["127.0.0.1.nip.io", "*.example.com"]);
    assert!(!l.permits_ip(ip("127.0.0.1")));
}

#[test]
fn cidrs_match_ipv4_and_ipv6_literals() {
    let l = list(&["127.0.0.0/8", "2001:db8::/32", "203.0.113.7/32"]);
    for inside in ["127.0.0.1", "127.255.0.9", "2001:db8::1", "203.0.113.7"] {
        assert!(l.permits_ip(ip(inside)), "{inside}");
    }
    for outside in ["128.0.0.1", "2001:db9::1", "203.0.113.8", "::1"] {
        assert!(!l.permits_ip(ip(outside)), "{outside}");
    }
    // IPv4-mapped IPv6 is judged as the IPv4 address, whichever way it is listed.
    assert!(l.permits_ip(ip("::ffff:127.0.0.1")));
    let mapped = list(&["::ffff:10.0.0.0/104"]);
    assert!(mapped.permits_ip(ip("10.1.2.3")));
    assert!(!mapped.permits_ip(ip("11.1.2.3")));
}

#[test]
fn patterns_are_normalized_when_parsed() {
    let rule: EgressRule = "*.Example.COM.".parse().unwrap();
    assert_eq!(rule, EgressRule::Subdomains("example.com".into()));
    assert_eq!(rule.to_string(), "*.example.com");
    let rule: EgressRule = " API.example.com ".parse().unwrap();
    assert_eq!(rule, EgressRule::Host("api.example.com".into()));
    // Non-ASCII names are kept in the IDNA form URLs are stored in.
    let rule: EgressRule = "bücher.example".parse().unwrap();
    assert_eq!(rule, EgressRule::Host("xn--bcher-kva.example".into()));
    assert!(list(&["bücher.example"]).permits_name("xn--bcher-kva.example"));
}

#[test]
fn bad_entries_are_refused_with_a_reason() {
    for (entry, says) in [
        ("10.0.0.0/33", "not a valid CIDR"),
        ("example.com/8", "not a valid CIDR"),
        ("*", "not a host pattern"),
        ("*.", "not a host pattern"),
        ("api.*.com", "not a host pattern"),
        ("**.example.com", "not a host pattern"),
        ("", "not a host pattern"),
        ("10.0.0.1", "write it as a CIDR (\"10.0.0.1/32\")"),
        ("::1", "write it as a CIDR (\"::1/128\")"),
        ("127.1", "write it as a CIDR"),
        ("a..example.com", "not a valid host name"),
        ("exa mple.com", "not a valid host name"),
        ("host:80", "not a valid host name"),
    ] {
        let err = entry.parse::<EgressRule>().unwrap_err();
        assert!(err.contains(says), "{entry:?}: {err}");
    }
}

/// A resolver that fails the test if it is ever asked.
struct NoLookups;

impl Resolver for NoLookups {
    fn lookup<'a>(&'a self, host: &'a str, _port: u16) -> LookupFuture<'a> {
        panic!("the allow-list must be judged without DNS, yet {host} was looked up")
    }
}

/// A guard allowing loopback as private, with `entries` as `outbound.allow_only`.
fn guard(entries: &[&str]) -> AddressGuard {
    let rules: Vec<EgressRule> = entries.iter().map(|e| e.parse().unwrap()).collect();
    let loopback = vec!["127.0.0.0/8".parse().unwrap()];
    AddressGuard::new(loopback)
        .with_allow_only(Some(&rules))
        .with_resolver(Arc::new(NoLookups))
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[tokio::test]
async fn guard_refuses_unlisted_hosts_at_creation_without_lookups() {
    let g = guard(&["127.0.0.0/8", "*.hooks.test"]);
    assert_eq!(
        g.check_at_creation(&url("http://127.0.0.1:9/x")).await,
        Ok(())
    );
    for refused in [
        "https://example.com/hook",
        "http://hooks.test/",
        "http://8.8.8.8/",
    ] {
        let err = g.check_at_creation(&url(refused)).await.unwrap_err();
        assert!(
            matches!(err, UrlError::NotAllowListed { .. }),
            "{refused}: {err}"
        );
        assert!(err.to_string().contains("outbound.allow_only"), "{err}");
    }
    // Listed, yet still under the SSRF guard: 10.0.0.0/8 is not an allowed private net.
    let g = guard(&["10.0.0.0/8"]);
    let err = g.check_at_creation(&url("http://10.0.0.1/")).await;
    assert_eq!(
        err,
        Err(UrlError::Blocked {
            addr: ip("10.0.0.1")
        })
    );
}

#[tokio::test]
async fn guard_refuses_unlisted_hosts_at_connect_time_without_lookups() {
    let g = guard(&["127.0.0.0/8", "::1/128"]);
    let addrs = g.resolve_for_connect("127.0.0.1", 80).await.unwrap();
    assert_eq!(addrs, vec![SocketAddr::new(ip("127.0.0.1"), 80)]);
    for refused in ["example.com", "[::2]", "10.0.0.1"] {
        let err = g.resolve_for_connect(refused, 80).await;
        assert!(
            matches!(&err, Err(ConnectGuardError::NotAllowListed { host }) if host == refused),
            "{refused}: {err:?}"
        );
    }
    // Without a list nothing changes: the address checks alone decide.
    let open = AddressGuard::new(vec!["127.0.0.0/8".parse().unwrap()]).with_allow_only(None);
    assert!(open.resolve_for_connect("127.0.0.1", 80).await.is_ok());
}
