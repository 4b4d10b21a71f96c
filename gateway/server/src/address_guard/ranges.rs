//! The blocked ranges: the IANA special-purpose registries, one named entry each.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> IpNet {
    IpNet::new_assert(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), prefix)
}

const fn v6(s: [u16; 8], prefix: u8) -> IpNet {
    let addr = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    IpNet::new_assert(IpAddr::V6(addr), prefix)
}

/// Every range hookgate refuses to reach unless allow-listed, by name.
///
/// The IANA special-purpose registries plus the documentation ranges and the
/// deprecated IPv4-compatible block (`::a.b.c.d`). Some of these are marked
/// "global" by IANA (NAT64, 6to4, TEREDO) but can lead back into private
/// networks, so the design blocks them wholesale. Other assignments IANA marks
/// globally reachable (AMT `2001:3::/32`, AS112-v6) are not listed.
pub(super) const BLOCKED: &[(IpNet, &str)] = &[
    (v4(0, 0, 0, 0, 8), "\"this network\" (RFC 791)"),
    (v4(10, 0, 0, 0, 8), "private-use (RFC 1918)"),
    (
        v4(100, 64, 0, 0, 10),
        "shared address space / CGNAT (RFC 6598)",
    ),
    (v4(127, 0, 0, 0, 8), "loopback (RFC 1122)"),
    (
        v4(169, 254, 0, 0, 16),
        "link-local, cloud metadata (RFC 3927)",
    ),
    (v4(172, 16, 0, 0, 12), "private-use (RFC 1918)"),
    (v4(192, 0, 0, 0, 24), "IETF protocol assignments (RFC 6890)"),
    (v4(192, 0, 2, 0, 24), "documentation TEST-NET-1 (RFC 5737)"),
    (
        v4(192, 88, 99, 0, 24),
        "6to4 relay anycast, deprecated (RFC 7526)",
    ),
    (v4(192, 168, 0, 0, 16), "private-use (RFC 1918)"),
    (v4(198, 18, 0, 0, 15), "benchmarking (RFC 2544)"),
    (
        v4(198, 51, 100, 0, 24),
        "documentation TEST-NET-2 (RFC 5737)",
    ),
    (
        v4(203, 0, 113, 0, 24),
        "documentation TEST-NET-3 (RFC 5737)",
    ),
    (v4(224, 0, 0, 0, 4), "multicast (RFC 5771)"),
    (
        v4(240, 0, 0, 0, 4),
        "reserved and limited broadcast (RFC 1112, RFC 919)",
    ),
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified (RFC 4291)"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback (RFC 4291)"),
    // Holds `::` and `::1` too: it comes after them, since the first match names
    // the range. `::a.b.c.d` is not the IPv4 address, so it is never unmapped.
    (
        v6([0, 0, 0, 0, 0, 0, 0, 0], 96),
        "IPv4-compatible, deprecated (RFC 4291)",
    ),
    // `::ffff:0:a.b.c.d`: SIIT's IPv4-translated form, which a translator
    // turns into the IPv4 address it carries, private ones included.
    (
        v6([0, 0, 0, 0, 0xffff, 0, 0, 0], 96),
        "IPv4-translated (RFC 2765, RFC 6052)",
    ),
    // Never matches after `to_canonical`; kept as a backstop and as the record.
    (
        v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96),
        "IPv4-mapped, checked as IPv4 (RFC 4291)",
    ),
    (
        v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96),
        "NAT64 well-known prefix (RFC 6052)",
    ),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        "NAT64 local-use (RFC 8215)",
    ),
    (
        v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),
        "discard-only (RFC 6666)",
    ),
    (
        v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64),
        "dummy prefix (RFC 9780)",
    ),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "TEREDO (RFC 4380)"),
    // 2001:3::/32 (AMT, RFC 7450) beside it is globally reachable and stays allowed.
    (
        v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48),
        "benchmarking (RFC 5180)",
    ),
    (
        v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28),
        "ORCHID, deprecated (RFC 4843)",
    ),
    (
        v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),
        "ORCHIDv2 (RFC 7343)",
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        "documentation (RFC 3849)",
    ),
    (v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16), "6to4 (RFC 3056)"),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        "documentation (RFC 9637)",
    ),
    (
        v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),
        "SRv6 SIDs (RFC 9602)",
    ),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        "unique local (RFC 4193)",
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        "link-local unicast (RFC 4291)",
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        "site-local, deprecated (RFC 3879)",
    ),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast (RFC 4291)"),
];
