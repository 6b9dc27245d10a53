//! The one printer. The output choice of every command is made once ([`Choice::new`]): which
//! format fits the flags (for `check`, `plan` and `status`: one cluster or a fleet), where `-o
//! FILE` and `--fail-on` apply, what `--quiet` prints. A command's report ([`Document`]) is then
//! printed by [`print`]: rendered in the chosen format, written to `-o` (atomically, its mode
//! the document's) or standard output, its account to standard error, its step summary to a
//! GitHub job's, and the exit code from its decision. A run over clusters streams through the
//! [`Printer`] instead: each cluster's outcome as it is audited (reports in input order, JSON
//! Lines and verdict lines streamed, the text summary first), one cluster's report printed as a
//! [`Document`], a fleet's pages written whole, and the run's exit code the worst row's (the
//! fail decision is each report's, [`crate::audit::verdict::Decision`]).

use std::io::Write;
use std::path::{Path, PathBuf};

pub use super::document::OutputError;
use super::document::{Context, Document};
use super::fleet::{json_line, section, summary, verdict_line};
use super::format::{Command, Format};
use super::html::FleetCluster;
use super::openmetrics::{self, unix_seconds};
use crate::audit::finding::Severity;
use crate::cluster::source::Source;
use crate::fleet::audit::{exit_code, ReadTime, Report, Row};
use crate::fleet::spool::Spool;
use crate::fleet::Member;
use crate::upgrade::check::CheckReport;

/// The output flags as given.
#[derive(Debug, Clone)]
pub struct Flags {
    pub command: Command,
    pub format: Format,
    pub quiet: bool,
    /// `--fail-on` when the command may gate without it (`plan`, `status`, `hooks`); `check`'s
    /// and `gitops`'s always.
    pub fail_on: Option<Severity>,
    pub output: Option<PathBuf>,
    /// Text: every finding with its evidence and sources (`--verbose`).
    pub verbose: bool,
    /// The cluster flags may name several clusters (`FleetArgs::is_fleet`).
    pub fleet: bool,
}

impl Flags {
    /// The flags of a command that prints one document in `format`.
    pub fn document(command: Command, format: Format) -> Flags {
        Flags { command, format, quiet: false, fail_on: None, output: None, verbose: false, fleet: false }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One cluster (or one document), in the command's own format.
    Single(Format),
    /// `--quiet` on one document (`hooks`, `gitops`) or `status --quiet --fail-on` on one
    /// cluster: its verdict line.
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

fn usage(text: &str) -> OutputError {
    OutputError::Usage(text.to_string())
}

/// Whether the command reads clusters as `check`, `plan` and `status` do (one or a fleet).
fn reads_clusters(command: Command) -> bool {
    matches!(command, Command::Check | Command::Plan | Command::Status)
}

impl Choice {
    pub fn new(flags: Flags) -> Result<Choice, OutputError> {
        use Format::*;
        if !flags.command.formats().contains(&flags.format) {
            return Err(super::document::unoffered(flags.command, flags.format));
        }
        if flags.command == Command::Check && flags.output.is_some() && (!flags.format.is_page() || flags.quiet) {
            return Err(usage("-o/--output writes --format html or openmetrics; the other formats print to standard output"));
        }
        if !reads_clusters(flags.command) {
            let shape = if flags.quiet { Shape::QuietGated } else { Shape::Single(flags.format) };
            return Ok(Choice { flags, shape });
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
                    _ if format == Markdown => "--format markdown shows one cluster; a fleet prints text, json or jsonl",
                    _ => "status prints text, json, jsonl or markdown",
                })),
                (false, format, false) => Shape::Single(format),
            };
        let fleet_shape = matches!(shape, Shape::Quiet | Shape::JsonLines | Shape::FleetText);
        if fleet_shape && flags.fail_on.is_some() && flags.command == Command::Status {
            // A plan's rows are decided at its --fail-on, as check's are.
            return Err(usage(
                "status --fail-on gates one cluster (text, json, markdown or --quiet); for a fleet (or --format jsonl) gate with check",
            ));
        }
        Ok(Choice { flags, shape })
    }

    /// Whether the run reads as a fleet does (shared inputs checked first, a cluster's failure
    /// its row's): every output but a single cluster's own format.
    pub fn reads_as_fleet(&self) -> bool {
        !matches!(self.shape, Shape::Single(_) | Shape::QuietGated)
    }

    pub fn flags(&self) -> &Flags {
        &self.flags
    }
}

