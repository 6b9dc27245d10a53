//! The `check` report: its data (JSON is its serde form) and its text and Markdown renderings.

use serde::Serialize;

use super::verdict::Decision;
use crate::audit::finding::Finding;
use crate::cluster::install::Method;

/// The inputs a check's verdict rests on, as the run took them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inputs {
    /// Where the installed version comes from (a Helm release, a controller image, `--from`).
    pub installed: String,
    /// The installed chart: `--from-chart`, or the repository version.
    pub installed_chart: String,
    /// The target chart: `--chart`, or the repository version.
    pub target_chart: String,
    /// The Kubernetes version every check used, and whether the cluster or `--kube-version` gave it.
    pub kubernetes: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    #[serde(flatten)]
    pub decision: Decision,
    pub inputs: Inputs,
    pub release: String,
    pub namespace: String,
    pub method: Method,
    pub from: String,
    pub to: String,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
    pub findings: Vec<Finding>,
}

pub fn text(r: &CheckReport) -> String {
    text_painted(r, super::style::Paint::PLAIN, super::findings::Detail::Short)
}

/// [`text`] with severities coloured, short or verbose; the verdict line first.
pub fn text_painted(r: &CheckReport, paint: super::style::Paint, detail: super::findings::Detail) -> String {
    let mut out = format!("{}\n", r.decision.line());
    out.push_str(&format!("Upgrade check: {}/{} {} → {} (installed with {})\n", r.namespace, r.release, r.from, r.to, r.method.describe()));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push('\n');
    super::findings::text_painted(&r.findings, paint, detail, &mut out);
    out
}

pub fn markdown(r: &CheckReport) -> String {
    let mut out = format!(
        "## Trainer upgrade check: `{}/{}` {} → {}\n\n**Verdict: {}** (`--fail-on {}`)\n\nInstalled with {}.\n\n",
        r.namespace,
        r.release,
        r.from,
        r.to,
        r.decision.line(),
        r.decision.fail_on.as_str(),
        r.method.describe()
    );
    for n in r.notes.iter().chain(r.warnings.iter()) {
        out.push_str(&format!("- {n}\n"));
    }
    out.push('\n');
    super::findings::markdown(&r.findings, &mut out);
    out
}
