//! The revision Helm starts from ([`crate::explore::helm`], Helm v4.2.3 `pkg/action/upgrade.go`
//! L231-L272 and `pkg/cmd/upgrade.go` L123-L162): the version `check` reports as installed must
//! be the chart of that revision, and an upgrade Helm refuses is never `ready`. And what the
//! upgrade creates over objects it does not own: Helm v4.2.3 `pkg/action/upgrade.go` L375-L386
//! checks every object of the target that is not in the base manifest and exists in the cluster
//! (`pkg/action/validate.go` L72-L133 `existingResourceConflict`: the `app.kubernetes.io/managed-by:
//! Helm` label and the release name and namespace annotations must match), unless
//! `--take-ownership`; an install checks all of its objects (`pkg/action/install.go`).

use serde_json::Value as Json;
use trainer_audit::objects::str_at;

use super::situation::key;
use super::{Disagreement, Failure, Situation};
use crate::explore::helm::{Start, PENDING};
use crate::explore::state::Install;

/// The installed version `check` works from against Helm's base revision.
pub fn from_version(s: &Situation, line: &Json) -> Vec<Disagreement> {
    if line["exit_code"] == 2 {
        return Vec::new();
    }
    // A pending release is rolled back first: the upgrade then starts where the rollback went.
    let start = match &s.start_now {
        Start::Refused(e) if e == PENDING => &s.start,
        other => other,
    };
    let Start::Upgrade(base) = start else { return Vec::new() };
    let said = line.pointer("/report/from").and_then(Json::as_str).or_else(|| line["installed"].as_str()).unwrap_or_default();
    if said == base.version {
        return Vec::new();
    }
    vec![Disagreement {
        class: "installed-version-not-helms-base".into(),
        area: "states §1",
        expected: format!("installed {} (Helm upgrades from revision {}, {})", base.version, base.number, base.status),
        actual: format!("installed {said}"),
    }]
}

/// Helm's refusal, and the ownership conflicts of what the upgrade creates.
pub fn failures(s: &Situation) -> Vec<Failure> {
    let mut out = Vec::new();
    if let (Install::Helm(_), Start::Refused(text)) = (&s.state.install, &s.start) {
        let last = s.built.history.last().map(|r| r.status.clone()).unwrap_or_default();
        let command = s.command.as_ref().map(|c| format!("helm {} {}", c.verb, c.release)).unwrap_or_else(|| "helm upgrade".into());
        out.push(Failure {
            class: "helm-refuses",
            area: "states §1",
            what: format!("Helm v4.2.3 refuses `{command}` on this history (last revision {last}): {text}"),
            named_by: vec![last, "no deployed release".into(), "in progress".into()],
        });
        return out;
    }
    if !s.upgrade_runs || s.command_has("--take-ownership") {
        return out;
    }
    for o in s.created() {
        let Some(live) = s.live.get(&key(o)) else { continue };
        let owned = str_at(live, &["metadata", "labels", "app.kubernetes.io/managed-by"]) == "Helm"
            && str_at(live, &["metadata", "annotations", "meta.helm.sh/release-name"]) == s.state.release
            && str_at(live, &["metadata", "annotations", "meta.helm.sh/release-namespace"]) == s.state.namespace;
        if owned {
            continue;
        }
        let (kind, ns, name) = (str_at(o, &["kind"]), str_at(o, &["metadata", "namespace"]), str_at(o, &["metadata", "name"]));
        let subject = if ns.is_empty() { format!("{kind}/{name}") } else { format!("{kind}/{ns}/{name}") };
        out.push(Failure {
            class: "ownership",
            area: "other",
            what: format!("{subject} exists and cannot be imported into the current release: invalid ownership metadata (Helm v4.2.3 pkg/action/validate.go L95-L96), and the printed command has no --take-ownership"),
            named_by: vec![subject, format!("{kind}/{name}")],
        });
    }
    out
}
