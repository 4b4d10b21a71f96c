//! One test per blocked range, normalization, the allow list and resolution.

use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

fn net(s: &str) -> IpNet {
    s.parse().expect("test net")
}

/// `range_test!(name, [inside..], [outside..])`: one test per blocked
/// range; addresses inside are blocked, neighbours outside are global.
macro_rules! range_test {
    ($name:ident, [$($b:literal),+], [$($g:literal),*]) => {
        #[test]
        fn $name() {
            $(assert!(!is_global(ip($b)), "{} should be blocked", $b);)+
            $(assert!(is_global(ip($g)), "{} should be global", $g);)*
            $(assert!(!AddressGuard::default().permits(ip($b)));)+
            $(assert!(AddressGuard::default().permits(ip($g)));)*
        }
    };
}

range_test!(v4_this_network, ["0.0.0.0", "0.255.255.255"], ["1.0.0.1"]);
range_test!(
    v4_private_10,
    ["10.0.0.1", "10.255.255.255"],
    ["9.255.255.255", "11.0.0.1"]
);
range_test!(
    v4_cgnat,
    ["100.64.0.1", "100.127.255.255"],
    ["100.63.255.255", "100.128.0.1"]
);
range_test!(
    v4_loopback,
    ["127.0.0.1", "127.255.255.254"],
    ["126.255.255.255", "128.0.0.1"]
);
range_test!(
    v4_link_local,
    ["169.254.169.254", "169.254.0.1"],
    ["169.253.255.255", "169.255.0.1"]
);
range_test!(
    v4_private_172,
    ["172.16.0.1", "172.31.255.255"],
    ["172.15.255.255", "172.32.0.1"]
);
range_test!(
    v4_ietf_protocol,
    ["192.0.0.8", "192.0.0.9", "192.0.0.255"],
    ["191.255.255.255", "192.0.1.1"]
);
range_test!(v4_test_net_1, ["192.0.2.1", "192.0.2.255"], ["192.0.3.1"]);
range_test!(
    v4_private_192,
    ["192.168.0.1", "192.168.255.255"],
    ["192.167.255.255", "192.169.0.1"]
);
range_test!(
    v4_benchmarking,
    ["198.18.0.1", "198.19.255.255"],
    ["198.17.255.255", "198.20.0.1"]
);
range_test!(
    v4_test_net_2,
    ["198.51.100.7"],
    ["198.51.99.1", "198.51.101.1"]
);
range_test!(
    v4_test_net_3,
    ["203.0.113.5"],
    ["203.0.112.1", "203.0.114.1"]
);
range_test!(
    v4_multicast,
    ["224.0.0.1", "239.255.255.250"],
    ["223.255.255.254"]
);
range_test!(
    v4_reserved_broadcast,
    ["240.0.0.1", "255.255.255.255"],
    ["8.8.8.8", "1.1.1.1"]
);
range_test!(v6_unspecified, ["::"], ["2606:4700::1111"]);
range_test!(v6_loopback, ["::1"], ["2606:4700::1111"]);
range_test!(
    v6_ipv4_mapped,
    ["::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:0.0.0.0"],
    ["::ffff:8.8.8.8"]
);
range_test!(
    v6_nat64,
    ["64:ff9b::808:808", "64:ff9b::7f00:1"],
    ["2606:4700::1111"]
);
range_test!(
    v6_nat64_local,
    ["64:ff9b:1::1", "64:ff9b:1:ffff::1"],
    ["2606:4700::1111"]
);
range_test!(
    v6_discard,
    ["100::1", "100::ffff:ffff:ffff:ffff"],
    ["2606:4700::1111"]
);
range_test!(
    v6_teredo,
    ["2001::1", "2001:0:ffff::1"],
    ["2001:4860:4860::8888"]
);
range_test!(
    v6_orchid,
    ["2001:10::1", "2001:1f:ffff::1"],
    ["2001:4860:4860::8888"]
);
range_test!(
    v6_orchid_v2,
    ["2001:20::1", "2001:2f:ffff::1"],
    ["2001:4860:4860::8888"]
);
range_test!(
    v6_documentation,
    ["2001:db8::1", "2001:db8:ffff::1"],
    ["2001:db9::1"]
);
range_test!(
    v6_6to4,
    ["2002::1", "2002:7f00:1::1"],
    ["2003::1", "2001:4860:4860::8888"]
);
range_test!(
    v6_unique_local,
    ["fc00::1", "fd12:3456::1"],
    ["2606:4700::1111"]
);
range_test!(v6_link_local, ["fe80::1", "febf::1"], ["2606:4700::1111"]);
range_test!(v6_site_local, ["fec0::1", "feff::1"], ["2606:4700::1111"]);
range_test!(v6_multicast, ["ff02::1", "ff0e::1"], ["2606:4700::1111"]);

