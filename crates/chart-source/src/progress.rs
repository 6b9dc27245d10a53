//! Download progress on stderr, shown only once a download has taken more than a second, so
//! fast pulls stay quiet. On a terminal the line redraws in place; elsewhere it prints a line
//! every few seconds.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const QUIET_PERIOD: Duration = Duration::from_secs(1);

pub struct Progress {
    label: String,
    total: u64,
    started: Instant,
    last_print: Option<Instant>,
    terminal: bool,
    enabled: bool,
}

impl Progress {
    pub fn new(label: impl Into<String>, total: u64, enabled: bool) -> Progress {
        Progress {
            label: label.into(),
            total,
            started: Instant::now(),
            last_print: None,
            terminal: std::io::stderr().is_terminal(),
            enabled,
        }
    }

    pub fn advance(&mut self, done: u64) {
        if !self.enabled || self.started.elapsed() < QUIET_PERIOD {
            return;
        }
        let interval = if self.terminal { Duration::from_millis(200) } else { Duration::from_secs(5) };
        if self.last_print.is_some_and(|t| t.elapsed() < interval) {
            return;
        }
        self.last_print = Some(Instant::now());
        let line = format!("downloading {}: {} / {}", self.label, kib(done), kib(self.total));
        let mut err = std::io::stderr().lock();
        let _ = if self.terminal { write!(err, "\r{line}\x1b[K") } else { writeln!(err, "{line}") };
    }

    /// Ends the redrawn line, if one was drawn.
    pub fn finish(&mut self) {
        if self.enabled && self.terminal && self.last_print.is_some() {
            let _ = writeln!(std::io::stderr());
        }
    }
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}