/// Prints one command's report as `choice` says and returns the run's exit code: the
/// document's decision's (0 when it decides nothing).
pub fn print(doc: &dyn Document, choice: &Choice, ctx: &Context) -> Result<u8, OutputError> {
    let format = choice.flags.format;
    match choice.shape {
        Shape::QuietGated => to_stdout(&format!("{}\n", doc.quiet_line(ctx).unwrap_or_default()))?,
        _ => emit(choice.flags.output.as_deref(), &doc.render(format, ctx)?, doc.private())?,
    }
    if let Some(account) = doc.account(format, ctx) {
        eprint!("{account}");
    }
    super::github::step_summary(|| doc.step_summary(ctx));
    Ok(doc.decision(ctx).map_or(0, |d| d.exit_code()))
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

/// Writes `text` to `output` (atomically; readable by all, a page to serve or a file a
/// collector reads, unless `private`: data only its owner should read) or standard output.
pub fn emit(output: Option<&Path>, text: &str, private: bool) -> Result<(), OutputError> {
    emit_bytes(output, text.as_bytes(), private)
}

/// [`emit`] for bytes (an archive, a roff page).
pub fn emit_bytes(output: Option<&Path>, bytes: &[u8], private: bool) -> Result<(), OutputError> {
    match output {
        Some(path) => {
            let written = if private {
                chart_source::atomic_write::write_atomically(path, bytes)
            } else {
                chart_source::atomic_write::write_atomically_readable(path, bytes)
            };
            written.map_err(|e| OutputError::Write(e.to_string()))?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|_| out.flush())
                .map_err(|e| OutputError::Write(format!("cannot write the report to standard output: {e}")))
        }
    }
}

fn to_stdout(text: &str) -> Result<(), OutputError> {
    emit(None, text, false)
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
    ctx: Context,
    spool: Spool,
    kept: Vec<Option<Kept>>,
    /// The first failure to write the streamed output; later clusters are still audited.
    write_error: Option<String>,
}

