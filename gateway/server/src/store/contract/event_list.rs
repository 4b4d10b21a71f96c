//! Listing events: a page reads at most `PAGE_SCAN_LIMIT` stored events,
//! however few its filter keeps, and answers a cursor to read on from there.

use crate::store::testing::TestStore;
use crate::store::{EventQuery, ListCursor, PAGE_SCAN_LIMIT};

contract_tests! {
    a_page_reads_at_most_the_scan_bound_and_says_where_to_go_on,
}

async fn a_page_reads_at_most_the_scan_bound_and_says_where_to_go_on(t: TestStore) {
    let total = PAGE_SCAN_LIMIT + 100;
    for start in (0..total).step_by(100) {
        let batch = (start..(start + 100).min(total)).map(|i| t.ingest("t", &[], i as u64));
        futures_util::future::join_all(batch).await;
    }
    let query = EventQuery {
        limit: 50,
        ..EventQuery::default()
    };
    let first = t
        .store
        .list_events(&"t".into(), &query, |_| false)
        .await
        .unwrap();
    assert_eq!((first.data.len(), first.scanned), (0, PAGE_SCAN_LIMIT));
    let Some(ListCursor::After(at)) = first.next.clone() else {
        panic!("a cursor to read on: {:?}", first.next);
    };
    let rest = EventQuery {
        cursor: Some(ListCursor::After(at)),
        ..query.clone()
    };
    let second = t
        .store
        .list_events(&"t".into(), &rest, |_| false)
        .await
        .unwrap();
    assert_eq!(
        (second.scanned, second.next),
        (100, None),
        "the rest, and no further"
    );
    let all = t
        .store
        .list_events(&"t".into(), &query, |_| true)
        .await
        .unwrap();
    assert_eq!(
        (all.data.len(), all.scanned),
        (50, 50),
        "a full page reads what it returns"
    );
}
