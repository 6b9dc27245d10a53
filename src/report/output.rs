//! The output choice of `check`, `plan` and `status`, made once for one cluster and a fleet
//! alike ([`Choice::new`]): which format fits the cluster flags, where `-o FILE` and `--fail-on`
//! apply, what `--quiet` prints; then the [`Printer`] that takes each cluster's outcome as it is
//! audited (reports in input order, JSON Lines and verdict lines streamed, the text summary
//! first), writes the single-cluster formats, the pages (`html`, `openmetrics`) to `-o` or
//! standard output, and a GitHub job's step summary, and returns the run's exit code (the worst
//! row's: the fail decision is [`crate::fleet::audit`]'s).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::fleet::{json_line, section, summary, verdict_line};
use super::html::FleetCluster;
use super::json_schema::{stamped, Report as SchemaReport};
use super::openmetrics::{self, unix_seconds};
use super::style::Paint;
use crate::audit::finding::Severity;
use crate::audit::rules::Rule;
use crate::cluster::source::Source;
use crate::fleet::audit::{exit_code, ReadTime, Report, Row};
use crate::fleet::spool::Spool;
use crate::fleet::Member;
use crate::upgrade::check::CheckReport;

/// The command whose output is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Check,
    Plan,
    Status,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Plan => "plan",
            Command::Status => "status",
        }
    }
}

/// `--format` of `check`, `plan` and `status` (each offers its own subset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Jsonl,
    Sarif,
    Markdown,
    Github,
    Html,
    Openmetrics,
}

/// The output flags as given.
#[derive(Debug, Clone)]
pub struct Flags {
    pub command: Command,
    pub format: Format,
    pub quiet: bool,
    /// `--fail-on` when the command may gate without it (`plan`, `status`); `check`'s always.
    pub fail_on: Option<Severity>,
    pub output: Option<PathBuf>,
    /// Text: every finding with its evidence and sources (`check --verbose`).
    pub verbose: bool,
    /// The cluster flags may name several clusters (`FleetArgs::is_fleet`).
    pub fleet: bool,
}

/// What a `check --format sarif` result points at: the files the user gave.
#[derive(Debug, Clone, Default)]
pub struct SarifInputs {
    pub values: Vec<PathBuf>,
    pub chart: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One cluster, in the command's own format.
    Single(Format),
    /// `status --quiet --fail-on` on one cluster: the gated verdict line.
    QuietGated,
    /// `--quiet`: one verdict line per cluster, streamed.
    Quiet,
    /// One JSON document per cluster and line, streamed.
    JsonLines,
    /// The summary table, then each cluster's text report.
    FleetText,
    /// A fleet's HTML page or OpenMetrics text (`check`).
    Page(Format),
}

/// How the run prints, decided once from the flags.
#[derive(Debug, Clone)]
pub struct Choice {
    flags: Flags,
    shape: Shape,
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The flags ask for an output that does not exist; exit 2 before any cluster is read.
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Write(String),
    /// The one cluster of a single-cluster run could not be read or audited: the run's failure.
    #[error("{0}")]
    Cluster(String),
    #[error(transparent)]
    Rules(#[from] crate::upgrade::UpgradeError),
}

fn usage(text: &str) -> OutputError {
    OutputError::Usage(text.to_string())
}

impl Choice {
    pub fn new(flags: Flags) -> Result<Choice, OutputError> {
        use Format::*;
        let page = matches!(flags.format, Html | Openmetrics);
        if flags.command == Command::Check && flags.output.is_some() && (!page || flags.quiet) {
            return Err(usage("-o/--output writes --format html or openmetrics; the other formats print to standard output"));
        }
        let shape =
            match (flags.quiet, flags.format, flags.fleet) {
                (true, _, false) if flags.command == Command::Status && flags.fail_on.is_some() => Shape::QuietGated,
                (true, _, _) => Shape::Quiet,
                (false, Jsonl, _) | (false, Json, true) => Shape::JsonLines,
                (false, Text, true) => Shape::FleetText,
                (false, Html | Openmetrics, true) if flags.command == Command::Check => Shape::Page(flags.format),
                (false, format, true) => return Err(usage(match flags.command {
                    Command::Check => {
                        "--format sarif, markdown and github report one cluster; a fleet prints text, json or jsonl (or html, openmetrics)"
                    }
                    Command::Plan => "--format markdown and sarif plan one cluster; a fleet prints text, json or jsonl",
                    Command::Status if format == Markdown => "--format markdown shows one cluster; a fleet prints text, json or jsonl",
                    Command::Status => "status prints text, json, jsonl or markdown",
                })),
                (false, format, false) => Shape::Single(format),
            };
        let fleet_shape = matches!(shape, Shape::Quiet | Shape::JsonLines | Shape::FleetText);
        if fleet_shape && flags.fail_on.is_some() {
            match flags.command {
                // A plan's rows are decided at its --fail-on, as check's are.
                Command::Check | Command::Plan => {}
                Command::Status => return Err(usage(
                    "status --fail-on gates one cluster (text, json, markdown or --quiet); for a fleet (or --format jsonl) gate with check",
                )),
            }
        }
        Ok(Choice { flags, shape })
    }

