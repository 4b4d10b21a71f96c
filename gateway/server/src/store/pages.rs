//! Pages of a list read in id order: in either order, paged both ways from a
//! cursor, within a time range, kept by the caller's filter, reading a bounded
//! number of records per page however few the filter keeps.
//!
//! Ids are time-ordered (a type prefix and a ULID), so a time range is an id
//! range; a backend only reads records between two ids, and the page is made
//! here, the same for every list and both backends.

use super::StoreError;

/// Most records one page reads, however few its filter keeps: ten pages of the
/// largest size. A page that stops there answers what it found and a cursor
/// to read on.
pub(crate) const PAGE_SCAN_LIMIT: usize = 2_500;

/// Records read from a backend at a time while a page fills.
const CHUNK: usize = 250;

/// The order of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    #[default]
    NewestFirst,
    OldestFirst,
}

/// Where a page starts: past a record (the next page) or short of it (the
/// page before), in the list's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListCursor<I> {
    After(I),
    Before(I),
}

impl<I> ListCursor<I> {
    /// The record the cursor names.
    pub fn id(&self) -> &I {
        match self {
            Self::After(id) | Self::Before(id) => id,
        }
    }
}

/// What a page reads.
#[derive(Debug, Clone)]
pub struct PageQuery<I> {
    pub order: ListOrder,
    pub cursor: Option<ListCursor<I>>,
    /// Created at or after, Unix ms.
    pub since_ms: Option<u64>,
    /// Created before, Unix ms.
    pub until_ms: Option<u64>,
    pub limit: usize,
}

impl<I> Default for PageQuery<I> {
    fn default() -> Self {
        Self {
            order: ListOrder::default(),
            cursor: None,
            since_ms: None,
            until_ms: None,
            limit: 0,
        }
    }
}

/// One page, in the list's order.
#[derive(Debug)]
pub struct Page<T: Paged> {
    pub data: Vec<T>,
    /// Where the next page starts, if more may follow.
    pub next: Option<ListCursor<T::Id>>,
    /// Where the page before starts (also: where to look for records newer
    /// than a newest-first page's first), if the page has a start.
    pub prev: Option<ListCursor<T::Id>>,
    /// How many stored records the page read.
    pub scanned: usize,
}

/// A record listed in pages: its id orders it.
pub trait Paged {
    type Id: Clone + AsRef<str>;
    /// The id prefix of its kind (`evt_`).
    const PREFIX: &'static str;
    fn page_id(&self) -> &Self::Id;
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

/// Makes one page: `read` answers up to its `usize` records strictly inside
/// the window, in the order asked; `keep` is the caller's filter.
///
/// # Errors
/// What `read` answers.
pub(crate) async fn read_page<T: Paged, F>(
    query: &PageQuery<T::Id>,
    mut read: impl FnMut(IdWindow, IdOrder, usize) -> F,
    keep: impl Fn(&T) -> bool,
) -> Result<Page<T>, StoreError>
where
    F: Future<Output = Result<Vec<T>, StoreError>>,
{
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
            let first = crate::ids::first_id_at(T::PREFIX, ms);
            first[..first.len() - 1].to_owned()
        }),
        before: query
            .until_ms
            .map(|ms| crate::ids::first_id_at(T::PREFIX, ms)),
    };
    if let Some(cursor) = &query.cursor {
        let id = cursor.id().as_ref().to_owned();
        match order {
            IdOrder::Descending => {
                window.before = Some(window.before.map_or(id.clone(), |b| b.min(id)));
            }
            IdOrder::Ascending => {
                window.after = Some(window.after.map_or(id.clone(), |a| a.max(id)));
            }
        }
    }
    let mut kept = Vec::new();
    let mut scanned = 0;
    let mut more = false;
    let mut last_read: Option<T::Id> = None;
    'read: while scanned < PAGE_SCAN_LIMIT {
        let want = CHUNK.min(PAGE_SCAN_LIMIT - scanned);
        let chunk = read(window.clone(), order, want).await?;
        let exhausted = chunk.len() < want;
        for item in chunk {
            let id = item.page_id().clone();
            match order {
                IdOrder::Descending => window.before = Some(id.as_ref().to_owned()),
                IdOrder::Ascending => window.after = Some(id.as_ref().to_owned()),
            }
            if keep(&item) {
                if kept.len() == query.limit {
                    more = true;
                    break 'read;
                }
                kept.push(item);
            }
            scanned += 1;
            last_read = Some(id);
        }
        if exhausted {
            break;
        }
    }
    // Stopped by the scan bound with records left: read on from the last one.
    let cut_short = !more && scanned >= PAGE_SCAN_LIMIT;
    let far_end = if more {
        kept.last().map(|e| e.page_id().clone())
    } else if cut_short {
        last_read
    } else {
        None
    };
    let near_end = kept
        .first()
        .map(|e| e.page_id().clone())
        .or_else(|| query.cursor.as_ref().map(|c| c.id().clone()));
    let mut page = Page {
        data: kept,
        next: far_end.map(ListCursor::After),
        prev: near_end.map(ListCursor::Before),
        scanned,
    };
    if backwards {
        // Read the other way: turn the page and its two ends around.
        page.data.reverse();
        let before = page.next.take().map(|c| ListCursor::Before(c.id().clone()));
        let after = page
            .data
            .last()
            .map(|e| ListCursor::After(e.page_id().clone()));
        page.prev = before;
        page.next = after;
    }
    Ok(page)
}