// Special-purpose IPv6 ranges (issue 17, item 8).
range_test!(
    v6_ipv4_compatible,
    [
        "::127.0.0.1",
        "::10.0.0.1",
        "::8.8.8.8",
        "::2",
        "::ffff:ffff"
    ],
    ["::1:0:0", "::ffff:8.8.8.8", "2606:4700::1111"]
);
range_test!(
    v6_benchmarking,
    ["2001:2::1", "2001:2:0:ffff::1"],
    ["2001:2:1::1", "2001:1:ffff::1"]
);
range_test!(
    v6_documentation_3fff,
    ["3fff::1", "3fff:fff:ffff::1"],
    ["3fff:1000::1", "3ffe:ffff::1"]
);
range_test!(
    v6_srv6_sids,
    ["5f00::1", "5f00:ffff::1"],
    ["5f01::1", "5eff:ffff::1"]
);
range_test!(
    v6_dummy_prefix,
    ["100:0:0:1::1", "100:0:0:1:ffff:ffff:ffff:ffff"],
    ["100:0:0:2::1", "101::1"]
);
// AMT (RFC 7450) is globally reachable: it stays allowed beside its blocked neighbours.
range_test!(
    v6_amt_stays_global,
    ["2001:2::1", "2001::1"],
    ["2001:3::1", "2001:3:ffff::1"]
);

#[test]
fn overlapping_ranges_keep_their_most_specific_name() {
    // `::/96` holds `::` and `::1`; they keep their own entries' names.
    assert_eq!(blocked_range(ip("::")), Some("unspecified (RFC 4291)"));
    assert_eq!(blocked_range(ip("::1")), Some("loopback (RFC 4291)"));
    assert_eq!(
        blocked_range(ip("::127.0.0.1")),
        Some("IPv4-compatible, deprecated (RFC 4291)")
    );
    // IPv4-mapped addresses are still judged as the IPv4 address they carry.
    assert_eq!(
        blocked_range(ip("::ffff:127.0.0.1")),
        Some("loopback (RFC 1122)")
    );
    assert_eq!(blocked_range(ip("::ffff:8.8.8.8")), None);
}

#[test]
fn ipv4_compatible_is_not_lifted_by_an_ipv4_allow_list() {
    // The allow list lifts IPv4 loopback and its mapped form, never the
    // deprecated compatible form, which is not the same address.
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    assert!(guard.permits(ip("::ffff:127.0.0.1")));
    assert!(!guard.permits(ip("::127.0.0.1")));
}

#[test]
fn table_entries_are_canonical_networks() {
    for (net, name) in BLOCKED {
        assert_eq!(*net, net.trunc(), "{name}: host bits set in {net}");
        assert!(!name.is_empty());
    }
}