    /// Whether the run reads as a fleet does (shared inputs checked first, a cluster's failure
    /// its row's): every output but a single cluster's own format.
    pub fn reads_as_fleet(&self) -> bool {
        !matches!(self.shape, Shape::Single(_) | Shape::QuietGated)
    }
}

/// The name one cluster goes by on a page, in metrics and on `status`'s gated quiet line: its
/// snapshot file's stem, its context, or `current-context`.
pub fn single_name(member: &Member) -> String {
    match &member.source {
        Source::Snapshot { path } => {
            path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
        }
        Source::Live { context, .. } => context.clone().unwrap_or_else(|| "current-context".into()),
    }
}

/// When a cluster was read, in Unix seconds: a snapshot's capture time, or now for a live read.
fn read_at(read: &ReadTime) -> Option<i64> {
    match read {
        ReadTime::Captured(t) => unix_seconds(t),
        ReadTime::Live => Some(now()),
        ReadTime::Unknown => None,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// A serde-named method (`argocd`) for a label.
fn method_name(method: crate::engine::Method) -> String {
    serde_json::to_value(method).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Writes `text` to `output` (atomically, readable by all: a page to serve, a file a collector
/// reads) or standard output.
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), OutputError> {
    match output {
        Some(path) => {
            chart_source::atomic_write::write_atomically_readable(path, text.as_bytes()).map_err(|e| OutputError::Write(e.to_string()))?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        None => to_stdout(text),
    }
}

fn to_stdout(text: &str) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| OutputError::Write(format!("cannot write the report to standard output: {e}")))
}

fn pretty(value: &impl serde::Serialize) -> Result<String, OutputError> {
    serde_json::to_string_pretty(value).map(|t| t + "\n").map_err(|e| OutputError::Write(e.to_string()))
}

/// A JSON report with its `schemaVersion` first.
fn json_report(report: SchemaReport, value: &impl serde::Serialize) -> Result<String, OutputError> {
    pretty(&stamped(report, value).map_err(|e| OutputError::Write(e.to_string()))?)
}

/// One cluster's outcome, kept for a single cluster's report or a page.
struct Kept {
    row: Row,
    report: Option<Report>,
    read: ReadTime,
}

/// Prints a run's outcomes as the [`Choice`] says.
pub struct Printer<'a> {
    choice: &'a Choice,
    members: &'a [Member],
    paint: Paint,
    sarif: SarifInputs,
    spool: Spool,
    kept: Vec<Option<Kept>>,
    /// The first failure to write the streamed output; later clusters are still audited.
    write_error: Option<String>,
}

impl<'a> Printer<'a> {
    pub fn new(choice: &'a Choice, members: &'a [Member], paint: Paint, sarif: SarifInputs) -> Printer<'a> {
        Printer {
            choice,
            members,
            paint,
            sarif,
            spool: Spool::new(members.len()),
            kept: (0..members.len()).map(|_| None).collect(),
            write_error: None,
        }
    }

    fn command(&self) -> &'static str {
        self.choice.flags.command.name()
    }

