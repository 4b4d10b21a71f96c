//! The size and depth bounds, checked in one walk before the filter is read
//! for meaning: the walk descends at most [`MAX_DEPTH`] + 1 levels and stops
//! once [`MAX_BYTES`] are passed, so even a hostile value costs little.

use std::io;

use serde_json::Value;

use super::error::{FilterError, FilterErrorKind, Loc};
use super::{MAX_BYTES, MAX_DEPTH};

/// Checks that `filter` nests at most [`MAX_DEPTH`] objects and arrays deep
/// (the root object is level 1) and is at most [`MAX_BYTES`] as compact JSON.
///
/// # Errors
/// `TooDeep` at the first value too deep, or `TooLarge` at the root; whichever
/// the walk meets first (keys in `serde_json` map order, sorted by default).
pub(super) fn check(filter: &Value) -> Result<(), FilterError> {
    let mut size = Size(0);
    walk(filter, &Loc::Root, 1, &mut size)
}

/// The compact JSON length so far, failing as soon as it passes the bound.
struct Size(usize);

impl Size {
    fn add(&mut self, n: usize) -> Result<(), FilterError> {
        self.0 += n;
        if self.0 > MAX_BYTES {
            return Err(FilterError::new(&Loc::Root, FilterErrorKind::TooLarge));
        }
        Ok(())
    }

    /// Adds a scalar (or key) as serde_json writes it, escapes included.
    fn add_scalar<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), FilterError> {
        let mut count = Count(0);
        // Writing to a counter only fails by our own hand, which we never do.
        let _ = serde_json::to_writer(&mut count, v);
        self.add(count.0)
    }
}

struct Count(usize);

impl io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn walk(v: &Value, at: &Loc<'_>, depth: usize, size: &mut Size) -> Result<(), FilterError> {
    match v {
        Value::Array(items) => {
            if depth > MAX_DEPTH {
                return Err(FilterError::new(at, FilterErrorKind::TooDeep));
            }
            // `[`, `]` and the commas between items.
            size.add(2 + items.len().saturating_sub(1))?;
            for (i, item) in items.iter().enumerate() {
                walk(item, &at.index(i), depth + 1, size)?;
            }
        }
        Value::Object(map) => {
            if depth > MAX_DEPTH {
                return Err(FilterError::new(at, FilterErrorKind::TooDeep));
            }
            // `{`, `}`, the commas, and a colon per key.
            size.add(2 + map.len().saturating_sub(1) + map.len())?;
            for (key, item) in map {
                size.add_scalar(key.as_str())?;
                walk(item, &at.key(key), depth + 1, size)?;
            }
        }
        scalar => size.add_scalar(scalar)?,
    }
    Ok(())
}
