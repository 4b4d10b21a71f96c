//! Arguments that carry data: `JSON`, `@FILE` or `@-` (stdin), files read whole,
//! and times given as RFC 3339 or as a duration ago. Anything unreadable, not JSON
//! or not a time is a usage error (exit 2).

use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use super::error::CliError;

/// Reads a file whole, or stdin for `-`.
///
/// # Errors
/// [`CliError::Usage`] naming the file when it cannot be read.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    let result = if path == Path::new("-") {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map(|_| buf)
    } else {
        std::fs::read(path)
    };
    result.map_err(|e| {
        let name = if path == Path::new("-") {
            "stdin".to_owned()
        } else {
            path.display().to_string()
        };
        CliError::Usage(format!("cannot read {name}: {e}"))
    })
}

/// The JSON given to `flag`, inline or as `@FILE`, kept byte for byte (only
/// surrounding whitespace is dropped) so the gateway stores exactly what was written.
///
/// # Errors
/// [`CliError::Usage`] when the file cannot be read or the text is not JSON.
pub(super) fn json_arg(flag: &str, arg: &str) -> Result<Box<RawValue>, CliError> {
    let text = match arg.strip_prefix('@') {
        Some(path) => {
            let bytes = read_file(Path::new(path))?;
            String::from_utf8(bytes)
                .map_err(|_| CliError::Usage(format!("{flag} {arg}: the file is not UTF-8 text")))?
        }
        None => arg.to_owned(),
    };
    serde_json::from_str::<Box<RawValue>>(text.trim()).map_err(|e| {
        CliError::Usage(format!(
            "{flag} is not valid JSON ({e}); give JSON inline or @FILE"
        ))
    })
}

/// Like [`json_arg`], parsed into a value (for fields the CLI builds on).
///
/// # Errors
/// As [`json_arg`].
pub(super) fn json_value_arg(flag: &str, arg: &str) -> Result<serde_json::Value, CliError> {
    let raw = json_arg(flag, arg)?;
    serde_json::from_str(raw.get())
        .map_err(|e| CliError::Usage(format!("{flag} is not valid JSON ({e})")))
}

/// A JSON merge-patch map from repeated `NAME=VALUE` arguments of `flag`, with
/// each of `removed` set to `null`; `None` when neither names anything.
///
/// # Errors
/// [`CliError::Usage`] for an argument without `=`.
pub(super) fn pairs_arg(
    flag: &str,
    given: &[String],
    removed: &[String],
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, CliError> {
    let mut map = serde_json::Map::new();
    for pair in given {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(CliError::Usage(format!(
                "{flag} takes NAME=VALUE, not {pair:?}"
            )));
        };
        map.insert(name.trim().to_owned(), value.into());
    }
    for name in removed {
        map.insert(name.clone(), serde_json::Value::Null);
    }
    Ok((!map.is_empty()).then_some(map))
}

/// What a time argument's `--help` says it takes.
pub(super) const TIME_FORMS: &str = "an RFC 3339 time (2024-05-01T12:00:00Z) or a duration \
    meaning that long ago on this machine's clock (90s, 30m, 2h, 1d12h)";

/// A time argument (`--since`, `--until`), as clap's value parser: an RFC 3339
/// time is passed on as written, for the gateway to check; a duration such as `2h`
/// becomes the RFC 3339 time that long before now.
///
/// # Errors
/// A message for clap (exit 2) when the text is neither.
pub(super) fn time_arg(arg: &str) -> Result<String, String> {
    // Every RFC 3339 time starts with its four-digit year and a dash, and no
    // duration can (its digits need a unit), so the two readings never overlap.
    let bytes = arg.as_bytes();
    if bytes.len() > 4 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-' {
        return Ok(arg.to_owned());
    }
    let ago = humantime::parse_duration(arg).map_err(|e| format!("not {TIME_FORMS} ({e})"))?;
    SystemTime::now()
        .checked_sub(ago)
        .filter(|at| *at >= UNIX_EPOCH)
        .map(|at| humantime::format_rfc3339_millis(at).to_string())
        .ok_or_else(|| format!("{arg} ago is before 1970"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_as_written_or_a_duration_ago() {
        let given = "2024-05-01T12:00:00+02:00";
        assert_eq!(time_arg(given).unwrap(), given);
        let ago = time_arg("2h").unwrap();
        let at = humantime::parse_rfc3339_weak(&ago).unwrap();
        let age = SystemTime::now().duration_since(at).unwrap().as_secs();
        assert!((7200..7260).contains(&age), "{ago} is {age}s ago");
        for bad in ["yesterday", "7200", "2024", "", "-2h"] {
            let err = time_arg(bad).unwrap_err();
            assert!(err.contains("RFC 3339"), "{bad}: {err}");
        }
        assert!(time_arg("100000y").unwrap_err().contains("before 1970"));
    }

    #[test]
    fn inline_and_file_json_keep_their_bytes() {
        let raw = json_arg("--data", " {\"b\":1,  \"a\":2}\n").unwrap();
        assert_eq!(raw.get(), "{\"b\":1,  \"a\":2}");
        let dir = std::env::temp_dir().join(format!("hookgate-cli-input-{}", std::process::id()));
        std::fs::write(&dir, "[1, 2]\n").unwrap();
        let raw = json_arg("--data", &format!("@{}", dir.display())).unwrap();
        assert_eq!(raw.get(), "[1, 2]");
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn bad_json_and_missing_files_are_usage_errors() {
        for arg in ["{oops", "@/nonexistent/hookgate-file.json", ""] {
            let err = json_arg("--data", arg).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{err}");
        }
        assert!(
            json_arg("--data", "@/nonexistent/x.json")
                .unwrap_err()
                .to_string()
                .contains("/nonexistent/x.json")
        );
    }
}