    /// Takes the outcome of the cluster at `index` as it is audited.
    pub fn cluster(&mut self, index: usize, row: Row, report: Option<Report>, read: ReadTime) {
        let text = match self.choice.shape {
            Shape::FleetText => Ok(section(&row, report.as_ref(), self.paint)),
            Shape::JsonLines => json_line(self.command(), &self.members[index].source, &row, report.as_ref()).map_err(|e| e.to_string()),
            Shape::Quiet => Ok(verdict_line(&row, self.paint)),
            Shape::Single(_) | Shape::QuietGated | Shape::Page(_) => {
                // A page holds every cluster's check report; the text of a fleet never does.
                let report = match (self.choice.shape, report) {
                    (Shape::Page(_), Some(Report::Check(r))) => Some(Report::Check(r)),
                    (Shape::Page(_), _) => None,
                    (_, report) => report,
                };
                if let Some(slot) = self.kept.get_mut(index) {
                    *slot = Some(Kept { row, report, read });
                }
                return;
            }
        };
        if self.write_error.is_none() {
            let streamed = self.choice.shape != Shape::FleetText;
            let written = text.and_then(|text| {
                self.spool.put(index, text.as_bytes()).map_err(|e| e.to_string())?;
                // Text waits for the summary; the line formats stream.
                if streamed {
                    self.spool.flush_ready(&mut std::io::stdout().lock()).map_err(|e| e.to_string())?;
                }
                Ok(())
            });
            self.write_error = written.err();
        }
    }

    /// Prints what is left (the summary and the text reports, a single cluster's report, a
    /// page) and returns the run's exit code. `rules` is asked for only by SARIF.
    pub fn finish(
        mut self,
        rows: &[Row],
        rules: impl FnOnce() -> Result<Vec<Rule>, crate::upgrade::UpgradeError>,
    ) -> Result<u8, OutputError> {
        let command = self.command();
        let fail_on = self.choice.flags.fail_on.unwrap_or(Severity::Error);
        match self.choice.shape {
            Shape::Single(format) => return self.single(format, rules),
            Shape::QuietGated => {
                let (member, kept) = self.single_kept()?;
                let Some(Report::Status(status)) = &kept.report else { return Ok(kept.row.exit_code) };
                let gated = super::status::Gated { status, fail_on: self.choice.flags.fail_on };
                to_stdout(&format!("{}: {}\n", single_name(member), gated.line()))?;
                return Ok(kept.row.exit_code);
            }
            Shape::Page(format) => {
                let kept: Vec<Kept> = std::mem::take(&mut self.kept).into_iter().flatten().collect();
                emit(self.choice.flags.output.as_deref(), &page(format, &kept, fail_on))?;
            }
            Shape::Quiet | Shape::JsonLines | Shape::FleetText => {
                let written = match self.write_error.take() {
                    Some(e) => Err(e),
                    None => {
                        let head = if self.choice.shape == Shape::FleetText { summary(command, rows, self.paint) } else { String::new() };
                        let mut out = std::io::stdout().lock();
                        out.write_all(head.as_bytes()).and_then(|_| self.spool.finish(&mut out)).map_err(|e| e.to_string())
                    }
                };
                written.map_err(|e| OutputError::Write(format!("cannot write the fleet's report to standard output: {e}")))?;
            }
        }
        if command != "status" {
            super::github::step_summary(|| super::github::fleet_summary(command, rows));
        }
        Ok(exit_code(rows))
    }

    fn single_kept(&mut self) -> Result<(&'a Member, Kept), OutputError> {
        let kept = self.kept.first_mut().and_then(Option::take);
        let (Some(member), Some(kept)) = (self.members.first(), kept) else {
            return Err(OutputError::Cluster("no cluster was audited".into()));
        };
        if kept.report.is_none() {
            return Err(OutputError::Cluster(kept.row.failure.clone().unwrap_or_default()));
        }
        Ok((member, kept))
    }

