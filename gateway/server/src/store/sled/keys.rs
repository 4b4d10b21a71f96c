//! Key layout of the `records` tree.
//!
//! Everything an ingest writes lives in one tree so that one `apply_batch` is
//! atomic. Each record kind has a short prefix; ids are ULID-based, so a prefix
//! scan in reverse lists newest first. Schedule keys sort by endpoint, then due
//! time (big-endian), then delivery id, so one endpoint's due work is a range scan.

use crate::ids::{EndpointId, TenantId};
use crate::store::{DueEntry, Lane};

/// Separator between key parts; never appears in ids or tenant ids.
const SEP: u8 = 0;

fn key(prefix: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let len = prefix.len() + parts.iter().map(|p| p.len() + 1).sum::<usize>();
    let mut k = Vec::with_capacity(len);
    k.extend_from_slice(prefix);
    for p in parts {
        k.push(SEP);
        k.extend_from_slice(p);
    }
    k
}

/// The first key past every key that starts with `prefix`: the exclusive end of
/// a bounded range.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while end.last() == Some(&0xff) {
        end.pop();
    }
    if let Some(b) = end.last_mut() {
        *b += 1;
    }
    end
}

/// `ten␀{tenant}` → tenant record.
pub(crate) fn tenant(t: &str) -> Vec<u8> {
    key(b"ten", &[t.as_bytes()])
}

/// Prefix of every tenant record.
pub(crate) fn tenants() -> Vec<u8> {
    key(b"ten", &[])
}

/// `tu␀{uid}` → tenant id: the tenant uid index.
pub(crate) fn tenant_uid(uid: &str) -> Vec<u8> {
    key(b"tu", &[uid.as_bytes()])
}

/// `ety␀{name}` → event type of the catalog, in name order.
pub(crate) fn event_type(name: &str) -> Vec<u8> {
    key(b"ety", &[name.as_bytes()])
}

/// Prefix of every event type of the catalog.
pub(crate) fn event_types() -> Vec<u8> {
    key(b"ety", &[b""])
}

/// `pss␀{token hash hex}` → portal session record.
pub(crate) fn portal_session(hash: &str) -> Vec<u8> {
    key(b"pss", &[hash.as_bytes()])
}

/// `pst␀{tenant}␀{token hash hex}` → nothing: a tenant's portal sessions.
pub(crate) fn portal_session_of(t: &str, hash: &str) -> Vec<u8> {
    key(b"pst", &[t.as_bytes(), hash.as_bytes()])
}

/// Prefix of every portal session of tenant `t`.
pub(crate) fn portal_sessions_of(t: &str) -> Vec<u8> {
    key(b"pst", &[t.as_bytes(), b""])
}

/// `psx␀{expiry ms, 20 digits}␀{token hash hex}` → tenant: sessions by expiry.
pub(crate) fn portal_session_expiry(expires_ms: u64, hash: &str) -> Vec<u8> {
    key(
        b"psx",
        &[format!("{expires_ms:020}").as_bytes(), hash.as_bytes()],
    )
}

/// Prefix of every portal session by expiry.
pub(crate) fn portal_session_expiries() -> Vec<u8> {
    key(b"psx", &[b""])
}

/// `tk␀{task}` → task record; ids are time-ordered, so this lists by age.
pub(crate) fn task(id: &str) -> Vec<u8> {
    key(b"tk", &[id.as_bytes()])
}

/// Prefix of every task record (with its separator: `tkr` is another kind).
pub(crate) fn tasks() -> Vec<u8> {
    key(b"tk", &[b""])
}

/// `tkr␀{task}` → nothing: the tasks still running, which claims read.
pub(crate) fn running_task(id: &str) -> Vec<u8> {
    key(b"tkr", &[id.as_bytes()])
}

/// Prefix of every running task's entry.
pub(crate) fn running_tasks() -> Vec<u8> {
    key(b"tkr", &[b""])
}

/// `key␀{sha256(token)}` → tenant id: the API key index.
pub(crate) fn api_key(hash: &[u8; 32]) -> Vec<u8> {
    key(b"key", &[hash])
}