#[test]
fn normalize_resolves_ipv4_shorthand() {
    let url = normalize_endpoint_url("http://127.1/x", 2048).unwrap();
    assert_eq!(url.host_str(), Some("127.0.0.1"));
    assert_eq!(url.as_str(), "http://127.0.0.1/x");
    let url = normalize_endpoint_url("http://0x7f.1/", 2048).unwrap();
    assert_eq!(url.host_str(), Some("127.0.0.1"));
}

#[test]
fn normalize_lowercases_and_drops_default_port_and_fragment() {
    let url = normalize_endpoint_url("HTTP://Example.COM:80/a", 2048).unwrap();
    assert_eq!(url.as_str(), "http://example.com/a");
    let url = normalize_endpoint_url("https://example.com:443/a?b=1#frag", 2048).unwrap();
    assert_eq!(url.as_str(), "https://example.com/a?b=1");
}

#[test]
fn normalize_keeps_ipv6_host_and_port() {
    let url = normalize_endpoint_url("https://[::1]:8443/", 2048).unwrap();
    assert_eq!(url.host_str(), Some("[::1]"));
    assert_eq!(url.port(), Some(8443));
}

#[test]
fn normalize_refuses_bad_input() {
    let n = |s| normalize_endpoint_url(s, 64);
    assert_eq!(n("ftp://x"), Err(UrlError::Scheme("ftp".into())));
    assert_eq!(
        n("file:///etc/passwd"),
        Err(UrlError::Scheme("file".into()))
    );
    assert_eq!(
        n("http://user:pw@example.com"),
        Err(UrlError::HasCredentials)
    );
    assert_eq!(n("http://user@example.com"), Err(UrlError::HasCredentials));
    let long = format!("http://example.com/{}", "a".repeat(64));
    assert_eq!(n(&long), Err(UrlError::TooLong { max: 64 }));
    assert!(matches!(n("not a url"), Err(UrlError::Invalid(_))));
    assert!(matches!(n("http://"), Err(UrlError::Invalid(_))));
    assert!(matches!(
        n("http://exa mple.com/"),
        Err(UrlError::Invalid(_))
    ));
    assert!(matches!(n("http://[::1/"), Err(UrlError::Invalid(_))));
}

#[test]
fn allow_list_lifts_only_listed_subnets() {
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    assert!(guard.permits(ip("127.0.0.1")));
    assert!(guard.permits(ip("::ffff:127.0.0.1")));
    assert!(!guard.permits(ip("10.0.0.1")));
    assert!(!guard.permits(ip("::1")));
    assert!(guard.permits(ip("8.8.8.8")));
}

#[test]
fn allow_list_entries_in_mapped_form_cover_ipv4() {
    let guard = AddressGuard::new(vec![net("::ffff:10.0.0.0/104")]);
    assert!(guard.permits(ip("10.1.2.3")));
    assert!(guard.permits(ip("::ffff:10.1.2.3")));
    assert!(!guard.permits(ip("192.168.0.1")));
}

