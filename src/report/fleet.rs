//! A fleet's reports: the summary table (one row per cluster, in input order), the verdict line
//! `--quiet` prints, each cluster's section in text, the JSON Lines document per cluster, and a
//! GitHub job's step summary.
//!
//! The JSON Lines document (`schema: trainer-audit.dev/fleet/v1`) is one compact line per
//! cluster, every key always present: `schema`, `command` (`check`, `plan`, `status`),
//! `cluster`, `source` (`{"snapshot": {"path"}}` or `{"live": {"kubeconfig"?, "context"?}}`),
//! `installed`, `method`, `target` (null when unknown), `errors`, `warnings`, `verdict` (`ready`,
//! `blocked`, `installed`, `not-installed`, `failed`; `planned` is in the schema and never written), `exit_code` (what a run on
//! that cluster alone exits with), `failure` (null, or why the cluster failed) and `report` (the
//! single-cluster command's `--format json` document, or null when the cluster failed). Keys are
//! only ever added.

use std::fmt::Write as _;

use serde::Serialize;

use super::style::{Paint, Tone};
use crate::cluster::source::Source;
use crate::fleet::audit::{Report, Row, Verdict};

pub const SCHEMA: &str = "trainer-audit.dev/fleet/v1";

/// Every verdict, in the order the summary counts them.
const VERDICTS: [Verdict; 5] = [Verdict::Ready, Verdict::Blocked, Verdict::Installed, Verdict::NotInstalled, Verdict::Failed];

pub fn tone(verdict: Verdict) -> Tone {
    match verdict {
        Verdict::Ready | Verdict::Installed => Tone::Good,
        Verdict::NotInstalled | Verdict::NotAudited => Tone::Caution,
        Verdict::Blocked => Tone::Bad,
        Verdict::Failed => Tone::Broken,
    }
}

fn dash(v: Option<&str>) -> &str {
    v.filter(|s| !s.is_empty()).unwrap_or("-")
}

fn method(row: &Row) -> &'static str {
    row.method.map(|m| m.describe()).unwrap_or("-")
}

/// `3 clusters: 1 ready, 1 blocked, 1 failed`.
pub fn tally(rows: &[Row]) -> String {
    let parts: Vec<String> = VERDICTS
        .iter()
        .filter_map(|v| {
            let n = rows.iter().filter(|r| r.verdict == *v).count();
            (n > 0).then(|| format!("{n} {}", v.as_str()))
        })
        .collect();
    let clusters = if rows.len() == 1 { "1 cluster".to_string() } else { format!("{} clusters", rows.len()) };
    if parts.is_empty() {
        clusters
    } else {
        format!("{clusters}: {}", parts.join(", "))
    }
}

/// The summary table, then the tally, then each failure with its reason.
pub fn summary(command: &str, rows: &[Row], paint: Paint) -> String {
    let head = ["CLUSTER", "INSTALLED", "METHOD", "TARGET", "ERRORS", "WARNINGS", "VERDICT"];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let failed = r.verdict == Verdict::Failed;
            let count = |n: usize| if failed { "-".to_string() } else { n.to_string() };
            [
                r.cluster.clone(),
                dash(r.installed.as_deref()).to_string(),
                method(r).to_string(),
                dash(r.target.as_deref()).to_string(),
                count(r.errors),
                count(r.warnings),
                r.verdict.as_str().to_string(),
            ]
        })
        .collect();
    let mut widths = head.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [String; 7], verdict: Option<Verdict>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            match i {
                // Counts right-aligned, the verdict last and unpadded.
                4 | 5 => out.push_str(&format!("{}{cell}  ", " ".repeat(pad))),
                6 => out.push_str(&verdict.map(|v| paint.tone(tone(v), cell)).unwrap_or_else(|| cell.clone())),
                _ => out.push_str(&format!("{cell}{}  ", " ".repeat(pad))),
            }
        }
        out.push('\n');
        out
    };
    let mut out = format!("{}\n", paint.bold(&format!("Fleet {command}: {}", tally(rows))));
    out.push_str(&line(head.map(str::to_string), None));
    for (row, cells) in rows.iter().zip(cells) {
        out.push_str(&line(cells, Some(row.verdict)));
    }
    for r in rows.iter().filter(|r| r.verdict == Verdict::Failed) {
        out.push_str(&format!("{} {}: {}\n", paint.tone(Tone::Broken, "failed"), r.cluster, dash(r.failure.as_deref())));
    }
    out
}

