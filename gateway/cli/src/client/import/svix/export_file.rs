//! `--from-file`: a Svix environment export, as Svix's `POST
//! /api/v1/environment/export` writes it (`eventTypes`, `settings`, `version`,
//! `createdAt`, and on newer servers `connectors`), with one addition of
//! hookgate's: an optional `applications` array, each an `ApplicationOut` with
//! an `endpoints` array of `EndpointOut`s, each carrying its `secret`
//! (`whsec_…`) and its `headers` as Svix's headers `GET` answers them
//! (`{"headers": {...}, "sensitive": [...]}`). The keys hookgate has no place
//! for are named in the report as skipped, never dropped unsaid.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::ImportError;
use super::SvixData;
use super::model::{SvixApplication, SvixEventType};
use super::report::Note;
use crate::client::input::read_file;

/// The file as read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportFile {
    event_types: Vec<SvixEventType>,
    #[serde(default)]
    applications: Vec<SvixApplication>,
    /// The export's format version and time: nothing to import.
    #[serde(default, rename = "version")]
    _version: Option<Value>,
    #[serde(default, rename = "createdAt")]
    _created_at: Option<Value>,
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// Reads the export at `path` (`-` for stdin).
///
/// # Errors
/// [`ImportError::Input`] when it cannot be read or is not an export's JSON.
pub(super) fn read(path: &Path) -> Result<SvixData, ImportError> {
    let bytes = read_file(path).map_err(|e| ImportError::Input(e.to_string()))?;
    parse(&bytes).map_err(|reason| {
        ImportError::Input(format!(
            "{} is not a Svix environment export ({reason}); see docs/svix.md, \"Migrating from Svix\", for the file's shape",
            path.display()
        ))
    })
}

/// The export in `bytes`; the error says where it is not one.
fn parse(bytes: &[u8]) -> Result<SvixData, String> {
    let file: ExportFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let skipped = file
        .other
        .iter()
        .filter(|(_, v)| !is_empty(v))
        .map(|(key, value)| skipped_key(key, value))
        .collect();
    Ok(SvixData {
        event_types: file.event_types,
        applications: file.applications,
        skipped,
    })
}

/// Whether a key's value holds nothing to import.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Why a top-level key of the export is not imported.
fn skipped_key(key: &str, value: &Value) -> Note {
    let what = match value.as_array() {
        Some(items) if items.len() == 1 => format!("{key} (1 entry)"),
        Some(items) => format!("{key} ({} entries)", items.len()),
        None => key.to_owned(),
    };
    let reason = match key {
        "settings" => {
            "Svix's environment settings have no place in hookgate: the gateway's own config \
             (docs/operations.md) sets its behaviour"
        }
        "connectors" | "transformationTemplates" => {
            "hookgate runs no transformations: a payload is delivered as it was sent"
        }
        _ => "not a part of a Svix environment export that this import knows",
    };
    Note::new(what, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_read_and_its_other_keys_reported() {
        let export = br#"{
            "version": 1, "createdAt": "2024-01-01T00:00:00Z",
            "eventTypes": [{"name": "a", "description": "A", "deprecated": false}],
            "settings": {"colorPaletteLight": {}}, "connectors": [{"name": "t"}],
            "transformationTemplates": [], "extra": 1
        }"#;
        let data = parse(export).unwrap();
        assert_eq!(data.event_types[0].name, "a");
        assert!(data.applications.is_empty());
        let what: Vec<&str> = data.skipped.iter().map(|n| n.what.as_str()).collect();
        assert_eq!(what, ["connectors (1 entry)", "extra", "settings"]);
        assert!(data.skipped[0].reason.contains("no transformations"));
    }

    #[test]
    fn what_is_not_an_export_says_where() {
        let missing = parse(b"{}").unwrap_err();
        assert!(missing.contains("missing field `eventTypes`"), "{missing}");
        let shape = parse(br#"{"eventTypes": {}}"#).unwrap_err();
        assert!(shape.contains("line 1"), "{shape}");
        let endpoint = br#"{"eventTypes": [], "applications": [{"id": "app_1", "name": "A",
            "endpoints": [{"id": "ep_1"}]}]}"#;
        assert!(parse(endpoint).unwrap_err().contains("missing field `url`"));
        assert!(parse(b"not json").is_err());
    }
}