/// `ep␀{tenant}␀{endpoint}` → endpoint record.
pub(crate) fn endpoint(t: &str, ep: &str) -> Vec<u8> {
    key(b"ep", &[t.as_bytes(), ep.as_bytes()])
}

/// Prefix of one tenant's endpoints (with a trailing separator).
pub(crate) fn endpoints_of(t: &str) -> Vec<u8> {
    key(b"ep", &[t.as_bytes(), b""])
}

/// Prefix of every endpoint of every tenant.
pub(crate) fn all_endpoints() -> Vec<u8> {
    key(b"ep", &[])
}

/// `ev␀{tenant}␀{event}` → event record with its raw payload.
pub(crate) fn event(t: &str, ev: &str) -> Vec<u8> {
    key(b"ev", &[t.as_bytes(), ev.as_bytes()])
}

/// `evu␀{tenant}␀{uid}` → event id: the platform's own event ids.
pub(crate) fn event_uid(t: &str, uid: &str) -> Vec<u8> {
    key(b"evu", &[t.as_bytes(), uid.as_bytes()])
}

/// Prefix of one tenant's event uids.
pub(crate) fn event_uids_of(t: &str) -> Vec<u8> {
    key(b"evu", &[t.as_bytes(), b""])
}

/// `dl␀{tenant}␀{delivery}` → delivery record.
pub(crate) fn delivery(t: &str, dlv: &str) -> Vec<u8> {
    key(b"dl", &[t.as_bytes(), dlv.as_bytes()])
}

/// Prefix of one tenant's deliveries.
pub(crate) fn deliveries_of(t: &str) -> Vec<u8> {
    key(b"dl", &[t.as_bytes(), b""])
}

/// `at␀{delivery}␀{series BE}{attempt BE}` → attempt record; sorts in log order.
pub(crate) fn attempt(dlv: &str, series: u32, attempt: u32) -> Vec<u8> {
    let mut n = [0u8; 8];
    n[..4].copy_from_slice(&series.to_be_bytes());
    n[4..].copy_from_slice(&attempt.to_be_bytes());
    key(b"at", &[dlv.as_bytes(), &n])
}

/// `at␀{delivery}␀{series BE}{attempt BE}␀late␀{node}` → a late attempt
/// (its outcome was fenced off): under the delivery's log prefix, sorting right
/// after the attempt with the same number, which it never overwrites.
pub(crate) fn late_attempt(dlv: &str, series: u32, attempt: u32, node: &str) -> Vec<u8> {
    let mut k = self::attempt(dlv, series, attempt);
    k.extend_from_slice(&key(b"", &[b"late", node.as_bytes()]));
    k
}

/// Prefix of one delivery's attempt log.
pub(crate) fn attempts_of(dlv: &str) -> Vec<u8> {
    key(b"at", &[dlv.as_bytes(), b""])
}

/// `axe␀{tenant}␀{endpoint}␀{attempt}` → an attempt with an id: each kept
/// once, in its endpoint's attempt order (ids are time-ordered), and found
/// from its delivery through the ids the delivery record holds.
pub(crate) fn endpoint_attempt(t: &str, ep: &str, attempt_id: &str) -> Vec<u8> {
    key(
        b"axe",
        &[t.as_bytes(), ep.as_bytes(), attempt_id.as_bytes()],
    )
}

/// Prefix of one endpoint's attempts.
pub(crate) fn endpoint_attempts_of(t: &str, ep: &str) -> Vec<u8> {
    key(b"axe", &[t.as_bytes(), ep.as_bytes(), b""])
}

/// Prefix of every attempt of one tenant kept under its endpoint.
pub(crate) fn endpoint_attempts_of_tenant(t: &str) -> Vec<u8> {
    key(b"axe", &[t.as_bytes(), b""])
}

/// `ik␀{tenant}␀{idempotency key}` → the original ingest's response.
pub(crate) fn idempotency(t: &str, k: &str) -> Vec<u8> {
    key(b"ik", &[t.as_bytes(), k.as_bytes()])
}