    /// One cluster in the command's own format.
    fn single(
        mut self,
        format: Format,
        rules: impl FnOnce() -> Result<Vec<Rule>, crate::upgrade::UpgradeError>,
    ) -> Result<u8, OutputError> {
        let (member, kept) = self.single_kept()?;
        let flags = &self.choice.flags;
        let output = flags.output.as_deref();
        match kept.report {
            Some(Report::Check(r)) => {
                let fail_on = r.decision.fail_on;
                let detail = if flags.verbose { super::findings::Detail::Verbose } else { super::findings::Detail::Short };
                match format {
                    Format::Text => to_stdout(&super::check::text_painted(&r, self.paint, detail))?,
                    Format::Json | Format::Jsonl => to_stdout(&json_report(SchemaReport::Check, &r)?)?,
                    Format::Sarif => {
                        let root =
                            std::env::current_dir().map_err(|e| OutputError::Write(format!("cannot read the current directory: {e}")))?;
                        let snapshot = match &member.source {
                            Source::Snapshot { path } => Some(path.clone()),
                            Source::Live { .. } => None,
                        };
                        let files = super::sarif::locate::Files::new(root, snapshot, self.sarif.values.clone(), self.sarif.chart.clone());
                        to_stdout(&pretty(&super::sarif::check_sarif(&r, &rules()?, &files))?)?
                    }
                    Format::Markdown => to_stdout(&super::check::markdown(&r))?,
                    Format::Github => to_stdout(&super::github::check_commands(&r, fail_on))?,
                    Format::Html => emit(output, &super::html::check_page(&single_name(member), &r, fail_on))?,
                    Format::Openmetrics => emit(output, &check_metrics(&single_name(member), &r, fail_on, read_at(&kept.read)))?,
                }
                super::github::step_summary(|| super::github::check_summary(&r, fail_on));
            }
            Some(Report::Plan { plan, notes, inputs }) => {
                match format {
                    Format::Json | Format::Jsonl => {
                        to_stdout(&json_report(SchemaReport::Plan, &super::plan::json(&plan, &notes, &inputs))?)?
                    }
                    Format::Markdown => to_stdout(&super::plan::markdown(&plan, &notes))?,
                    Format::Sarif => {
                        let findings: Vec<_> = plan.steps.iter().flat_map(|s| s.preconditions.iter().cloned()).collect();
                        to_stdout(&pretty(&super::sarif::sarif(&findings, &rules()?))?)?
                    }
                    _ => to_stdout(&super::plan::text(&plan, &notes))?,
                }
                super::github::step_summary(|| super::github::plan_summary(&plan));
            }
            Some(Report::Status(status)) => {
                let text = match (format, flags.fail_on) {
                    (Format::Json | Format::Jsonl, fail_on) => {
                        json_report(SchemaReport::Status, &super::status::Gated { status: &status, fail_on })?
                    }
                    (Format::Markdown, None) => super::status::markdown(&status),
                    (Format::Markdown, Some(level)) => super::status::markdown_gated(&status, level),
                    (_, None) => super::status::text(&status),
                    (_, Some(level)) => super::status::text_gated(&status, level),
                };
                to_stdout(&text)?;
            }
            None => return Err(OutputError::Cluster(kept.row.failure.clone().unwrap_or_default())),
        }
        Ok(kept.row.exit_code)
    }
}