#[tokio::test]
async fn creation_check_blocks_literals_unless_allowed() {
    let url = normalize_endpoint_url("http://127.0.0.1:9/", 2048).unwrap();
    let blocked = AddressGuard::default().check_at_creation(&url).await;
    assert_eq!(
        blocked,
        Err(UrlError::Blocked {
            addr: ip("127.0.0.1")
        })
    );
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    assert_eq!(guard.check_at_creation(&url).await, Ok(()));

    let url = normalize_endpoint_url("http://0x7f.1/", 2048).unwrap();
    let blocked = AddressGuard::default().check_at_creation(&url).await;
    assert_eq!(
        blocked,
        Err(UrlError::Blocked {
            addr: ip("127.0.0.1")
        })
    );
    let url = normalize_endpoint_url("http://[::ffff:169.254.169.254]/", 2048).unwrap();
    assert!(
        AddressGuard::default()
            .check_at_creation(&url)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn creation_check_resolves_names() {
    let url = normalize_endpoint_url("http://localhost:8080/", 2048).unwrap();
    let result = AddressGuard::default().check_at_creation(&url).await;
    assert!(
        matches!(result, Err(UrlError::Blocked { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn creation_check_accepts_unresolvable_names() {
    let url = normalize_endpoint_url("https://no-such-host.invalid/hook", 2048).unwrap();
    assert_eq!(
        AddressGuard::default().check_at_creation(&url).await,
        Ok(())
    );
}

#[tokio::test]
async fn connect_blocks_literals_unless_allowed() {
    let err = AddressGuard::default()
        .resolve_for_connect("127.0.0.1", 80)
        .await;
    assert!(matches!(err, Err(ConnectGuardError::Blocked { addr }) if addr == ip("127.0.0.1")));
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    let addrs = guard.resolve_for_connect("127.0.0.1", 80).await.unwrap();
    assert_eq!(addrs, vec!["127.0.0.1:80".parse::<SocketAddr>().unwrap()]);
}

#[tokio::test]
async fn connect_handles_bracketed_ipv6() {
    let err = AddressGuard::default()
        .resolve_for_connect("[::1]", 80)
        .await;
    assert!(matches!(err, Err(ConnectGuardError::Blocked { .. })));
    let guard = AddressGuard::new(vec![net("::1/128")]);
    let addrs = guard.resolve_for_connect("[::1]", 80).await.unwrap();
    assert_eq!(addrs, vec!["[::1]:80".parse::<SocketAddr>().unwrap()]);
    let bad = guard.resolve_for_connect("[localhost]", 80).await;
    assert!(matches!(bad, Err(ConnectGuardError::Resolve(_))));
}

#[tokio::test]
async fn ipv4_compatible_literals_are_refused_at_creation_and_connect() {
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    let url = normalize_endpoint_url("http://[::127.0.0.1]/x", 2048).unwrap();
    assert_eq!(
        guard.check_at_creation(&url).await,
        Err(UrlError::Blocked {
            addr: ip("::127.0.0.1")
        })
    );
    let err = guard.resolve_for_connect("[::127.0.0.1]", 80).await;
    assert!(
        matches!(err, Err(ConnectGuardError::Blocked { addr }) if addr == ip("::127.0.0.1")),
        "{err:?}"
    );
}

#[tokio::test]
async fn connect_unmaps_ipv4_mapped_literals() {
    let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
    let addrs = guard
        .resolve_for_connect("[::ffff:127.0.0.1]", 8080)
        .await
        .unwrap();
    assert_eq!(addrs, vec!["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]);
    let err = AddressGuard::default()
        .resolve_for_connect("::ffff:10.0.0.1", 80)
        .await;
    assert!(matches!(err, Err(ConnectGuardError::Blocked { .. })));
}

#[tokio::test]
async fn connect_refuses_names_resolving_to_blocked_addresses() {
    let err = AddressGuard::default()
        .resolve_for_connect("localhost", 80)
        .await;
    assert!(
        matches!(err, Err(ConnectGuardError::Blocked { .. })),
        "{err:?}"
    );
    let guard = AddressGuard::new(vec![net("127.0.0.0/8"), net("::1/128")]);
    let addrs = guard.resolve_for_connect("localhost", 80).await.unwrap();
    assert!(addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 80));
}

#[tokio::test]
async fn connect_reports_resolution_failure() {
    let err = AddressGuard::default()
        .resolve_for_connect("no-such-host.invalid", 80)
        .await;
    assert!(matches!(err, Err(ConnectGuardError::Resolve(_))), "{err:?}");
}

// Item 5 of tenant fairness: ranges that led to private networks.
range_test!(
    v4_6to4_relay_anycast,
    ["192.88.99.1", "192.88.99.255"],
    ["192.88.98.255", "192.88.100.1"]
);
range_test!(
    v6_ipv4_translated,
    ["::ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:808:808"],
    ["::ffff:8.8.8.8", "::1:ffff:0:808:808"]
);