/// Prefix of all idempotency records (for expiry sweeps).
pub(crate) fn all_idempotency() -> Vec<u8> {
    key(b"ik", &[])
}

/// `pl␀{tenant}␀{name}` → plugin record (its versions and the active pointer).
pub(crate) fn plugin(t: &str, name: &str) -> Vec<u8> {
    key(b"pl", &[t.as_bytes(), name.as_bytes()])
}

/// Prefix of one tenant's plugin records.
pub(crate) fn plugins_of(t: &str) -> Vec<u8> {
    key(b"pl", &[t.as_bytes(), b""])
}

/// Prefix of every plugin record of every tenant (restored at start).
pub(crate) fn all_plugins() -> Vec<u8> {
    key(b"pl", &[])
}

/// `pb␀{tenant}␀{name}␀{version BE}` → the plugin bytes exactly as uploaded.
pub(crate) fn plugin_bytes(t: &str, name: &str, version: u32) -> Vec<u8> {
    key(
        b"pb",
        &[t.as_bytes(), name.as_bytes(), &version.to_be_bytes()],
    )
}

/// `pu␀{tenant}` → the tenant's recent plugin uploads (the upload rate limit).
pub(crate) fn plugin_uploads(t: &str) -> Vec<u8> {
    key(b"pu", &[t.as_bytes()])
}

/// Prefix of every plugin's stored bytes of one tenant.
pub(crate) fn plugin_bytes_of_tenant(t: &str) -> Vec<u8> {
    key(b"pb", &[t.as_bytes(), b""])
}

/// Prefix of every stored version's bytes of one plugin.
pub(crate) fn plugin_bytes_of(t: &str, name: &str) -> Vec<u8> {
    key(b"pb", &[t.as_bytes(), name.as_bytes(), b""])
}

/// `st␀{tenant}␀{endpoint}␀{bucket start BE u64}` → the endpoint's delivery
/// stats in one time bucket; one endpoint's buckets sort oldest first. No other
/// kind's prefix starts with `st`, and `st` starts no other's.
pub(crate) fn endpoint_stats(t: &str, ep: &str, bucket_start_ms: u64) -> Vec<u8> {
    key(
        b"st",
        &[t.as_bytes(), ep.as_bytes(), &bucket_start_ms.to_be_bytes()],
    )
}

/// Prefix of one endpoint's stats buckets (with a trailing separator).
pub(crate) fn endpoint_stats_of(t: &str, ep: &str) -> Vec<u8> {
    key(b"st", &[t.as_bytes(), ep.as_bytes(), b""])
}

/// Prefix of one tenant's stats buckets, every endpoint's.
pub(crate) fn endpoint_stats_of_tenant(t: &str) -> Vec<u8> {
    key(b"st", &[t.as_bytes(), b""])
}

/// Prefix of every stats bucket of every tenant (with its separator).
pub(crate) fn all_endpoint_stats() -> Vec<u8> {
    key(b"st", &[b""])
}

/// The tenant and endpoint of a stats bucket's key: the prefix of that
/// endpoint's buckets; `None` for a key of another shape.
pub(crate) fn endpoint_stats_owner(k: &[u8]) -> Option<Vec<u8>> {
    let rest = k.strip_prefix(b"st\0")?;
    let tenant_end = rest.iter().position(|b| *b == SEP)?;
    let after_tenant = &rest[tenant_end + 1..];
    let endpoint_end = after_tenant.iter().position(|b| *b == SEP)?;
    Some(k[..3 + tenant_end + 1 + endpoint_end + 1].to_vec())
}

/// The tenant and endpoint named by an owner prefix from
/// [`endpoint_stats_owner`].
pub(crate) fn stats_owner_ids(owner: &[u8]) -> Option<(TenantId, EndpointId)> {
    let rest = owner.strip_prefix(b"st\0")?.strip_suffix(&[SEP])?;
    let at = rest.iter().position(|b| *b == SEP)?;
    let tenant = std::str::from_utf8(&rest[..at]).ok()?;
    let endpoint = std::str::from_utf8(&rest[at + 1..]).ok()?;
    Some((TenantId::from(tenant), EndpointId::from(endpoint)))
}

