//! Channels and tags: the short names an endpoint listens on and an event
//! carries, each a bounded list of bounded names.

use super::error::ApiError;

/// Most channels on one endpoint or one event.
pub(super) const MAX_CHANNELS: usize = 10;
/// Most tags on one event.
pub(super) const MAX_TAGS: usize = 10;
/// Most bytes of one channel or tag.
pub(super) const MAX_NAME_BYTES: usize = 128;

/// What a list holds, for its checks and messages.
#[derive(Debug, Clone, Copy)]
pub(super) enum Label {
    /// `A-Z a-z 0-9 - _ . :` (Svix's channel names).
    Channel,
    /// `A-Z a-z 0-9 - _ . / : #` (Svix's tag names, and `:`).
    Tag,
}

impl Label {
    fn field(self) -> &'static str {
        match self {
            Self::Channel => "channels",
            Self::Tag => "tags",
        }
    }

    fn max(self) -> usize {
        match self {
            Self::Channel => MAX_CHANNELS,
            Self::Tag => MAX_TAGS,
        }
    }

    fn allows(self, c: u8) -> bool {
        let common = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':');
        match self {
            Self::Channel => common,
            Self::Tag => common || matches!(c, b'/' | b'#'),
        }
    }

    fn alphabet(self) -> &'static str {
        match self {
            Self::Channel => "A-Z, a-z, 0-9, -, _, . and :",
            Self::Tag => "A-Z, a-z, 0-9, -, _, ., :, / and #",
        }
    }

    /// `given` checked, with repeats dropped (first kept), in the given order.
    ///
    /// # Errors
    /// 422 `validation_failed` naming the list or the bad name.
    pub(super) fn validate(self, given: Vec<String>) -> Result<Vec<String>, ApiError> {
        let field = self.field();
        let mut kept: Vec<String> = Vec::with_capacity(given.len());
        for (i, name) in given.into_iter().enumerate() {
            if name.is_empty()
                || name.len() > MAX_NAME_BYTES
                || !name.bytes().all(|c| self.allows(c))
            {
                return Err(ApiError::validation(
                    format!("{field}[{i}]"),
                    format!(
                        "each of {field} is 1 to {MAX_NAME_BYTES} of {}",
                        self.alphabet()
                    ),
                ));
            }
            if !kept.contains(&name) {
                kept.push(name);
            }
        }
        if kept.len() > self.max() {
            return Err(ApiError::validation(
                field,
                format!("at most {} {field}", self.max()),
            ));
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(label: Label, given: &[&str]) -> Option<String> {
        let given = given.iter().map(|s| (*s).to_owned()).collect();
        label.validate(given).err().and_then(|e| e.field)
    }

    #[test]
    fn names_are_checked_and_repeats_dropped() {
        let kept = Label::Channel
            .validate(vec!["eu".into(), "acct:42".into(), "eu".into()])
            .unwrap();
        assert_eq!(kept, ["eu", "acct:42"]);
        assert_eq!(
            field(Label::Channel, &["ok", "no/slash"]).as_deref(),
            Some("channels[1]")
        );
        assert_eq!(field(Label::Tag, &["a/b#c"]), None);
        assert_eq!(field(Label::Tag, &[""]).as_deref(), Some("tags[0]"));
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(field(Label::Tag, &[&long]).as_deref(), Some("tags[0]"));
        let many: Vec<String> = (0..=MAX_CHANNELS).map(|i| format!("c{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(field(Label::Channel, &many).as_deref(), Some("channels"));
        assert_eq!(field(Label::Channel, &many[..MAX_CHANNELS]), None);
    }
}