impl<'a> Printer<'a> {
    /// `ctx` holds what the renderers read besides a report (colour, detail, the run's rules and
    /// the files the user gave); the one cluster's name and read time are added here.
    pub fn new(choice: &'a Choice, members: &'a [Member], ctx: Context) -> Printer<'a> {
        Printer {
            choice,
            members,
            ctx,
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
        let paint = self.ctx.paint;
        // One cluster printed as lines (`--quiet`, `--format jsonl`) keeps its report for the
        // step summary, which is that cluster's, not a fleet's.
        let one = !self.choice.flags.fleet && matches!(self.choice.shape, Shape::Quiet | Shape::JsonLines);
        let report = match (one, report) {
            (true, Some(report)) => {
                if let Some(slot) = self.kept.get_mut(index) {
                    *slot = Some(Kept { row: row.clone(), report: Some(report), read: read.clone() });
                }
                self.kept.get(index).and_then(|k| k.as_ref()).and_then(|k| k.report.clone())
            }
            (_, report) => report,
        };
        let text = match self.choice.shape {
            Shape::FleetText => {
                let next = self.ctx.next.as_ref().map(|n| n.for_cluster(Some(&self.members[index].source)));
                Ok(section(&row, report.as_ref(), paint, next.as_deref()))
            }
            Shape::JsonLines => json_line(self.command(), &self.members[index].source, &row, report.as_ref()).map_err(|e| e.to_string()),
            Shape::Quiet => Ok(verdict_line(&row, paint)),
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
    /// page) and returns the run's exit code.
    pub fn finish(mut self, rows: &[Row]) -> Result<u8, OutputError> {
        let command = self.command();
        let fail_on = self.choice.flags.fail_on.unwrap_or(Severity::Error);
        // One cluster printed as lines: its own step summary, not a fleet's.
        let mut one: Option<(Report, Context)> = None;
        match self.choice.shape {
            Shape::Single(format) => return self.single(format),
            Shape::QuietGated => {
                let (member, kept, ctx) = self.single_kept()?;
                let Some(report) = &kept.report else { return Ok(kept.row.exit_code) };
                to_stdout(&format!("{}: {}\n", single_name(member), report.quiet_line(&ctx).unwrap_or_default()))?;
                return Ok(kept.row.exit_code);
            }
            Shape::Page(format) => {
                let kept: Vec<(&Member, Kept)> =
                    self.members.iter().zip(std::mem::take(&mut self.kept)).filter_map(|(m, k)| Some((m, k?))).collect();
                emit(self.choice.flags.output.as_deref(), &page(format, &kept, fail_on, self.ctx.next.as_ref()), false)?;
            }
            Shape::Quiet | Shape::JsonLines | Shape::FleetText => {
                one = self.single_kept().ok().and_then(|(_, kept, ctx)| Some((kept.report?, ctx)));
                let written = match self.write_error.take() {
                    Some(e) => Err(e),
                    None => {
                        let head =
                            if self.choice.shape == Shape::FleetText { summary(command, rows, self.ctx.paint) } else { String::new() };
                        let mut out = std::io::stdout().lock();
                        out.write_all(head.as_bytes()).and_then(|_| self.spool.finish(&mut out)).map_err(|e| e.to_string())
                    }
                };
                written.map_err(|e| OutputError::Write(format!("cannot write the fleet's report to standard output: {e}")))?;
            }
        }
        if let Some((report, ctx)) = one {
            super::github::step_summary(|| report.step_summary(&ctx));
        } else if command != "status" {
            super::github::step_summary(|| Some(super::fleet::step_summary(command, rows)));
        }
        Ok(exit_code(rows))
    }

    /// The one cluster's outcome (its report, or the run's failure), with the context that
    /// names it.
    fn single_kept(&mut self) -> Result<(&'a Member, Kept, Context), OutputError> {
        let kept = self.kept.first_mut().and_then(Option::take);
        let (Some(member), Some(kept)) = (self.members.first(), kept) else {
            return Err(OutputError::Cluster("no cluster was audited".into()));
        };
        if kept.report.is_none() {
            return Err(OutputError::Cluster(kept.row.failure.clone().unwrap_or_default()));
        }
        let mut ctx = self.ctx.clone();
        ctx.cluster = Some(single_name(member));
        ctx.read_at = read_at(&kept.read);
        if let Source::Snapshot { path } = &member.source {
            ctx.given.snapshot = Some(path.clone());
        }
        ctx.source = Some(member.source.clone());
        Ok((member, kept, ctx))
    }

    /// One cluster in the command's own format, as its report prints.
    fn single(mut self, format: Format) -> Result<u8, OutputError> {
        let (_, kept, ctx) = self.single_kept()?;
        let Some(report) = &kept.report else { return Err(OutputError::Cluster(kept.row.failure.clone().unwrap_or_default())) };
        let output = if format.is_page() { self.choice.flags.output.as_deref() } else { None };
        emit(output, &report.render(format, &ctx)?, report.private())?;
        super::github::step_summary(|| report.step_summary(&ctx));
        Ok(kept.row.exit_code)
    }
}

/// `check --format html|openmetrics` over a fleet.
fn page(format: Format, kept: &[(&Member, Kept)], fail_on: Severity, next: Option<&super::document::NextCommand>) -> String {
    fn check(k: &Kept) -> Option<&CheckReport> {
        match &k.report {
            Some(Report::Check(r)) => Some(r),
            _ => None,
        }
    }
    if format == Format::Html {
        let clusters: Vec<FleetCluster> = kept
            .iter()
            .map(|(member, k)| FleetCluster {
                cluster: &k.row.cluster,
                verdict: k.row.verdict.as_str(),
                report: check(k),
                failure: k.row.failure.as_deref(),
                next: next
                    .filter(|_| k.row.verdict == crate::audit::verdict::Verdict::Blocked)
                    .map(|n| n.for_cluster(Some(&member.source))),
            })
            .collect();
        return super::html::fleet_page(&clusters, fail_on);
    }
    let methods: Vec<Option<String>> = kept.iter().map(|(_, k)| k.row.method.map(openmetrics::method_name)).collect();
    let clusters: Vec<openmetrics::Cluster> = kept
        .iter()
        .map(|(_, k)| k)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(command: Command, format: Format) -> Flags {
        Flags::document(command, format)
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
