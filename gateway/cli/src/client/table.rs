//! A tiny column-aligning table printer for human output, and the rendering of
//! single JSON values into cells.

use serde_json::Value;

/// Rows under a header line, columns padded to their widest cell.
#[derive(Debug, Default)]
pub(super) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub(super) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells print empty, control characters are replaced so
    /// API data cannot move the cursor.
    pub(super) fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|c| sanitize(&c)).collect());
    }

    /// Whether no row was added.
    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, each ending in a newline.
    pub(super) fn render(&self) -> String {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut widths = vec![0; columns];
        for line in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in line.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let lines = (!self.header.is_empty())
            .then_some(&self.header)
            .into_iter()
            .chain(&self.rows);
        for line in lines {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = line.get(i).map_or("", String::as_str);
                if i > 0 {
                    text.push_str("  ");
                }
                text.push_str(cell);
                let pad = width - cell.chars().count();
                text.extend(std::iter::repeat_n(' ', pad));
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `name:  value` lines, the values aligned.
pub(super) fn key_values(pairs: &[(&str, String)]) -> String {
    let mut table = Table::default();
    for (k, v) in pairs {
        table.row(vec![format!("{k}:"), v.clone()]);
    }
    table.render()
}

fn sanitize(cell: &str) -> String {
    cell.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A JSON value as a cell: strings bare, `null` as `-`, the rest as compact JSON.
pub(super) fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::String(s) if s.is_empty() => "-".to_owned(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

/// Milliseconds as a short duration: `250ms`, `1.5s`, `2m30s`, `3h2m`.
pub(super) fn millis(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if ms < 60_000 && !ms.is_multiple_of(1000) {
        return format!("{}.{}s", ms / 1000, (ms % 1000) / 100);
    }
    seconds(ms / 1000)
}

/// Whole seconds as the two largest units: `45s`, `5m3s`, `3h2m`, `2d4h`.
pub(super) fn seconds(s: u64) -> String {
    let units = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)];
    let Some(first) = units.iter().position(|(_, size)| s >= *size) else {
        return "0s".to_owned();
    };
    let mut out = String::new();
    let mut rest = s;
    for (name, size) in &units[first..(first + 2).min(units.len())] {
        let n = rest / size;
        rest %= size;
        if n > 0 {
            out.push_str(&n.to_string());
            out.push_str(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = Table::new(&["ID", "STATE"]);
        t.row(vec!["dlv_1".into(), "dead".into()]);
        t.row(vec!["d".into(), "succeeded\x1b[2J".into()]);
        assert_eq!(
            t.render(),
            "ID     STATE\ndlv_1  dead\nd      succeeded [2J\n"
        );
        assert_eq!(
            key_values(&[("id", "a".into()), ("event type", "b".into())]),
            "id:          a\nevent type:  b\n"
        );
    }

    #[test]
    fn cells_and_durations_read_well() {
        assert_eq!(cell(&json!(null)), "-");
        assert_eq!(cell(&json!(["a.*", "b"])), "a.*,b");
        assert_eq!(cell(&json!(503)), "503");
        assert_eq!(millis(100), "100ms");
        assert_eq!(millis(1500), "1.5s");
        assert_eq!(millis(60_000), "1m");
        assert_eq!(seconds(0), "0s");
        assert_eq!(seconds(45), "45s");
        assert_eq!(seconds(303), "5m3s");
        assert_eq!(seconds(3 * 3600 + 2 * 60 + 9), "3h2m");
        assert_eq!(seconds(3 * 3600 + 9), "3h");
        assert_eq!(seconds(2 * 86_400 + 4 * 3600), "2d4h");
    }
}
