//! Parsing of config values: socket addresses, byte sizes, durations.

use std::net::SocketAddr;

use serde::Deserialize;
use serde::de::{self, Deserializer};

use super::MIB;

pub(super) fn de_socket_addr<'de, D: Deserializer<'de>>(d: D) -> Result<SocketAddr, D::Error> {
    let text = String::deserialize(d)?;
    let message =
        format!("invalid socket address {text:?} (expected IP:PORT, e.g. 127.0.0.1:8080)");
    text.parse().map_err(|_| de::Error::custom(message))
}

/// Parses `"2048"`, `"10MB"`, `"512MiB"`, `"1 GiB"`: a whole number and an optional unit.
pub(super) fn parse_byte_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit());
    let (digits, unit) = trimmed.split_at(split.unwrap_or(trimmed.len()));
    let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => Some(1),
        "kb" => Some(1_000),
        "mb" => Some(1_000_000),
        "gb" => Some(1_000_000_000),
        "tb" => Some(1_000_000_000_000),
        "kib" => Some(1024),
        "mib" => Some(MIB),
        "gib" => Some(1024 * MIB),
        "tib" => Some(1024 * 1024 * MIB),
        _ => None,
    };
    match (digits.parse::<u64>(), multiplier) {
        (Ok(n), Some(m)) => n
            .checked_mul(m)
            .ok_or_else(|| format!("{text:?} is too large")),
        _ => Err(format!(
            "invalid byte size {text:?}: expected a whole number and an optional unit \
             (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
        )),
    }
}

/// A byte size or a duration as written: a number, or a string to parse.
#[derive(Deserialize)]
#[serde(untagged, expecting = "expected an integer or a string")]
enum IntOrString {
    Int(i64),
    String(String),
}

fn int_or_string<'de, D: Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, D::Error> {
    match IntOrString::deserialize(d)? {
        IntOrString::Int(n) => u64::try_from(n).map_err(|_| format!("must not be negative: {n}")),
        IntOrString::String(text) => parse(&text),
    }
    .map_err(de::Error::custom)
}

pub(super) fn de_byte_size<'de, D: Deserializer<'de>, T: TryFrom<u64>>(
    d: D,
) -> Result<T, D::Error> {
    let n = int_or_string(d, parse_byte_size)?;
    T::try_from(n).map_err(|_| de::Error::custom(format!("{n} bytes is too large")))
}

pub(super) fn de_duration_ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    int_or_string(d, |text| {
        let text = text.trim();
        let ms = match text.parse::<u64>() {
            Ok(ms) => u128::from(ms),
            Err(_) => humantime::parse_duration(text)
                .map_err(|e| format!("invalid duration {text:?}: {e} (e.g. 10000 or \"10s\")"))?
                .as_millis(),
        };
        u64::try_from(ms).map_err(|_| format!("duration {text:?} is too long"))
    })
}

/// A list of durations, each integer ms or a humantime string.
pub(super) fn de_duration_list_ms<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    struct Ms(u64);
    impl<'de> Deserialize<'de> for Ms {
        fn deserialize<D2: Deserializer<'de>>(d: D2) -> Result<Self, D2::Error> {
            de_duration_ms(d).map(Ms)
        }
    }
    Ok(Vec::<Ms>::deserialize(d)?
        .into_iter()
        .map(|m| m.0)
        .collect())
}