impl Lane {
    fn prefix(self) -> &'static [u8] {
        match self {
            Self::First => b"sf",
            Self::Retry => b"sr",
        }
    }
}

/// How a due entry is laid out as a sled key, so that a range scan of one
/// endpoint's lane reads its entries in due order.
pub(crate) trait ScheduleKey: Sized {
    /// `{lane}␀{endpoint}␀{due_ms BE u64}{delivery}`.
    fn encode(&self) -> Vec<u8>;
    /// The inverse of [`ScheduleKey::encode`]; `None` for a key of another shape.
    fn decode(k: &[u8]) -> Option<Self>;
}

impl ScheduleKey for DueEntry {
    fn encode(&self) -> Vec<u8> {
        let mut k = schedule_of(self.lane, &self.endpoint_id);
        k.extend_from_slice(&self.due_ms.to_be_bytes());
        k.extend_from_slice(self.delivery_id.as_bytes());
        k
    }

    fn decode(k: &[u8]) -> Option<Self> {
        let lane = Lane::ALL.into_iter().find(|l| k.starts_with(l.prefix()))?;
        let rest = k[lane.prefix().len()..].strip_prefix(&[SEP])?;
        let sep = rest.iter().position(|b| *b == SEP)?;
        let (ep, rest) = (&rest[..sep], &rest[sep + 1..]);
        if rest.len() < 8 {
            return None;
        }
        let due_ms = u64::from_be_bytes(rest[..8].try_into().ok()?);
        Some(Self {
            lane,
            endpoint_id: String::from_utf8(ep.to_vec()).ok()?.into(),
            due_ms,
            delivery_id: String::from_utf8(rest[8..].to_vec()).ok()?.into(),
        })
    }
}

/// Prefix of one endpoint's schedule in one lane, in due order.
pub(crate) fn schedule_of(lane: Lane, endpoint_id: &str) -> Vec<u8> {
    key(lane.prefix(), &[endpoint_id.as_bytes(), b""])
}

/// The first key past every entry of `endpoint_id` in `lane` due at or before `due_ms`.
pub(crate) fn schedule_upto(lane: Lane, endpoint_id: &str, due_ms: u64) -> Vec<u8> {
    let mut k = schedule_of(lane, endpoint_id);
    k.extend_from_slice(&due_ms.saturating_add(1).to_be_bytes());
    k
}

