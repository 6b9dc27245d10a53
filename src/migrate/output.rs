//! What `migrate` writes: server-set fields stripped so the objects apply cleanly with
//! server-side apply, the `List`, a unified diff per object, the `kubectl patch` commands that
//! must run while the old CRDs are installed, and the report of what was and was not carried.
//!
//! Stripped for apply: `status` (a main-resource apply ignores it anyway), `managedFields` (an
//! apply request carrying them is rejected), `resourceVersion` and `uid` (both act as
//! preconditions, and a running job's status writes move `resourceVersion` on), and the fields
//! only the server sets (`creationTimestamp`, `generation`, `selfLink`, deletion markers).
//! `kubectl.kubernetes.io/last-applied-configuration` goes too: it records the old 2.1 spec.

use serde_json::{json, Value as Json};

use super::{Level, Migration, SchemaVerdict, FIELD_MANAGER};

const SERVER_SET: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A copy of `o` without what the server sets.
pub fn stripped(o: &Json) -> Json {
    let mut o = kube_validate::without_status(o);
    if let Some(meta) = o.get_mut("metadata").and_then(Json::as_object_mut) {
        for k in SERVER_SET {
            meta.remove(*k);
        }
        let empty = match meta.get_mut("annotations").and_then(Json::as_object_mut) {
            Some(a) => {
                a.remove(LAST_APPLIED);
                a.is_empty()
            }
            None => false,
        };
        if empty {
            meta.remove("annotations");
        }
    }
    o
}

