//! The paging parameters every list that pages both ways shares: `order`
//! (`descending`, the default, or `ascending`) and `cursor` (a page's
//! `next_cursor` or `prev_cursor`: `after:{id}` or `before:{id}`).

use super::error::ApiError;
use crate::store::{ListCursor, ListOrder};

/// How a cursor is written in a page.
pub(super) fn cursor_text<I: AsRef<str>>(c: &ListCursor<I>) -> String {
    match c {
        ListCursor::After(id) => format!("after:{}", id.as_ref()),
        ListCursor::Before(id) => format!("before:{}", id.as_ref()),
    }
}

/// The cursor `text` names.
pub(super) fn cursor_of<I: for<'a> From<&'a str>>(text: &str) -> Result<ListCursor<I>, ApiError> {
    let bad = || {
        ApiError::invalid_field(
            "cursor",
            "cursor must be a page's next_cursor or prev_cursor",
        )
    };
    let (way, id) = text.split_once(':').ok_or_else(bad)?;
    if id.is_empty() || !id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return Err(bad());
    }
    match way {
        "after" => Ok(ListCursor::After(I::from(id))),
        "before" => Ok(ListCursor::Before(I::from(id))),
        _ => Err(bad()),
    }
}

/// The order `order` names; newest first when absent.
pub(super) fn order_of(order: Option<&str>) -> Result<ListOrder, ApiError> {
    match order {
        None | Some("descending") => Ok(ListOrder::NewestFirst),
        Some("ascending") => Ok(ListOrder::OldestFirst),
        Some(_) => Err(ApiError::invalid_field(
            "order",
            "order must be ascending or descending",
        )),
    }
}
