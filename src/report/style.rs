//! Colour in text reports, and when to use it. Renderers take a [`Paint`] and colour a few words
//! (severities, verdicts, headings); with colour off (the default for anything but a terminal) their output
//! is byte for byte the plain text. The decision follows `--color auto|always|never`; `auto`
//! asks `anstream`, which implements the NO_COLOR, CLICOLOR, CLICOLOR_FORCE and TERM=dumb
//! conventions and the terminal check; an explicit `always`/`never` beats the environment (as
//! no-color.org says per-invocation flags should).

use anstyle::{AnsiColor, Style};

use crate::audit::finding::Severity;

/// What a coloured word says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Caution,
    Bad,
    /// Could not be found out at all.
    Broken,
}

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when standard output is a terminal and the environment does not say otherwise
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether text written to standard output gets colour.
    pub fn paint_stdout(self) -> Paint {
        let enabled = match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let stdout = std::io::stdout();
                !matches!(anstream::AutoStream::choice(&stdout), anstream::ColorChoice::Never)
            }
        };
        Paint { enabled }
    }
}

/// Colours words, or leaves them alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paint {
    enabled: bool,
}

impl Paint {
    pub const PLAIN: Paint = Paint { enabled: false };
    pub const COLOUR: Paint = Paint { enabled: true };

    pub fn enabled(self) -> bool {
        self.enabled
    }

    /// `text` (already padded: escapes must not count towards widths) in the severity's colour.
    pub fn severity(self, severity: Severity, text: &str) -> String {
        let colour = match severity {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Cyan,
        };
        self.wrap(Style::new().fg_color(Some(colour.into())).bold(), text)
    }

    /// `text` in the tone's colour.
    pub fn tone(self, tone: Tone, text: &str) -> String {
        let style = match tone {
            Tone::Good => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Tone::Caution => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Tone::Bad => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Tone::Broken => Style::new().fg_color(Some(AnsiColor::Magenta.into())).bold(),
        };
        self.wrap(style, text)
    }

    /// Headings.
    pub fn bold(self, text: &str) -> String {
        self.wrap(Style::new().bold(), text)
    }

    fn wrap(self, style: Style, text: &str) -> String {
        if self.enabled && !text.is_empty() {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_the_text_itself_and_colour_wraps_it() {
        assert_eq!(Paint::PLAIN.severity(Severity::Error, "error  "), "error  ");
        assert_eq!(Paint::PLAIN.tone(Tone::Broken, "failed"), "failed");
        let red = Paint::COLOUR.severity(Severity::Error, "error");
        assert!(red.starts_with("\u{1b}[") && red.contains("error") && red.ends_with("\u{1b}[0m"), "{red:?}");
        assert_eq!(ColorChoice::Never.paint_stdout(), Paint::PLAIN);
        assert_eq!(ColorChoice::Always.paint_stdout(), Paint::COLOUR);
    }
}
