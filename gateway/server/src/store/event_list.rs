//! Listing a tenant's events: in either order, paged both ways from a cursor,
//! within a time range, kept by the caller's filter, reading a bounded number
//! of records per page however few the filter keeps.
//!
//! The backends only read events in id order between two ids (ids are
//! time-ordered, so a time range is an id range); the page is made here, the
//! same for both.

use super::{EventRecord, Store, StoreError};
use crate::ids::{EventId, TenantId};

/// Most events one page reads, however few its filter keeps: ten pages of the
/// largest size. A page that stops there answers what it found and a cursor
/// to read on.
pub(crate) const EVENT_SCAN_LIMIT: usize = 2_500;

/// Events read from a backend at a time while a page fills.
const CHUNK: usize = 250;

/// The order of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    #[default]
    NewestFirst,
    OldestFirst,
}

/// Where a page starts: past an event (the next page) or short of it (the
/// page before), in the list's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListCursor {
    After(EventId),
    Before(EventId),
}

/// What a page of events reads.
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    pub order: ListOrder,
    pub cursor: Option<ListCursor>,
    /// Created at or after, Unix ms.
    pub since_ms: Option<u64>,
    /// Created before, Unix ms.
    pub until_ms: Option<u64>,
    pub limit: usize,
}

/// One page of events, in the list's order.
#[derive(Debug, Default)]
pub struct EventPage {
    pub data: Vec<EventRecord>,
    /// Where the next page starts, if more may follow.
    pub next: Option<ListCursor>,
    /// Where the page before starts (also: where to look for events newer
    /// than a newest-first page's first), if the page has a start.
    pub prev: Option<ListCursor>,
    /// How many stored events the page read.
    pub scanned: usize,
}

/// Which way a read goes in id order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdOrder {
    Descending,
    Ascending,
}

/// The ids a read may return: strictly between `after` and `before`.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdWindow {
    pub(crate) after: Option<String>,
    pub(crate) before: Option<String>,
}

impl Store {
    /// A page of `tenant`'s events that `keep` keeps.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_events(
        &self,
        tenant: &TenantId,
        query: &EventQuery,
        keep: impl Fn(&EventRecord) -> bool,
    ) -> Result<EventPage, StoreError> {
        // Reading backwards (a page before a cursor) reads the other way and
        // turns the page around.
        let backwards = matches!(query.cursor, Some(ListCursor::Before(_)));
        let newest_first = (query.order == ListOrder::NewestFirst) != backwards;
        let order = if newest_first {
            IdOrder::Descending
        } else {
            IdOrder::Ascending
        };
        let mut window = IdWindow {
            after: query.since_ms.map(|ms| {
                // `since` is inclusive: start just short of its first id.
                let first = String::from(EventId::first_at(ms));
                first[..first.len() - 1].to_owned()
            }),
            before: query.until_ms.map(|ms| String::from(EventId::first_at(ms))),
        };
        if let Some(ListCursor::After(id) | ListCursor::Before(id)) = &query.cursor {
            let id = id.to_string();
            match order {
                IdOrder::Descending => {
                    window.before = Some(window.before.map_or(id.clone(), |b| b.min(id)))
                }
                IdOrder::Ascending => {
                    window.after = Some(window.after.map_or(id.clone(), |a| a.max(id)))
                }
            }
        }
        let mut kept = Vec::new();
        let mut scanned = 0;
        let mut more = false;
        let mut last_read: Option<EventId> = None;
        'read: while scanned < EVENT_SCAN_LIMIT {
            let want = CHUNK.min(EVENT_SCAN_LIMIT - scanned);
            let chunk =
                on_backend!(self, s => s.events_between(tenant, &window, order, want).await)?;
            let exhausted = chunk.len() < want;
            for ev in chunk {
                let id = ev.id.clone();
                match order {
                    IdOrder::Descending => window.before = Some(id.to_string()),
                    IdOrder::Ascending => window.after = Some(id.to_string()),
                }
                if keep(&ev) {
                    if kept.len() == query.limit {
                        more = true;
                        break 'read;
                    }
                    kept.push(ev);
                }
                scanned += 1;
                last_read = Some(id);
            }
            if exhausted {
                break;
            }
        }
        // Stopped by the scan bound with records left: read on from the last one.
        let cut_short = !more && scanned >= EVENT_SCAN_LIMIT;
        let far_end = if more {
            kept.last().map(|e| e.id.clone())
        } else if cut_short {
            last_read
        } else {
            None
        };
        let near_end = kept
            .first()
            .map(|e| e.id.clone())
            .or_else(|| match &query.cursor {
                Some(ListCursor::After(id) | ListCursor::Before(id)) => Some(id.clone()),
                None => None,
            });
        let mut page = EventPage {
            data: kept,
            next: far_end.map(ListCursor::After),
            prev: near_end.map(ListCursor::Before),
            scanned,
        };
        if backwards {
            // Read the other way: turn the page and its two ends around.
            page.data.reverse();
            let before = page.next.take().map(|c| match c {
                ListCursor::After(id) | ListCursor::Before(id) => ListCursor::Before(id),
            });
            let after = page.data.last().map(|e| ListCursor::After(e.id.clone()));
            page.prev = before;
            page.next = after;
        }
        Ok(page)
    }
}