/// The first key past every entry of `endpoint_id` in `lane`.
pub(crate) fn schedule_end(lane: Lane, endpoint_id: &str) -> Vec<u8> {
    let mut k = schedule_of(lane, endpoint_id);
    k.extend_from_slice(&[0xff; 9]);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(ep: &str, due: u64, d: &str) -> DueEntry {
        DueEntry {
            lane: Lane::Retry,
            endpoint_id: ep.into(),
            due_ms: due,
            delivery_id: d.into(),
        }
    }

    #[test]
    fn schedule_keys_round_trip() {
        let k = sk("ep_01J0000000000000000000000A", 1_700_000_000_123, "dlv_X");
        assert_eq!(DueEntry::decode(&k.encode()), Some(k.clone()));
        let first = DueEntry {
            lane: Lane::First,
            ..k
        };
        assert_eq!(DueEntry::decode(&first.encode()), Some(first));
        assert_eq!(DueEntry::decode(b"sr\0nope"), None);
        assert_eq!(DueEntry::decode(b"ev\0a\0b"), None);
    }

    #[test]
    fn schedule_keys_sort_by_endpoint_then_due_then_delivery() {
        let mut keys = vec![
            sk("ep_B", 5, "dlv_1"),
            sk("ep_A", 256, "dlv_1"),
            sk("ep_A", 255, "dlv_2"),
            sk("ep_A", 255, "dlv_1"),
            sk("ep_A", u64::MAX, "dlv_0"),
        ];
        let mut encoded: Vec<_> = keys.iter().map(ScheduleKey::encode).collect();
        encoded.sort();
        keys.sort_by(|a, b| {
            (&a.endpoint_id, a.due_ms, &a.delivery_id).cmp(&(
                &b.endpoint_id,
                b.due_ms,
                &b.delivery_id,
            ))
        });
        let decoded: Vec<_> = encoded
            .iter()
            .map(|k| DueEntry::decode(k).unwrap())
            .collect();
        assert_eq!(decoded, keys);
    }

    #[test]
    fn upto_bounds_exactly_the_due_entries() {
        let due = sk("ep_A", 100, "dlv_Z").encode();
        let later = sk("ep_A", 101, "dlv_0").encode();
        let bound = schedule_upto(Lane::Retry, "ep_A", 100);
        assert!(due < bound && bound <= later);
        assert!(schedule_of(Lane::Retry, "ep_A") < due);
        assert!(sk("ep_A", u64::MAX, "dlv_Z").encode() < schedule_end(Lane::Retry, "ep_A"));
        assert!(
            !sk("ep_A", 1, "d")
                .encode()
                .starts_with(&schedule_of(Lane::First, "ep_A"))
        );
        // One endpoint's range never reaches into another's whose id extends it.
        assert!(
            !sk("ep_AB", 0, "d")
                .encode()
                .starts_with(&schedule_of(Lane::Retry, "ep_A"))
        );
    }

    #[test]
    fn a_prefix_end_bounds_exactly_the_keys_under_the_prefix() {
        let p = deliveries_of("a");
        let end = prefix_end(&p);
        assert!(delivery("a", "dlv_zzzz") < end);
        assert!(delivery("a", "\u{10ffff}") < end);
        assert!(delivery("a0", "dlv_1") >= end || !delivery("a0", "dlv_1").starts_with(&p));
        assert!(delivery("b", "dlv_0") >= end);
        assert_eq!(prefix_end(&[1, 0xff, 0xff]), [2]);
    }

    #[test]
    fn stats_keys_sort_by_time_within_their_endpoint_and_name_it() {
        let early = endpoint_stats("a", "ep_1", 300_000);
        let late = endpoint_stats("a", "ep_1", 600_000);
        assert!(early < late);
        let mine = endpoint_stats_of("a", "ep_1");
        assert!(early.starts_with(&mine) && late.starts_with(&mine));
        assert!(!endpoint_stats("a", "ep_10", 0).starts_with(&mine));
        assert!(!endpoint_stats("ab", "ep_1", 0).starts_with(&endpoint_stats_of_tenant("a")));
        assert!(early.starts_with(&endpoint_stats_of_tenant("a")));
        assert!(early.starts_with(&all_endpoint_stats()));
        assert_eq!(endpoint_stats_owner(&late), Some(mine));
        assert_eq!(endpoint_stats_owner(b"st\0a"), None);
        // No other kind's key is under the stats prefix.
        for other in [
            tenant("st"),
            task("st"),
            endpoint("st", "x"),
            event("st", "x"),
            delivery("st", "x"),
            idempotency("st", "x"),
            plugin("st", "x"),
            schedule_of(Lane::First, "st"),
            schedule_of(Lane::Retry, "st"),
        ] {
            assert!(!other.starts_with(&all_endpoint_stats()), "{other:?}");
            assert!(!early.starts_with(&other), "{other:?}");
        }
    }

    #[test]
    fn tenant_scoped_prefixes_do_not_overlap() {
        assert!(!endpoint("ab", "ep_1").starts_with(&endpoints_of("a")));
        assert!(endpoint("a", "ep_1").starts_with(&endpoints_of("a")));
        assert!(!delivery("ab", "dlv_1").starts_with(&deliveries_of("a")));
        assert!(attempt("dlv_1", 2, 1) > attempt("dlv_1", 1, 9));
        assert!(!plugin("ab", "p").starts_with(&plugins_of("a")));
        assert!(plugin("a", "p").starts_with(&plugins_of("a")));
        assert!(!plugin_bytes("a", "pq", 1).starts_with(&plugin_bytes_of("a", "p")));
        assert!(plugin_bytes("a", "p", 2) > plugin_bytes("a", "p", 1));
    }
}
