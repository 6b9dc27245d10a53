//! `status` as text, and as Markdown (the same text in a block under a heading, for a job summary
//! or a pull request).

use super::document::{json_report, unoffered, OutputError};
use super::format::{Command, Format};
use super::json_schema::Report as SchemaReport;
use crate::audit::finding::Severity;
use crate::audit::verdict::{Counts, Decision};
use crate::cluster::status::Status;

/// The status in `format`, gated when `fail_on` is given.
pub fn render(s: &Status, fail_on: Option<Severity>, format: Format) -> Result<String, OutputError> {
    Ok(match (format, fail_on) {
        (Format::Json | Format::Jsonl, fail_on) => json_report(SchemaReport::Status, &Gated { status: s, fail_on })?,
        (Format::Markdown, None) => markdown(s),
        (Format::Markdown, Some(level)) => markdown_gated(s, level),
        (Format::Text, None) => text(s),
        (Format::Text, Some(level)) => text_gated(s, level),
        (other, _) => return Err(unoffered(Command::Status, other)),
    })
}

/// What `status --fail-on` gates on ([`Counts::of_status`]).
pub fn counts(s: &Status) -> Counts {
    Counts::of_status(s)
}

/// The verdict of `status --fail-on LEVEL`, in `check`'s words.
pub fn decision(s: &Status, fail_on: Severity) -> Decision {
    Decision::new(counts(s), fail_on, None, None)
}

pub fn text(s: &Status) -> String {
    let mut out = String::new();
    let line = |out: &mut String, k: &str, v: &str| out.push_str(&format!("{k:<15}{v}\n"));
    line(&mut out, "Kubernetes", s.kubernetes.as_deref().unwrap_or("unknown (pass --kube-version)"));
    line(&mut out, "Install method", s.install.method.describe());
    for e in &s.install.evidence {
        line(&mut out, "", &format!("evidence: {e}"));
    }
    match &s.version {
        Some(v) => line(&mut out, "Trainer", &format!("{} (from {})", v.version, v.evidence)),
        None => line(&mut out, "Trainer", "not found"),
    }
    for r in &s.releases {
        let stuck = if r.stuck { "  ← must be resolved before upgrading" } else { "" };
        line(
            &mut out,
            "Helm release",
            &format!(
                "{}/{} revision {} {}, chart {} (app {}){stuck}",
                r.namespace, r.name, r.revision, r.status, r.chart_version, r.app_version
            ),
        );
        line(&mut out, "", &format!("history: {}", r.history.join("; ")));
        line(&mut out, "", &r.upgrade);
        line(&mut out, "", &format!("user values: {}", r.values));
    }
    for e in &s.release_errors {
        line(&mut out, "Helm release", &format!("unreadable: {e}"));
    }
    if !s.crds.is_empty() {
        out.push_str("CRDs\n");
        // Columns at least as wide as before, wider when a name or version list is longer.
        let width =
            |f: &dyn Fn(&crate::cluster::status::CrdSummary) -> usize, least: usize| s.crds.iter().map(f).max().unwrap_or(0).max(least);
        let name_w = width(&|c| c.name.len(), 46);
        let served_w = width(&|c| c.served.join(",").len(), 10);
        let storage_w = width(&|c| c.storage.join(",").len(), 10);
        for c in &s.crds {
            let release = if c.release_name.is_empty() {
                "no meta.helm.sh annotations".to_string()
            } else {
                format!("release {}/{}", c.release_namespace, c.release_name)
            };
            let managed = if c.managed_by.is_empty() { "no managed-by label".to_string() } else { format!("managed-by={}", c.managed_by) };
            let keep = if c.resource_policy.is_empty() { String::new() } else { format!(", resource-policy={}", c.resource_policy) };
            out.push_str(&format!(
                "  {:<name_w$} served {:<served_w$} storage {:<storage_w$} {}: {managed}, {release}{keep}\n",
                c.name,
                c.served.join(","),
                c.storage.join(","),
                c.owner
            ));
        }
    }
    if !s.runtimes.is_empty() {
        out.push_str("Runtimes\n");
        for r in &s.runtimes {
            let ns = if r.namespace.is_empty() { String::new() } else { format!("{}/", r.namespace) };
            let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let deleting = if r.deleting { ", deleting" } else { "" };
            out.push_str(&format!(
                "  {}/{ns}{}  owner {}; labels {}; finalizers {}{deleting}\n",
                r.kind,
                r.name,
                r.owner,
                if labels.is_empty() { "-".into() } else { labels.join(" ") },
                if r.finalizers.is_empty() { "-".into() } else { r.finalizers.join(",") }
            ));
        }
    }
    line(&mut out, "TrainJobs", &s.trainjobs.to_string());
    for (runtime, n) in &s.trainjobs_per_runtime {
        line(&mut out, "", &format!("runtime {runtime}: {n}"));
    }
    for (ns, n) in &s.trainjobs_per_namespace {
        line(&mut out, "", &format!("namespace {ns}: {n}"));
    }
    line(&mut out, "JobSet", &s.jobset.as_ref().map(|v| format!("CRD present (served {v})")).unwrap_or_else(|| "absent".into()));
    line(&mut out, "LWS", &s.lws.as_ref().map(|v| format!("CRD present (served {v})")).unwrap_or_else(|| "absent".into()));
    neighbours(&mut out, s);
    migration(&mut out, s);
    let v = &s.validation;
    let assumed = if v.kubernetes_known {
        ""
    } else {
        " (assumed, not the cluster's: it told no version and no --kube-version was given, so the newest version the validator models; pass --kube-version with the cluster's)"
    };
    line(&mut out, "Objects", &format!("validated against {} at Kubernetes {}{assumed}", v.against, v.kubernetes));
    for k in &v.kinds {
        let pruned = if k.pruned > 0 { format!("; {} lose fields on the next write", k.pruned) } else { String::new() };
        line(
            &mut out,
            "",
            &format!(
                "{}: {} object{}: {} valid, {} ratcheted, {} rejected, {} unevaluated{pruned}",
                k.kind,
                k.objects,
                if k.objects == 1 { "" } else { "s" },
                k.valid,
                k.ratcheted,
                k.rejected,
                k.unevaluated
            ),
        );
    }
    for sk in &v.skipped {
        line(&mut out, "", &format!("not validated: {sk}"));
    }
    for (ns, levels) in &s.pod_security {
        line(&mut out, "Pod Security", &format!("{ns}: {levels}"));
    }
    for w in &s.warnings {
        line(&mut out, "Warning", w);
    }
    out
}