/// The objects to write, as one `List`.
pub fn list(m: &Migration) -> Json {
    let items: Vec<Json> = m.conversions.iter().filter(|c| c.write).filter_map(|c| c.converted.clone()).collect();
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// Why the converted objects could not be written as text.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error(transparent)]
    Yaml(#[from] helm_render::yaml::EmitError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// YAML as Helm's `toYaml` writes it (sorted keys), ending in a newline (toYaml trims it).
pub fn yaml(value: &Json) -> Result<String, EncodeError> {
    Ok(crate::objects::yaml_of(value).map(|t| if t.ends_with('\n') { t } else { format!("{t}\n") })?)
}

pub fn json_text(value: &Json) -> Result<String, EncodeError> {
    Ok(serde_json::to_string_pretty(value).map(|t| format!("{t}\n"))?)
}

/// A unified diff (YAML, 3 lines of context) per object written.
pub fn diff(m: &Migration) -> Result<String, EncodeError> {
    let mut out = String::new();
    for c in m.conversions.iter().filter(|c| c.write) {
        let Some(converted) = &c.converted else { continue };
        let (a, b) = (yaml(&c.original)?, yaml(converted)?);
        let name = format!("{}/{}/{}", c.id.kind, if c.id.namespace.is_empty() { "-" } else { &c.id.namespace }, c.id.name);
        let text = similar::TextDiff::from_lines(&a, &b);
        out.push_str(&text.unified_diff().context_radius(3).header(&format!("a/{name}"), &format!("b/{name}")).to_string());
    }
    Ok(out)
}

/// POSIX shell single quoting: every printed command must run as printed, whatever the names
/// hold. (One rule; no crate needed.)
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The `kubectl patch` commands (JSON Patch with `test` guards) for the edits that must land
/// while the 2.1 CRDs are still installed. `kubectl` is the command prefix, already quoted.
pub fn before_crds_script(m: &Migration, kubectl: &str) -> String {
    let mut out = String::from(
        "#!/bin/sh\n# Run while the Trainer 2.1 CRDs are still installed, before the 2.2+ CRDs are applied.\n\
         # Each patch first tests the stored value, so it fails instead of overwriting a changed object.\nset -e\n",
    );
    for c in m.conversions.iter().filter(|c| !c.before_crds.is_empty() && c.converted.is_some()) {
        let ops = serde_json::to_string(&c.before_crds).unwrap_or_default();
        let resource = format!("{}.trainer.kubeflow.org/{}", c.id.kind.to_ascii_lowercase(), c.id.name);
        let ns = if c.id.namespace.is_empty() { String::new() } else { format!(" --namespace {}", shell_quote(&c.id.namespace)) };
        out.push_str(&format!("{kubectl} patch {}{ns} --type json -p {}\n", shell_quote(&resource), shell_quote(&ops)));
    }
    out
}

/// What the user runs next, filled in by the command line.
#[derive(Debug, Clone, Default)]
pub struct NextSteps {
    /// The `migrate … --before-crds` command, when some object needs it.
    pub before_crds: Option<String>,
    /// Where the List went (`-o FILE`, quoted), for the apply command.
    pub list_file: Option<String>,
    /// The `migrate … --format yaml` command that prints the List, piped to kubectl otherwise.
    pub list_command: String,
    /// `kubectl` with the user's context flags.
    pub kubectl: String,
}

/// The report: per object, every note; then the steps in order.
pub fn report(m: &Migration, next: &NextSteps) -> String {
    let refused = m.conversions.iter().filter(|c| c.refused()).count();
    let written = m.conversions.iter().filter(|c| c.write && !c.refused()).count();
    let mut out = format!(
        "trainer-audit migrate: {} examined {} conversion: {written} in the List, {refused} refused, {} reported only; {} needed nothing\n",
        super::counted(m.conversions.len(), "object"),
        if m.conversions.len() == 1 { "needs" } else { "need" },
        m.conversions.len() - refused - written,
        m.passed_over
    );
    out.push_str(&validation_summary(m));
    for c in &m.conversions {
        let state = if c.refused() {
            "REFUSED (not in the output)"
        } else if !c.write {
            "converted (reported only)"
        } else if c.incomplete() {
            "converted, with losses"
        } else {
            "converted"
        };
        out.push_str(&format!("\n{}: {state}\n", c.id));
        let mut notes: Vec<_> = c.notes.iter().collect();
        notes.sort_by_key(|n| n.level);
        for n in notes {
            let path = if n.path.is_empty() { String::new() } else { format!("{} ", n.path) };
            let source = if n.source.is_empty() { String::new() } else { format!(" [{}]", n.source) };
            out.push_str(&format!("  {:<9} {path}{}{source}\n", n.level.word(), n.text));
        }
        if !c.refused() {
            out.push_str(&format!("  schema    {}\n", verdict(&c.schema)));
        }
    }
    out.push_str(&steps(m, next));
    out
}

/// `validated against the 2.3.0 CRDs (Kubernetes 1.33): 5 accepted, 1 rejected`, with the
/// rejections' reasons (their objects are refused above).
fn validation_summary(m: &Migration) -> String {
    let (mut accepted, mut rejected, mut unvalidated, mut unevaluated) = (0, 0, 0, 0);
    let mut reasons = String::new();
    for c in &m.conversions {
        match &c.schema {
            SchemaVerdict::Accepted { unevaluated: u, .. } => {
                accepted += 1;
                unevaluated += usize::from(!u.is_empty());
            }
            SchemaVerdict::Rejected { errors, .. } => {
                rejected += 1;
                reasons.push_str(&format!("  rejected  {}: {}\n", c.id, errors.join("; ")));
            }
            // Objects refused before validation keep the default verdict: not counted.
            SchemaVerdict::NotValidated { reason } if !reason.is_empty() => unvalidated += 1,
            SchemaVerdict::NotValidated { .. } => {}
        }
    }
    let mut line = format!("validated against {}: {accepted} accepted, {rejected} rejected", m.validated_against);
    if unevaluated > 0 {
        line.push_str(&format!(" ({unevaluated} accepted with rules not evaluated: see below)"));
    }
    if unvalidated > 0 {
        line.push_str(&format!(", {unvalidated} not validated"));
    }
    format!("{line}\n{reasons}")
}

fn verdict(v: &SchemaVerdict) -> String {
    match v {
        SchemaVerdict::NotValidated { reason } => format!("not validated against the target CRDs ({reason})"),
        SchemaVerdict::Accepted { pruned, unevaluated } => {
            let mut s = "accepted by the target CRDs".to_string();
            if !pruned.is_empty() {
                s.push_str(&format!("; the write would drop {}", pruned.join(", ")));
            }
            if !unevaluated.is_empty() {
                s.push_str(&format!("; rules not evaluated: {}", unevaluated.join(" | ")));
            }
            s
        }
        SchemaVerdict::Rejected { errors, .. } => format!("rejected: {}", errors.join("; ")),
    }
}

fn steps(m: &Migration, next: &NextSteps) -> String {
    let mut out = String::from("\nSteps, in this order:\n");
    let mut n = 1;
    let mut step = |out: &mut String, text: String| {
        out.push_str(&format!("  {n}. {text}\n"));
        n += 1;
    };
    let apply = format!("{} apply --server-side --field-manager={FIELD_MANAGER}", next.kubectl);
    let apply_list = match &next.list_file {
        Some(file) => format!("{apply} -f {file}"),
        None => format!("{} | {apply} -f -", next.list_command),
    };
    if m.legacy {
        step(&mut out, "review the notes above: every TrainJob created starts training unless it is suspended (--suspend)".into());
        if m.conversions.iter().any(|c| c.write && !c.refused()) {
            step(&mut out, format!("create the TrainJobs: {apply_list}"));
        }
        step(&mut out, "delete each PyTorchJob yourself once its TrainJob runs as intended (this tool never writes to the cluster)".into());
        return out;
    }
    step(
        &mut out,
        "back up the objects, for example: trainer-audit snapshot -o trainer-backup.yaml (once the 2.2+ CRDs are installed the API server no longer returns 2.1-only fields)"
            .into(),
    );
    if m.conversions.iter().any(|c| !c.before_crds.is_empty() && !c.refused()) {
        let cmd = next.before_crds.clone().unwrap_or_else(|| "trainer-audit migrate … --before-crds".into());
        step(&mut out, format!("while the 2.1 CRDs are still installed, write the patches, read them, run them: {cmd} -o before-crds.sh && sh before-crds.sh"));
    }
    step(&mut out, "apply the target chart's CRDs server-side".into());
    if m.conversions.iter().any(|c| c.write && !c.refused()) {
        step(&mut out, format!("apply the List: {apply_list}"));
    }
    step(&mut out, "upgrade the chart".into());
    if m.conversions.iter().any(|c| c.refused() || c.notes.iter().any(|n| n.level == Level::Lost)) {
        out.push_str("Objects refused or with losses above need a decision by hand before the upgrade.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_what_the_server_sets() {
        let o = json!({"apiVersion": "v1", "kind": "X", "status": {"a": 1}, "metadata": {"name": "n", "uid": "u", "resourceVersion": "1",
            "managedFields": [], "generation": 2, "creationTimestamp": "t", "labels": {"l": "v"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}, "ownerReferences": [{"name": "o"}]}});
        assert_eq!(
            stripped(&o),
            json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "labels": {"l": "v"}, "ownerReferences": [{"name": "o"}]}})
        );
    }

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote("team-a"), "team-a");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote(r#"[{"op":"x"}]"#), r#"'[{"op":"x"}]'"#);
    }
}
