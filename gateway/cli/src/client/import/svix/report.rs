//! What `hookgate import svix` did (or, with `--dry-run`, would do): each
//! record's outcome (created, updated with the fields that changed, unchanged,
//! skipped or failed, with the reason), the parts of it not imported and why,
//! and the parts of the source skipped whole; printed for people, or as JSON
//! with `--json`.

use serde_json::{Map, Value, json};

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    EventType,
    Application,
    Endpoint,
}

impl Kind {
    const ALL: [Self; 3] = [Self::EventType, Self::Application, Self::Endpoint];

    /// Its key in the JSON report.
    fn key(self) -> &'static str {
        match self {
            Self::EventType => "event_types",
            Self::Application => "applications",
            Self::Endpoint => "endpoints",
        }
    }

    /// Its name for people, plural.
    fn title(self) -> &'static str {
        match self {
            Self::EventType => "event types",
            Self::Application => "applications",
            Self::Endpoint => "endpoints",
        }
    }
}

/// What happened to one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    Created,
    /// The fields that differed, in hookgate's names.
    Updated(Vec<&'static str>),
    Unchanged,
    /// Not written, and why.
    Skipped(String),
    /// The gateway refused it; its message.
    Failed(String),
}

impl Outcome {
    fn key(&self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated(_) => "updated",
            Self::Unchanged => "unchanged",
            Self::Skipped(_) => "skipped",
            Self::Failed(_) => "failed",
        }
    }
}

/// A part of the source not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Note {
    pub(super) what: String,
    pub(super) reason: String,
}

impl Note {
    pub(super) fn new(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// One record of the source and its outcome.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub(super) kind: Kind,
    /// How people read it: `order.paid`, `app_1 → tenant app_1`.
    pub(super) label: String,
    /// How the JSON report names it (source and hookgate ids).
    pub(super) ids: Map<String, Value>,
    pub(super) outcome: Outcome,
    /// The parts of it not imported.
    pub(super) notes: Vec<Note>,
}

/// Every outcome of one run.
#[derive(Debug, Default)]
pub(super) struct Report {
    pub(super) dry_run: bool,
    /// Where the records came from: the file, or the server's URL.
    pub(super) source: String,
    pub(super) items: Vec<Item>,
    /// Parts of the source skipped whole (an export's `settings`).
    pub(super) skipped: Vec<Note>,
}

impl Report {
    /// How many records the gateway refused.
    pub(super) fn failures(&self) -> usize {
        let failed = |i: &&Item| matches!(i.outcome, Outcome::Failed(_));
        self.items.iter().filter(failed).count()
    }

    fn count(&self, kind: Kind, outcome: &str) -> usize {
        let of = |i: &&Item| i.kind == kind && i.outcome.key() == outcome;
        self.items.iter().filter(of).count()
    }

    /// The report as `--json` prints it.
    pub(super) fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("dry_run".into(), json!(self.dry_run));
        out.insert("source".into(), json!(self.source));
        let mut summary = Map::new();
        for kind in Kind::ALL {
            let counts: Map<String, Value> = OUTCOMES
                .iter()
                .map(|o| ((*o).to_owned(), json!(self.count(kind, o))))
                .collect();
            summary.insert(kind.key().into(), Value::Object(counts));
        }
        out.insert("summary".into(), Value::Object(summary));
        for kind in Kind::ALL {
            let items: Vec<Value> = self
                .items
                .iter()
                .filter(|i| i.kind == kind)
                .map(item_json)
                .collect();
            out.insert(kind.key().into(), Value::Array(items));
        }
        out.insert("skipped".into(), notes_json(&self.skipped));
        Value::Object(out)
    }