fn neighbours(out: &mut String, s: &Status) {
    out.push_str("Neighbours\n");
    for n in &s.neighbours {
        if !n.present {
            out.push_str(&format!("  {:<22} absent\n", n.component));
            continue;
        }
        out.push_str(&format!("  {:<22} {}\n", n.component, n.version.as_deref().unwrap_or("version unknown")));
        if let Some(why) = &n.version_unknown {
            out.push_str(&format!("  {:<22}   why: {why}\n", ""));
        }
        for e in &n.evidence {
            out.push_str(&format!("  {:<22}   evidence: {e}\n", ""));
        }
    }
}

fn migration(out: &mut String, s: &Status) {
    let m = &s.migration;
    if m.legacy.is_empty() {
        return;
    }
    let counts = |c: &crate::cluster::legacy::Counts| format!("{} running, {} finished", c.running, c.finished);
    out.push_str("Legacy jobs (Training Operator v1 → TrainJob)\n");
    for n in &m.namespaces {
        out.push_str(&format!("  namespace {}: {}\n", n.namespace, n.state.as_str()));
        for (kind, c) in &n.legacy {
            out.push_str(&format!("    {kind:<12} {}\n", counts(c)));
        }
        out.push_str(&format!("    {:<12} {}\n", "TrainJob", counts(&n.trainjobs)));
    }
    let states: Vec<String> = m.states.iter().map(|(st, n)| format!("{} {n}", st.as_str())).collect();
    out.push_str(&format!("  total: {} legacy jobs; namespaces: {}\n", m.legacy_total(), states.join(", ")));
}

/// The status as Markdown: a heading and the text in a block.
pub fn markdown(s: &Status) -> String {
    format!("## Trainer status\n\n```text\n{}```\n", text(s))
}

/// The status gated (`--fail-on`): the verdict line first, then the text.
pub fn text_gated(s: &Status, fail_on: Severity) -> String {
    format!("{}\n{}", decision(s, fail_on).line(), text(s))
}

/// The status gated, as Markdown: the verdict in bold under the heading, as `check` writes it.
pub fn markdown_gated(s: &Status, fail_on: Severity) -> String {
    format!(
        "## Trainer status\n\n**Verdict: {}** (`--fail-on {}`)\n\n```text\n{}```\n",
        decision(s, fail_on).line(),
        fail_on.as_str(),
        text(s)
    )
}

/// The status JSON: with `--fail-on`, the verdict, its counts and the level at the top, as
/// `check`'s JSON has them; without, the status alone.
pub struct Gated<'a> {
    pub status: &'a Status,
    pub fail_on: Option<Severity>,
}

impl Gated<'_> {
    /// `blocked: 1 error, 0 warnings`, `ready`; without `--fail-on`, `installed`/`not-installed`.
    pub fn line(&self) -> String {
        match self.fail_on {
            Some(level) => decision(self.status, level).line(),
            None if self.status.version.is_some() => "installed".into(),
            None => "not-installed".into(),
        }
    }
}

impl serde::Serialize for Gated<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let mut doc = serde_json::to_value(self.status).map_err(S::Error::custom)?;
        if let (Some(level), Some(map)) = (self.fail_on, doc.as_object_mut()) {
            let d = serde_json::to_value(decision(self.status, level)).map_err(S::Error::custom)?;
            if let serde_json::Value::Object(d) = d {
                for (k, v) in d {
                    map.insert(k, v);
                }
            }
        }
        doc.serialize(serializer)
    }
}
