//! The one `--format` every command takes ([`Format`]), which formats each command offers
//! ([`Command::formats`]), and the clap parser that accepts exactly those ([`Formats`]): one
//! enum for the whole tool, so a format means the same thing wherever it is offered and the
//! printer (`report::output`) is the one place that maps it to a renderer.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum Format {
    Text,
    /// One JSON document
    Json,
    /// JSON Lines: one compact document per cluster, with its verdict (also for one cluster)
    Jsonl,
    /// YAML
    Yaml,
    /// SARIF 2.1.0 for code scanning
    Sarif,
    /// Markdown, for a job summary or a pull-request comment
    Markdown,
    /// GitHub workflow commands: each finding as an annotation on the run and pull request
    Github,
    /// One self-contained HTML page
    Html,
    /// OpenMetrics / Prometheus text, for a textfile collector or a Pushgateway
    Openmetrics,
    /// GitLab Code Quality report
    Codequality,
    /// A unified diff per object
    Diff,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Yaml => "yaml",
            Format::Sarif => "sarif",
            Format::Markdown => "markdown",
            Format::Github => "github",
            Format::Html => "html",
            Format::Openmetrics => "openmetrics",
            Format::Codequality => "codequality",
            Format::Diff => "diff",
        }
    }

    /// Pages written whole to `-o FILE` or standard output (a fleet's too).
    pub fn is_page(self) -> bool {
        matches!(self, Format::Html | Format::Openmetrics)
    }
}

/// A command whose output the printer makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Check,
    Plan,
    Status,
    Runbook,
    Gitops,
    Hooks,
    Diff,
    Migrate,
    Rules,
    Versions,
    Pull,
    /// `rbac --cronjob-format`: what each run of the in-cluster CronJob writes.
    CronJob,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Plan => "plan",
            Command::Status => "status",
            Command::Runbook => "runbook",
            Command::Gitops => "gitops",
            Command::Hooks => "hooks",
            Command::Diff => "diff",
            Command::Migrate => "migrate",
            Command::Rules => "rules",
            Command::Versions => "versions",
            Command::Pull => "pull",
            Command::CronJob => "rbac --cronjob",
        }
    }

    /// The formats the command offers, in the order `--help` lists them.
    pub fn formats(self) -> &'static [Format] {
        use Format::*;
        match self {
            Command::Check => &[Text, Json, Sarif, Markdown, Jsonl, Github, Html, Openmetrics],
            Command::Plan => &[Text, Json, Markdown, Sarif, Jsonl],
            Command::Status => &[Text, Json, Jsonl, Markdown],
            Command::Runbook => &[Markdown, Html],
            Command::Gitops => &[Text, Json, Markdown, Sarif, Codequality, Github],
            Command::Hooks => &[Text, Json, Sarif, Markdown],
            Command::Diff => &[Text, Json, Markdown],
            Command::Migrate => &[Yaml, Json, Diff],
            Command::Rules => &[Text, Json, Markdown],
            Command::Versions | Command::Pull => &[Text, Json],
            Command::CronJob => &[Jsonl, Openmetrics],
        }
    }

    /// The clap parser of this command's `--format`.
    pub fn format_parser(self) -> Formats {
        Formats(self.formats())
    }
}

/// Parses `--format` into a [`Format`] the command offers (and lists only those in help and
/// completions).
#[derive(Debug, Clone, Copy)]
pub struct Formats(pub &'static [Format]);

impl TypedValueParser for Formats {
    type Value = Format;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<Format, clap::Error> {
        let names = self.0.iter().map(|f| f.name());
        let name = clap::builder::PossibleValuesParser::new(names).parse_ref(cmd, arg, value)?;
        match self.0.iter().find(|f| f.name() == name) {
            Some(format) => Ok(*format),
            None => Err(clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd)),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().filter_map(|f| f.to_possible_value())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_named_as_clap_names_it_and_offered_somewhere() {
        for f in Format::value_variants() {
            assert_eq!(f.to_possible_value().map(|p| p.get_name().to_string()).as_deref(), Some(f.name()));
        }
        let commands = [
            Command::Check,
            Command::Plan,
            Command::Status,
            Command::Runbook,
            Command::Gitops,
            Command::Hooks,
            Command::Diff,
            Command::Migrate,
            Command::Rules,
            Command::Versions,
            Command::Pull,
            Command::CronJob,
        ];
        for f in Format::value_variants() {
            assert!(commands.iter().any(|c| c.formats().contains(f)), "{} is offered by no command", f.name());
        }
    }

    #[test]
    fn a_command_takes_only_its_formats() {
        let cmd = clap::Command::new("t").arg(clap::Arg::new("format").long("format").value_parser(Command::Diff.format_parser()));
        let parse = |v: &str| cmd.clone().try_get_matches_from(["t", "--format", v]).map(|m| *m.get_one::<Format>("format").unwrap());
        assert_eq!(parse("markdown").unwrap(), Format::Markdown);
        let err = parse("sarif").unwrap_err().to_string();
        assert!(err.contains("invalid value 'sarif'") && err.contains("[possible values: text, json, markdown]"), "{err}");
    }
}