/// `check --format html|openmetrics` over a fleet.
fn page(format: Format, kept: &[Kept], fail_on: Severity) -> String {
    fn check(k: &Kept) -> Option<&CheckReport> {
        match &k.report {
            Some(Report::Check(r)) => Some(r),
            _ => None,
        }
    }
    if format == Format::Html {
        let clusters: Vec<FleetCluster> = kept
            .iter()
            .map(|k| FleetCluster {
                cluster: &k.row.cluster,
                verdict: k.row.verdict.as_str(),
                report: check(k),
                failure: k.row.failure.as_deref(),
            })
            .collect();
        return super::html::fleet_page(&clusters, fail_on);
    }
    let methods: Vec<Option<String>> = kept.iter().map(|k| k.row.method.map(method_name)).collect();
    let clusters: Vec<openmetrics::Cluster> = kept
        .iter()
        .zip(&methods)
        .map(|(k, method)| openmetrics::Cluster {
            cluster: &k.row.cluster,
            verdict: k.row.verdict.as_str(),
            exit_code: k.row.exit_code,
            installed: k.row.installed.as_deref(),
            target: k.row.target.as_deref(),
            method: method.as_deref(),
            findings: check(k).map(|r| r.findings.as_slice()),
            read_at: read_at(&k.read),
        })
        .collect();
    openmetrics::render(&clusters, fail_on)
}

/// `check --format openmetrics` for one cluster.
fn check_metrics(name: &str, r: &CheckReport, fail_on: Severity, read_at: Option<i64>) -> String {
    let verdict = r.decision.verdict.as_str();
    let method = method_name(r.method);
    let cluster = openmetrics::Cluster {
        cluster: name,
        verdict,
        exit_code: u8::from(verdict == "blocked"),
        installed: Some(&r.from),
        target: Some(&r.to),
        method: Some(&method),
        findings: Some(&r.findings),
        read_at,
    };
    openmetrics::render(&[cluster], fail_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(command: Command, format: Format) -> Flags {
        Flags { command, format, quiet: false, fail_on: None, output: None, verbose: false, fleet: false }
    }

    #[test]
    fn one_choice_for_one_cluster_and_a_fleet() {
        let shape = |f: Flags| Choice::new(f).map(|c| c.shape).map_err(|e| e.to_string());
        assert_eq!(shape(flags(Command::Check, Format::Sarif)), Ok(Shape::Single(Format::Sarif)));
        assert_eq!(shape(Flags { fleet: true, ..flags(Command::Check, Format::Json) }), Ok(Shape::JsonLines));
        assert_eq!(shape(flags(Command::Plan, Format::Jsonl)), Ok(Shape::JsonLines), "jsonl is a fleet's line, also for one cluster");
        assert_eq!(shape(Flags { fleet: true, ..flags(Command::Check, Format::Html) }), Ok(Shape::Page(Format::Html)));
        assert!(shape(Flags { fleet: true, ..flags(Command::Plan, Format::Markdown) }).unwrap_err().contains("plan one cluster"));
        let quiet = Flags { quiet: true, fail_on: Some(Severity::Error), ..flags(Command::Status, Format::Text) };
        assert_eq!(shape(quiet.clone()), Ok(Shape::QuietGated));
        assert!(shape(Flags { fleet: true, ..quiet }).unwrap_err().contains("gate with check"));
        let plan_quiet = Flags { quiet: true, fail_on: Some(Severity::Error), ..flags(Command::Plan, Format::Text) };
        assert_eq!(shape(Flags { fleet: true, ..plan_quiet.clone() }), Ok(Shape::Quiet), "a plan gates a fleet's lines");
        assert_eq!(shape(plan_quiet), Ok(Shape::Quiet));
        let out = Flags { output: Some("x".into()), ..flags(Command::Check, Format::Json) };
        assert!(shape(out).unwrap_err().starts_with("-o/--output writes --format html or openmetrics"));
        let single = Choice::new(flags(Command::Check, Format::Text)).unwrap();
        assert!(
            !single.reads_as_fleet() && Choice::new(Flags { quiet: true, ..flags(Command::Check, Format::Text) }).unwrap().reads_as_fleet()
        );
    }

    #[test]
    fn a_single_cluster_goes_by_its_file_stem_or_context() {
        let snapshot = Member { name: "/x/helm-2.2.1.yaml".into(), source: Source::Snapshot { path: "/x/helm-2.2.1.yaml".into() } };
        assert_eq!(single_name(&snapshot), "helm-2.2.1");
        let live = Member { name: "kind-dev".into(), source: Source::Live { kubeconfig: None, context: None } };
        assert_eq!(single_name(&live), "current-context");
    }
}
