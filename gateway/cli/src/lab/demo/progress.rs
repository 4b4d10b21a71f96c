//! The demo's live progress: on a terminal, a table redrawn in place (bars for
//! delivered, retrying, sending, queued and dead, and a strip of attempts per tick
//! where the retry waves show); otherwise one plain line a second.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use super::api::Counts;
use crate::lab::chaos::tally::Snapshot;

/// Width of the bars.
const BAR: usize = 30;
/// Ticks kept in the attempts strip (20 s on a terminal).
const STRIP: usize = 80;
const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// What one redraw shows.
pub(super) struct Frame<'a> {
    pub(super) elapsed: Duration,
    pub(super) counts: &'a Counts,
    pub(super) receiver: &'a Snapshot,
    /// When the receiver came up, or `None` while it still refuses connections.
    pub(super) receiver_up_at: Option<Duration>,
}

/// Draws frames, as a redrawn table or as lines.
pub(super) struct Progress {
    tty: bool,
    total: u64,
    drawn_lines: usize,
    strip: Vec<u64>,
    last_attempts: u64,
    last_line_s: Option<u64>,
}

impl Progress {
    pub(super) fn new(tty: bool, total: u64) -> Self {
        Self {
            tty,
            total,
            drawn_lines: 0,
            strip: Vec::new(),
            last_attempts: 0,
            last_line_s: None,
        }
    }

    /// How often to poll and draw.
    pub(super) fn interval(&self) -> Duration {
        if self.tty {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(1)
        }
    }

    /// Shows one frame: redraws the table, or prints a line if a new second began.
    pub(super) fn show(&mut self, frame: &Frame<'_>) {
        let new_attempts = frame.counts.attempts.saturating_sub(self.last_attempts);
        self.last_attempts = frame.counts.attempts;
        self.strip.push(new_attempts);
        if self.strip.len() > STRIP {
            self.strip.remove(0);
        }
        let text = if self.tty {
            self.table(frame)
        } else {
            let second = frame.elapsed.as_secs();
            if self.last_line_s == Some(second) {
                return;
            }
            self.last_line_s = Some(second);
            format!("{}\n", self.line(frame, new_attempts))
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// One plain line (`--no-tty`).
    fn line(&self, frame: &Frame<'_>, new_attempts: u64) -> String {
        let c = frame.counts;
        let receiver = match frame.receiver_up_at {
            None => "receiver down (refusing connections)".to_owned(),
            Some(_) => format!("receiver answered {}", frame.receiver.mix()),
        };
        format!(
            "[{:>3}s] delivered {}/{}  retrying {}  sending {}  queued {}  dead {}  attempts {} (+{new_attempts})  {receiver}",
            frame.elapsed.as_secs(),
            c.delivered,
            self.total,
            c.retrying,
            c.sending,
            c.queued,
            c.dead,
            c.attempts,
        )
    }

    /// The table, preceded by the escapes that move back over the previous one.
    fn table(&mut self, frame: &Frame<'_>) -> String {
        let c = frame.counts;
        let receiver = match frame.receiver_up_at {
            None => format!("{RED}down{RESET}: refusing connections"),
            Some(at) => format!(
                "up since {:.1} s, answering {}",
                at.as_secs_f64(),
                frame.receiver.mix()
            ),
        };
        let rows = [
            format!(
                "  elapsed    {:>5.1} s   receiver {receiver}",
                frame.elapsed.as_secs_f64()
            ),
            self.bar_row("delivered", c.delivered, GREEN, "succeeded"),
            self.bar_row(
                "retrying",
                c.retrying,
                YELLOW,
                "failed, waiting for their next attempt",
            ),
            self.bar_row("sending", c.sending, CYAN, "attempt in progress"),
            self.bar_row("queued", c.queued, DIM, "not attempted yet"),
            self.bar_row("dead", c.dead, RED, "gave up (the DLQ)"),
            format!(
                "  attempts   {:<5} duplicates at the receiver {}, signature failures {}",
                c.attempts, frame.receiver.duplicates, frame.receiver.signature_failures
            ),
            format!(
                "  per ¼ s    {}  {DIM}← the retry waves{RESET}",
                self.strip_text()
            ),
        ];
        let mut out = String::new();
        if self.drawn_lines > 0 {
            let _ = write!(out, "\x1b[{}F", self.drawn_lines);
        }
        for row in &rows {
            let _ = writeln!(out, "\x1b[2K{row}");
        }
        self.drawn_lines = rows.len();
        out
    }

    fn bar_row(&self, name: &str, n: u64, color: &str, meaning: &str) -> String {
        let filled = n
            .saturating_mul(BAR as u64)
            .checked_div(self.total)
            .map_or(0, |f| usize::try_from(f).unwrap_or(BAR).min(BAR));
        let bar = format!(
            "{color}{}{RESET}{DIM}{}{RESET}",
            "█".repeat(filled),
            "░".repeat(BAR - filled)
        );
        format!("  {name:<10} {bar} {n:>5}  {DIM}{meaning}{RESET}")
    }

    /// Attempts per tick as a strip of block characters, scaled to its peak.
    fn strip_text(&self) -> String {
        let peak = self.strip.iter().copied().max().unwrap_or(0).max(1);
        self.strip
            .iter()
            .map(|&n| {
                if n == 0 {
                    ' '
                } else {
                    let level = (n * (SPARKS.len() as u64 - 1)).div_ceil(peak);
                    SPARKS[usize::try_from(level)
                        .unwrap_or(SPARKS.len() - 1)
                        .min(SPARKS.len() - 1)]
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(counts: &Counts, receiver: &Snapshot, secs: u64) -> String {
        let p = Progress::new(false, 10);
        p.line(
            &Frame {
                elapsed: Duration::from_secs(secs),
                counts,
                receiver,
                receiver_up_at: Some(Duration::from_secs(3)),
            },
            4,
        )
    }

    #[test]
    fn a_plain_line_names_every_state() {
        let counts = Counts {
            delivered: 6,
            retrying: 3,
            dead: 1,
            attempts: 17,
            ..Counts::default()
        };
        let line = frame_of(&counts, &Snapshot::default(), 5);
        assert!(
            line.starts_with("[  5s] delivered 6/10  retrying 3"),
            "{line}"
        );
        assert!(line.contains("dead 1  attempts 17 (+4)"), "{line}");
    }

    #[test]
    fn the_strip_scales_to_its_peak() {
        let mut p = Progress::new(true, 10);
        p.strip = vec![0, 1, 8, 4];
        assert_eq!(p.strip_text(), " ▂█▅");
    }
}
