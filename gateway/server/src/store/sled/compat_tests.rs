//! A data dir written before records were typed opens with this build: every
//! delivery and attempt reads back with its state, reason, kind and verdict, and
//! encodes again to the very bytes stored. Names no variant knows (another
//! build's) are kept, not refused.

use std::path::Path;

use super::compat_fixture::{TENANT, fixture_dir};
use super::*;
use crate::policy::{DeadReason, ErrorKind, FailureKind, VerdictKind};
use crate::store::*;

/// A copy of the fixture in a temporary dir, opened.
fn open_copy() -> (SledStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture_dir(), dir.path());
    let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
    (store, dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn deliveries(store: &SledStore) -> Vec<DeliveryRecord> {
    let all =
        store.list_deliveries_blocking(TENANT, &DeliveryFilter::default(), |_| true, 100, None);
    all.unwrap().data
}

fn stored(store: &SledStore, key: &[u8]) -> Vec<u8> {
    store.records().unwrap().get(key).unwrap().unwrap().to_vec()
}

fn failure(kind: FailureKind) -> Option<ErrorKind> {
    Some(ErrorKind::Failure(kind))
}

/// One attempt as read back: its status, error kind, verdict and dead reason.
type AttemptSummary = (
    Option<u16>,
    Option<ErrorKind>,
    VerdictKind,
    Option<DeadReason>,
);

/// What one fixture delivery must read back as.
struct Expected {
    state: DeliveryState,
    last_status: Option<u16>,
    last_error: Option<ErrorKind>,
    dead_reason: Option<DeadReason>,
    attempts: Vec<AttemptSummary>,
}

fn expected(case: &str) -> Expected {
    use DeadReason as Dead;
    use DeliveryState::{Dead as IsDead, Pending, Succeeded};
    use VerdictKind::{Delivered, DisableEndpoint, GiveUp, Retry};
    let (state, last_status, last_error, dead_reason, attempts) = match case {
        "case.pending_new" => (Pending, None, None, None, vec![]),
        "case.pending_retry" => {
            let dns = failure(FailureKind::Dns);
            (Pending, None, dns, None, vec![(None, dns, Retry, None)])
        }
        "case.succeeded" => (
            Succeeded,
            Some(200),
            None,
            None,
            vec![
                (Some(503), None, Retry, None),
                (Some(200), None, Delivered, None),
            ],
        ),
        "case.max_attempts" => {
            let connect = failure(FailureKind::Connect);
            let last = (None, connect, Retry, Some(Dead::MaxAttempts));
            let first = (None, failure(FailureKind::Timeout), Retry, None);
            (
                IsDead,
                None,
                connect,
                Some(Dead::MaxAttempts),
                vec![first, last],
            )
        }
        "case.retry_window" => {
            let tls = failure(FailureKind::Tls);
            let only = (None, tls, Retry, Some(Dead::RetryWindow));
            (IsDead, None, tls, Some(Dead::RetryWindow), vec![only])
        }
        "case.give_up_redirect" => {
            let redirect = failure(FailureKind::Redirect);
            let only = (Some(301), redirect, GiveUp, Some(Dead::GiveUp));
            (IsDead, Some(301), redirect, Some(Dead::GiveUp), vec![only])
        }
        "case.give_up_after_retries" => (
            IsDead,
            Some(400),
            None,
            Some(Dead::GiveUp),
            vec![
                (None, failure(FailureKind::Reset), Retry, None),
                (None, failure(FailureKind::Protocol), Retry, None),
                (Some(400), None, GiveUp, Some(Dead::GiveUp)),
            ],
        ),
        "case.blocked" => {
            let blocked = Some(ErrorKind::BlockedAddress);
            let only = (None, blocked, GiveUp, Some(Dead::BlockedAddress));
            (
                IsDead,
                None,
                blocked,
                Some(Dead::BlockedAddress),
                vec![only],
            )
        }
        "case.gone" => {
            let only = (
                Some(410),
                None,
                DisableEndpoint,
                Some(Dead::EndpointDisabled),
            );
            (
                IsDead,
                Some(410),
                None,
                Some(Dead::EndpointDisabled),
                vec![only],
            )
        }
        "case.internal_error" => (IsDead, None, None, Some(Dead::InternalError), vec![]),
        "case.invalid_request" => (IsDead, None, None, Some(Dead::InvalidRequest), vec![]),
        "case.event_missing" => (IsDead, None, None, Some(Dead::EventMissing), vec![]),
        "case.endpoint_deleted" => (IsDead, None, None, Some(Dead::EndpointDeleted), vec![]),
        other => panic!("unexpected delivery {other}"),
    };
    Expected {
        state,
        last_status,
        last_error,
        dead_reason,
        attempts,
    }
}

#[test]
fn every_delivery_and_attempt_reads_back_and_encodes_to_the_stored_bytes() {
    let (store, _dir) = open_copy();
    let all = deliveries(&store);
    assert_eq!(all.len(), 13, "every delivery of the fixture");
    for d in &all {
        let want = expected(&d.event_type);
        let case = d.event_type.as_str();
        assert_eq!(d.state, want.state, "{case}");
        assert_eq!(d.last_status, want.last_status, "{case}");
        assert_eq!(d.last_error, want.last_error.map(Recorded::from), "{case}");
        assert_eq!(
            d.dead_reason,
            want.dead_reason.map(Recorded::from),
            "{case}"
        );
        let key = keys::delivery(TENANT, &d.id);
        assert_eq!(records::encode(d), stored(&store, &key), "{case}");

        let log = store.attempt_log(&d.tenant_id, &d.id).unwrap();
        let got: Vec<AttemptSummary> = log
            .iter()
            .map(|a| {
                let error_kind = a.error_kind.as_ref().map(|k| *k.known().unwrap());
                let dead_reason = a.dead_reason.as_ref().map(|r| *r.known().unwrap());
                (
                    a.status,
                    error_kind,
                    *a.verdict.known().unwrap(),
                    dead_reason,
                )
            })
            .collect();
        assert_eq!(got, want.attempts, "{case}");
        for a in &log {
            let key = keys::attempt(&d.id, a.series, a.attempt);
            assert_eq!(records::encode(a), stored(&store, &key), "{case}");
        }
    }
}

#[test]
fn breakers_read_back_and_an_empty_state_is_closed() {
    let (store, _dir) = open_copy();
    let mut eps = store.endpoints_of(TENANT).unwrap();
    eps.sort_by(|a, b| a.id.cmp(&b.id));
    let states: Vec<_> = eps
        .iter()
        .map(|ep| (ep.id.as_str(), ep.breaker.state.clone(), ep.disabled))
        .collect();
    let closed = Recorded::from(BreakerState::Closed);
    assert_eq!(
        states,
        [
            ("ep_closed", closed.clone(), false),
            ("ep_gone", closed.clone(), true),
            ("ep_half", BreakerState::HalfOpen.into(), false),
            ("ep_main", closed, false),
            ("ep_open", BreakerState::Open.into(), false),
        ]
    );
    let open = eps.iter().find(|ep| ep.id == "ep_open").unwrap();
    assert_eq!(open.breaker.open_until_ms, Some(1_780_000_600_000));
    // Only the empty state of a never-changed breaker is written differently.
    for ep in &eps {
        let old = stored(&store, &keys::endpoint(TENANT, &ep.id));
        let old = String::from_utf8(old).unwrap();
        let now = old.replace(r#""state":"""#, r#""state":"closed""#);
        assert_eq!(String::from_utf8(records::encode(ep)).unwrap(), now);
    }
}

#[test]
fn names_no_variant_knows_are_kept_and_lose_no_delivery() {
    let (store, _dir) = open_copy();
    let records = &store.records().unwrap();
    let dead = deliveries(&store);
    let dead = dead.iter().find(|d| d.event_type == "case.max_attempts");
    let dead = dead.unwrap();
    let (dkey, akey) = (
        keys::delivery(TENANT, &dead.id),
        keys::attempt(&dead.id, 1, 2),
    );
    let ekey = keys::endpoint(TENANT, "ep_open");
    let rewrite = |key: &[u8], from: &str, to: &str| {
        let old = String::from_utf8(stored(&store, key)).unwrap();
        assert!(old.contains(from), "{from}");
        records
            .insert(key, old.replace(from, to).as_bytes())
            .unwrap();
    };
    rewrite(
        &dkey,
        r#""dead_reason":"max_attempts""#,
        r#""dead_reason":"quota""#,
    );
    rewrite(
        &dkey,
        r#""last_error":"connect""#,
        r#""last_error":"pigeon""#,
    );
    rewrite(&akey, r#""verdict":"retry""#, r#""verdict":"defer""#);
    rewrite(
        &akey,
        r#""error_kind":"connect""#,
        r#""error_kind":"pigeon""#,
    );
    rewrite(&ekey, r#""state":"open""#, r#""state":"ajar""#);

    assert_eq!(deliveries(&store).len(), 13, "no delivery is lost");
    let d = store.delivery(TENANT, &dead.id).unwrap().unwrap();
    assert_eq!(d.dead_reason, Some(Recorded::Unknown("quota".into())));
    assert_eq!(d.last_error, Some(Recorded::Unknown("pigeon".into())));
    assert_eq!(records::encode(&d), stored(&store, &dkey));
    let log = store.attempt_log(&dead.tenant_id, &dead.id).unwrap();
    assert_eq!(log[1].verdict, Recorded::Unknown("defer".into()));
    assert_eq!(records::encode(&log[1]), stored(&store, &akey));
    let ep = store.endpoint(TENANT, "ep_open").unwrap().unwrap();
    assert_eq!(ep.breaker.state, Recorded::Unknown("ajar".into()));
    assert_eq!(records::encode(&ep), stored(&store, &ekey));
}

/// Records written before tenants, endpoints and events carried names,
/// uids, channels, filters and labels read back with none of them: a tenant
/// named after its id (in views), endpoints that hear every event their
/// types match, events with no labels; and the event list pages them.
#[tokio::test]
async fn records_from_before_the_platform_model_read_with_its_defaults() {
    let (store, _dir) = open_copy();
    let tenant = store.tenant(TENANT).unwrap().unwrap();
    assert_eq!((tenant.name.as_str(), tenant.uid.as_ref()), ("", None));
    assert!(tenant.is_live() && tenant.metadata.is_empty());
    for ep in store.endpoints_of(TENANT).unwrap() {
        assert!(
            ep.uid.is_none() && ep.channels.is_empty() && ep.filter.is_none(),
            "{}",
            ep.id
        );
    }
    let window = IdWindow::default();
    let events = store
        .events_between(TENANT, &window, IdOrder::Descending, 100)
        .await
        .unwrap();
    assert!(!events.is_empty());
    assert!(events.iter().all(|e| e.labels.is_empty()));
}