    /// The report for people: a summary line per kind, then a line per record.
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        if self.dry_run {
            out.push_str("dry run: nothing was written; an import would do this\n");
        }
        out.push_str(&format!("source: {}\n", clean(&self.source)));
        for kind in Kind::ALL {
            let counts: Vec<String> = OUTCOMES
                .iter()
                .map(|o| format!("{} {}", self.count(kind, o), self.word(o)))
                .collect();
            out.push_str(&format!("{}: {}\n", kind.title(), counts.join(", ")));
            for item in self.items.iter().filter(|i| i.kind == kind) {
                out.push_str(&format!("  {}\n", self.line(item)));
                for note in &item.notes {
                    out.push_str(&format!(
                        "      not imported: {}: {}\n",
                        clean(&note.what),
                        clean(&note.reason)
                    ));
                }
            }
        }
        if !self.skipped.is_empty() {
            out.push_str("not imported from the source:\n");
            for note in &self.skipped {
                out.push_str(&format!(
                    "  {}: {}\n",
                    clean(&note.what),
                    clean(&note.reason)
                ));
            }
        }
        out
    }

    /// An outcome's word in the summary line.
    fn word(&self, outcome: &str) -> &'static str {
        match (self.dry_run, outcome) {
            (true, "created") => "to create",
            (true, "updated") => "to update",
            (_, "created") => "created",
            (_, "updated") => "updated",
            (_, "unchanged") => "unchanged",
            (_, "skipped") => "skipped",
            _ => "failed",
        }
    }

    fn line(&self, item: &Item) -> String {
        let label = clean(&item.label);
        match (&item.outcome, self.dry_run) {
            (Outcome::Created, false) => format!("created {label}"),
            (Outcome::Created, true) => format!("would create {label}"),
            (Outcome::Updated(fields), false) => format!("updated {label} ({})", fields.join(", ")),
            (Outcome::Updated(fields), true) => {
                format!("would update {label} ({})", fields.join(", "))
            }
            (Outcome::Unchanged, _) => format!("unchanged {label}"),
            (Outcome::Skipped(why), _) => format!("skipped {label}: {}", clean(why)),
            (Outcome::Failed(why), _) => format!("failed {label}: {}", clean(why)),
        }
    }
}

/// The outcomes, in the order the summary counts them.
const OUTCOMES: [&str; 5] = ["created", "updated", "unchanged", "skipped", "failed"];

fn item_json(item: &Item) -> Value {
    let mut out = item.ids.clone();
    out.insert("outcome".into(), json!(item.outcome.key()));
    match &item.outcome {
        Outcome::Updated(fields) => {
            out.insert("changed".into(), json!(fields));
        }
        Outcome::Skipped(why) | Outcome::Failed(why) => {
            out.insert("reason".into(), json!(why));
        }
        Outcome::Created | Outcome::Unchanged => {}
    }
    out.insert("not_imported".into(), notes_json(&item.notes));
    Value::Object(out)
}

fn notes_json(notes: &[Note]) -> Value {
    let all = notes
        .iter()
        .map(|n| json!({"what": n.what, "reason": n.reason}));
    Value::Array(all.collect())
}

/// Text from the source with control characters replaced, so it cannot move
/// the terminal's cursor.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: Kind, label: &str, outcome: Outcome) -> Item {
        Item {
            kind,
            label: label.into(),
            ids: Map::new(),
            outcome,
            notes: vec![Note::new("featureFlag", "no flags")],
        }
    }

    #[test]
    fn counts_lines_and_json_agree() {
        let mut report = Report {
            dry_run: true,
            source: "file x.json".into(),
            ..Report::default()
        };
        report
            .items
            .push(item(Kind::EventType, "a", Outcome::Created));
        report.items.push(item(
            Kind::Endpoint,
            "e\u{1b}",
            Outcome::Updated(vec!["url", "secret"]),
        ));
        report
            .items
            .push(item(Kind::Endpoint, "f", Outcome::Failed("no".into())));
        report.skipped.push(Note::new("settings", "none"));
        let text = report.render();
        assert!(
            text.contains("event types: 1 to create, 0 to update,"),
            "{text}"
        );
        assert!(text.contains("  would update e  (url, secret)\n"), "{text}");
        assert!(
            text.contains("      not imported: featureFlag: no flags\n"),
            "{text}"
        );
        assert!(text.ends_with("not imported from the source:\n  settings: none\n"));
        let json = report.to_json();
        assert_eq!(json["summary"]["endpoints"]["failed"], 1);
        assert_eq!(json["endpoints"][0]["changed"], json!(["url", "secret"]));
        assert_eq!(json["endpoints"][1]["reason"], "no");
        assert_eq!(report.failures(), 1);
    }
}
