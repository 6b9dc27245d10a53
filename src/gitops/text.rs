//! The plain-text listing of a scan and of a comparison, for people reading a terminal or a CI
//! log: one block per Trainer reference with its location, chart, version, release, engine
//! options and problems; then, with a base, one block per change. Deterministic (the scan is
//! sorted; maps are ordered).

use std::fmt::Write as _;

use super::compare::{Comparison, Field, Status};
use super::model::{Scan, VersionKind};

pub fn scan(scan: &Scan, verbose: bool) -> String {
    let mut out = String::new();
    let n = scan.references.len();
    let _ = writeln!(out, "{n} Kubeflow Trainer reference{} in {} YAML file{}", plural(n), scan.files_read, plural(scan.files_read));
    if let (Some(v), Some(at)) = (&scan.argocd_version, &scan.argocd_version_at) {
        let _ = writeln!(out, "Argo CD version {v} ({at})");
    }
    for r in &scan.references {
        let _ = writeln!(out, "\n{} {} ({})", r.engine.as_str(), r.object, r.at);
        let repo = r.repository.as_deref().or(r.repository_written.as_deref()).unwrap_or("(unknown)");
        let _ = writeln!(out, "  chart:      {repo}");
        let version = match (&r.version, r.version_kind) {
            (_, VersionKind::Digest) => format!("digest {}", r.digest.as_deref().unwrap_or("?")),
            (Some(v), VersionKind::Range) => format!("{v} (range)"),
            (Some(v), VersionKind::Latest) => format!("{v} (latest)"),
            (Some(v), VersionKind::Exact) => v.clone(),
            (None, _) => "(unset: latest)".into(),
        };
        let _ = writeln!(out, "  version:    {version}  [{}]", r.version_at);
        let _ = writeln!(
            out,
            "  release:    {} in {}",
            r.release_name.as_deref().unwrap_or("(generated)"),
            r.release_namespace.as_deref().unwrap_or("(namespace not set in the files)")
        );
        let keys: Vec<&String> = r.value_origins.keys().collect();
        if keys.is_empty() {
            let _ = writeln!(out, "  values:     (none)");
        } else {
            let _ = writeln!(out, "  values:");
            for (key, at) in &r.value_origins {
                let _ = writeln!(out, "    {key}  [{at}]");
            }
        }
        let _ = writeln!(out, "  options:");
        for (name, opt) in &r.options {
            match &opt.at {
                Some(at) => {
                    let _ = writeln!(out, "    {name}: {}  [{at}]", opt.value);
                }
                None => {
                    let _ = writeln!(out, "    {name}: {} (default)", opt.value);
                }
            }
        }
        for p in &r.problems {
            let _ = writeln!(out, "  unknown:    {}{}", p.message, p.at.as_ref().map(|a| format!("  [{a}]")).unwrap_or_default());
        }
        for note in &r.notes {
            let _ = writeln!(out, "  note:       {note}");
        }
    }
    if !scan.problems.is_empty() {
        let _ = writeln!(out, "\n{} problem{} reading the tree:", scan.problems.len(), plural(scan.problems.len()));
        for p in &scan.problems {
            let _ = writeln!(out, "  {}{}", p.at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default(), p.message);
        }
    }
    if verbose && !scan.ignored.is_empty() {
        let _ = writeln!(out, "\nIgnored (not kubeflow-trainer):");
        for i in &scan.ignored {
            let _ = writeln!(out, "  {} {} chart {} ({})", i.engine.as_str(), i.object, i.chart, i.at);
        }
    } else if !scan.ignored.is_empty() {
        let _ =
            writeln!(out, "\n{} other chart reference{} ignored (--verbose lists them)", scan.ignored.len(), plural(scan.ignored.len()));
    }
    out
}

pub fn comparison(cmp: &Comparison) -> String {
    let mut out = String::new();
    let n = cmp.changes.len();
    let _ = writeln!(out, "{n} changed Kubeflow Trainer reference{} against the base ({} unchanged)", plural(n), cmp.unchanged.len());
    for c in &cmp.changes {
        let status = match c.status {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Changed => "changed",
        };
        let _ = writeln!(out, "\n{status}: {} {} ({})", c.engine.as_str(), c.object, c.at);
        for f in [&c.version, &c.repository, &c.release_name, &c.release_namespace].into_iter().flatten() {
            field(&mut out, f);
        }
        for v in &c.values {
            let show = |j: &Option<serde_json::Value>| j.as_ref().map(|j| j.to_string()).unwrap_or_else(|| "(unset)".into());
            let at = v.at.as_ref().map(|a| format!("  [{a}]")).unwrap_or_default();
            let _ = writeln!(out, "  value {}: {} → {}{at}", v.path, show(&v.from), show(&v.to));
        }
        for o in &c.options {
            field(&mut out, o);
        }
    }
    out
}

fn field(out: &mut String, f: &Field) {
    let from = f.from.as_deref().unwrap_or("(unset)");
    let to = f.to.as_deref().unwrap_or("(unset)");
    let at = f.at.as_ref().map(|a| format!("  [{a}]")).unwrap_or_default();
    let _ = writeln!(out, "  {}: {from} → {to}{at}", f.name);
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
