//! Which exposition format `GET /metrics` answers in, chosen from `Accept`, and
//! the classic Prometheus text (0.0.4) made from the OpenMetrics text that
//! `prometheus-client` encodes.
//!
//! Prometheus asks for OpenMetrics first and gets it. Anything that does not name
//! OpenMetrics (no `Accept`, `*/*`, `text/plain`, an older scraper) gets the classic
//! text, which is what such clients have always understood. A response always
//! declares the format it is in.

use std::collections::HashMap;

/// The formats `/metrics` can send, in order of preference when a client accepts
/// several equally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Exposition {
    /// OpenMetrics 1.0.0: what `prometheus-client` encodes.
    OpenMetrics,
    /// OpenMetrics 0.0.1, which Prometheus also names; for what hookgate exports
    /// (no exemplars, no UTF-8 names) the text is the same as 1.0.0's.
    OpenMetricsDraft,
    /// The classic Prometheus text format, version 0.0.4.
    Text,
}

impl Exposition {
    const ALL: [Self; 3] = [Self::OpenMetrics, Self::OpenMetricsDraft, Self::Text];

    /// The `Content-Type` that declares this format.
    pub(super) fn content_type(self) -> &'static str {
        match self {
            Self::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Self::OpenMetricsDraft => "application/openmetrics-text; version=0.0.1; charset=utf-8",
            Self::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    fn media_type(self) -> (&'static str, &'static str) {
        match self {
            Self::OpenMetrics => ("application", "openmetrics-text"),
            Self::OpenMetricsDraft => ("application", "openmetrics-text"),
            Self::Text => ("text", "plain"),
        }
    }

    fn version(self) -> &'static str {
        match self {
            Self::OpenMetrics => "1.0.0",
            Self::OpenMetricsDraft => "0.0.1",
            Self::Text => "0.0.4",
        }
    }

    /// How well `range` matches this format: `None` if it does not, else the
    /// range's specificity (a more specific range decides the quality, RFC 9110
    /// §12.5.1). OpenMetrics is sent only to a client that names it, so wildcards
    /// never match it.
    fn matched_by(self, range: &MediaRange<'_>) -> Option<u8> {
        let (ty, sub) = self.media_type();
        let mut specificity =
            if range.ty.eq_ignore_ascii_case(ty) && range.sub.eq_ignore_ascii_case(sub) {
                2
            } else if self != Self::Text || range.sub != "*" {
                return None;
            } else if range.ty == "*" {
                0
            } else if range.ty.eq_ignore_ascii_case(ty) {
                1
            } else {
                return None;
            };
        if let Some(v) = range.version {
            if v != self.version() {
                return None;
            }
            specificity += 1;
        }
        Some(specificity)
    }
}

/// One element of an `Accept` header.
struct MediaRange<'a> {
    ty: &'a str,
    sub: &'a str,
    version: Option<&'a str>,
    /// Quality in thousandths, 0..=1000.
    q: u16,
}

/// Parses one `type/subtype; param=value...` element; `None` if malformed.
fn media_range(element: &str) -> Option<MediaRange<'_>> {
    let mut parts = element.split(';');
    let (ty, sub) = parts.next()?.trim().split_once('/')?;
    let (ty, sub) = (ty.trim(), sub.trim());
    if ty.is_empty() || sub.is_empty() {
        return None;
    }
    let mut range = MediaRange {
        ty,
        sub,
        version: None,
        q: 1000,
    };
    for param in parts {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        match name.trim() {
            n if n.eq_ignore_ascii_case("q") => range.q = quality(value)?,
            n if n.eq_ignore_ascii_case("version") => range.version = Some(value),
            _ => {}
        }
    }
    Some(range)
}

/// A `q` value (`0`, `0.5`, `1.000`) in thousandths.
fn quality(value: &str) -> Option<u16> {
    let q: f32 = value.parse().ok()?;
    // At most three decimals (RFC 9110 §12.4.2): thousandths lose nothing.
    (0.0..=1.0)
        .contains(&q)
        .then(|| (q * 1000.0).round() as u16)
}

/// The format to answer a request with `accept` in: the acceptable format of
/// highest quality, ties going to the earlier in [`Exposition::ALL`]. Without
/// `Accept`, or when nothing offered is acceptable, the classic text: a scraper
/// is better served by the format every one of them reads than by a 406.
pub(super) fn negotiate(accept: Option<&str>) -> Exposition {
    let Some(accept) = accept else {
        return Exposition::Text;
    };
    let ranges: Vec<MediaRange<'_>> = accept.split(',').filter_map(media_range).collect();
    let quality_of = |offer: Exposition| {
        ranges
            .iter()
            .filter_map(|r| offer.matched_by(r).map(|s| (s, r.q)))
            .max_by_key(|&(specificity, _)| specificity)
            .map_or(0, |(_, q)| q)
    };
    let mut best = (Exposition::Text, 0);
    for offer in Exposition::ALL {
        let q = quality_of(offer);
        if q > best.1 {
            best = (offer, q);
        }
    }
    best.0
}

/// The classic text format (0.0.4) of an OpenMetrics exposition encoded by
/// `prometheus-client`.
///
/// For the metric types hookgate registers the samples are the same in both; what
/// differs is metadata. A counter family is named `x` in OpenMetrics and `x_total`
/// (its sample's name) in 0.0.4, an info family `x` becomes the gauge `x_info`,
/// `unknown` is `untyped`, and 0.0.4 has no `# UNIT`, no exemplars and no `# EOF`.
/// Without the renaming a 0.0.4 parser files every counter sample under a family
/// of its own, untyped, and the counter itself comes out empty.
pub(super) fn to_classic_text(openmetrics: &str) -> String {
    // Family name -> (suffix of its 0.0.4 name, its 0.0.4 type).
    let mut renamed: HashMap<&str, (&str, &str)> = HashMap::new();
    for line in openmetrics.lines() {
        let Some((name, kind)) = line.strip_prefix("# TYPE ").and_then(|r| r.split_once(' '))
        else {
            continue;
        };
        match kind {
            "counter" => renamed.insert(name, ("_total", "counter")),
            "info" => renamed.insert(name, ("_info", "gauge")),
            "unknown" => renamed.insert(name, ("", "untyped")),
            _ => None,
        };
    }
    let mut out = String::with_capacity(openmetrics.len() + 8 * renamed.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let descriptor = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match descriptor {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let (suffix, kind) = renamed.get(name).copied().unwrap_or(("", ""));
                let tail = if prefix == "# TYPE " && !kind.is_empty() {
                    kind
                } else {
                    tail
                };
                out.push_str(prefix);
                out.push_str(name);
                out.push_str(suffix);
                out.push(' ');
                out.push_str(tail);
            }
            // A sample; an exemplar (` # {...} v`) has no place in 0.0.4. hookgate's
            // label values never contain ` # {`.
            None => out.push_str(line.split_once(" # {").map_or(line, |(sample, _)| sample)),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