/// The one line `--quiet` prints for a cluster.
pub fn verdict_line(row: &Row, paint: Paint) -> String {
    let verdict = paint.tone(tone(row.verdict), row.verdict.as_str());
    if row.verdict == Verdict::Failed {
        return format!("{}: {verdict}: {}\n", row.cluster, dash(row.failure.as_deref()));
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let route = match &row.target {
        Some(target) => format!("{} → {target}", dash(row.installed.as_deref())),
        None => dash(row.installed.as_deref()).to_string(),
    };
    format!("{}: {verdict}: {route} ({}), {}, {}\n", row.cluster, method(row), plural(row.errors, "error"), plural(row.warnings, "warning"))
}

/// One cluster's part of a fleet's text output: a heading, then the report the command prints
/// for that cluster alone (or why there is none).
/// `next` is the command that comes next for this cluster (`check`: its runbook).
pub fn section(row: &Row, report: Option<&Report>, paint: Paint, next: Option<&str>) -> String {
    let mut out = format!("\n{}\n", paint.bold(&format!("=== {} ===", row.cluster)));
    match report {
        Some(Report::Check(r)) => out.push_str(&super::check::text_painted(r, paint, super::findings::Detail::Short, next)),
        Some(Report::Status(s)) => out.push_str(&super::status::text(s)),
        Some(Report::Plan { plan, notes, .. }) => out.push_str(&super::plan::text(plan, notes)),
        None => out.push_str(&format!("{}: {}\n", paint.tone(Tone::Broken, "failed"), dash(row.failure.as_deref()))),
    }
    out
}

/// The step summary of a fleet run (`check` or `plan` over several clusters): the verdicts and
/// one row per cluster.
pub fn step_summary(command: &str, rows: &[Row]) -> String {
    let verdict = crate::fleet::audit::verdict(rows).as_str();
    let mut out = format!(
        "### {} Trainer fleet {command}: {verdict}\n\n{}\n\n| Cluster | Installed | Target | Errors | Warnings | Verdict |\n|---|---|---|---|---|---|\n",
        super::github::badge(verdict),
        tally(rows)
    );
    for r in rows {
        let failed = r.verdict == Verdict::Failed;
        let n = |n: usize| if failed { "-".to_string() } else { n.to_string() };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            super::findings::cell(&r.cluster),
            r.installed.as_deref().unwrap_or("-"),
            r.target.as_deref().unwrap_or("-"),
            n(r.errors),
            n(r.warnings),
            match &r.failure {
                Some(why) => format!("failed: {}", super::findings::cell(why)),
                None => r.verdict.as_str().to_string(),
            }
        );
    }
    out
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: &'static str,
    schema: &'static str,
    command: &'a str,
    cluster: &'a str,
    source: &'a Source,
    installed: Option<&'a str>,
    method: Option<crate::engine::Method>,
    target: Option<&'a str>,
    errors: usize,
    warnings: usize,
    verdict: Verdict,
    exit_code: u8,
    failure: Option<&'a str>,
    report: Option<&'a Report>,
}

/// One cluster's JSON Lines document, newline included.
pub fn json_line(command: &str, source: &Source, row: &Row, report: Option<&Report>) -> Result<String, serde_json::Error> {
    let doc = Document {
        schema_version: super::json_schema::Report::Fleet.version().unwrap_or_default(),
        schema: SCHEMA,
        command,
        cluster: &row.cluster,
        source,
        installed: row.installed.as_deref(),
        method: row.method,
        target: row.target.as_deref(),
        errors: row.errors,
        warnings: row.warnings,
        verdict: row.verdict,
        exit_code: row.exit_code,
        failure: row.failure.as_deref(),
        report,
    };
    let mut line = serde_json::to_string(&doc)?;
    line.push('\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Method;

    fn row(cluster: &str, verdict: Verdict, installed: Option<&str>) -> Row {
        Row {
            cluster: cluster.into(),
            installed: installed.map(String::from),
            method: installed.map(|_| Method::Helm),
            target: installed.map(|_| "2.3.0".to_string()),
            errors: if verdict == Verdict::Blocked { 5 } else { 0 },
            warnings: 9,
            verdict,
            exit_code: verdict.exit_code(),
            failure: (verdict == Verdict::Failed).then(|| "cannot reach the Kubernetes API server: connection refused".into()),
        }
    }

    #[test]
    fn the_summary_is_a_table_in_input_order_with_failures_named() {
        let rows = [
            row("prod-east", Verdict::Blocked, Some("2.2.1")),
            row("dev", Verdict::Ready, Some("2.3.0")),
            row("lab", Verdict::Failed, None),
        ];
        let text = summary("check", &rows, Paint::PLAIN);
        let expected = "Fleet check: 3 clusters: 1 ready, 1 blocked, 1 failed
CLUSTER    INSTALLED  METHOD  TARGET  ERRORS  WARNINGS  VERDICT
prod-east  2.2.1      Helm    2.3.0        5         9  blocked
dev        2.3.0      Helm    2.3.0        0         9  ready
lab        -          -       -            -         -  failed
failed lab: cannot reach the Kubernetes API server: connection refused
";
        assert_eq!(text, expected);
        let coloured = summary("check", &rows, Paint::COLOUR);
        assert_ne!(coloured, text);
        assert_eq!(strip(&coloured), text, "colour must not move a column");
        assert_eq!(verdict_line(&rows[0], Paint::PLAIN), "prod-east: blocked: 2.2.1 → 2.3.0 (Helm), 5 errors, 9 warnings\n");
        assert_eq!(verdict_line(&rows[2], Paint::PLAIN), "lab: failed: cannot reach the Kubernetes API server: connection refused\n");
        assert_eq!(tally(&rows[..1]), "1 cluster: 1 blocked");
    }

    #[test]
    fn json_lines_keep_every_key_and_one_line_per_cluster() {
        let source = Source::Live { kubeconfig: None, context: Some("lab".into()) };
        let line = json_line("check", &source, &row("lab", Verdict::Failed, None), None).unwrap();
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let doc: serde_json::Value = serde_json::from_str(&line).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "schemaVersion",
                "schema",
                "command",
                "cluster",
                "source",
                "installed",
                "method",
                "target",
                "errors",
                "warnings",
                "verdict",
                "exit_code",
                "failure",
                "report"
            ]
        );
        assert_eq!(doc["source"], serde_json::json!({"live": {"context": "lab"}}));
        assert_eq!((doc["verdict"].as_str(), doc["exit_code"].as_u64(), doc["report"].is_null()), (Some("failed"), Some(2), true));
    }

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
