//! `release-stuck`: the Helm release's last revision is in one of the statuses the rule names.
//! Helm refuses to upgrade only a `pending-*` one; a rule may also name `failed`, which upgrades
//! normally but says the last change did not complete. The `{rollback}` var is the command back
//! to the last good revision: a rollback applies the way that revision was applied (Helm v4.2.3
//! `pkg/action/rollback.go`, `getUpgradeServerSideValue(…, previousRelease.ApplyMethod)`), so to
//! a server-side one it carries `--force-conflicts` — fields controllers took over since (the cert
//! rotators' keys, TA-NB-007) conflict otherwise, and the rollback fails (seen in the
//! pending-upgrade rehearsal) — and to a client-side one it cannot (Helm refuses
//! `forceConflicts enabled when serverSideApply disabled`).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

/// A Helm release status (Helm v4.2.3 `pkg/release/common/status.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Unknown,
    Deployed,
    Uninstalled,
    Superseded,
    Failed,
    Uninstalling,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The last revision's statuses to report.
    pub statuses: Vec<Status>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(r) = input.release else { return Vec::new() };
        if !self.statuses.iter().any(|s| s.as_str() == r.current.status) {
            return Vec::new();
        }
        // The revision to roll back to (`helm history` shows what is left).
        let last_good = r.rollback_target();
        // Helm bases an upgrade after a failed revision on the last `deployed` one, else on the
        // failed revision itself (Helm v4.2.3 pkg/action/upgrade.go, prepareUpgrade).
        let deployed = r.history.iter().rev().find(|(rev, s, _)| *rev != r.current.revision && s == "deployed");
        let effect = if r.current.is_stuck() {
            "Helm refuses every upgrade until it is resolved".to_string()
        } else {
            match deployed {
                Some((rev, _, _)) => format!("an upgrade proceeds normally, from the deployed revision {rev}"),
                None => "an upgrade proceeds normally, from this revision".to_string(),
            }
        };
        let revision = last_good.unwrap_or(1);
        vec![Hit::new(
            format!("release {}/{}", r.current.namespace, r.current.name),
            format!("revision {} is {}: {effect}", r.current.revision, r.current.status),
        )
        .evidence(format!("status {} ({})", r.current.status, r.current.description))
        .var("revision", revision.to_string())
        .var(
            "rollback",
            rollback(
                &r.current.name,
                &r.current.namespace,
                revision,
                r.rollback_record.as_ref().filter(|b| b.revision == revision).map(|b| b.apply_method.as_str()),
            ),
        )]
    }
}

/// `helm rollback RELEASE REVISION -n NAMESPACE`, forcing conflicts when the revision was applied
/// server-side.
fn rollback(release: &str, namespace: &str, revision: i64, method: Option<&str>) -> String {
    use crate::shell::quote;
    let force = if method == Some("ssa") { " --force-conflicts" } else { "" };
    format!("helm rollback {} {revision} -n {}{force}", quote(release), quote(namespace))
}

#[cfg(test)]
mod tests {
    use super::rollback;

    #[test]
    fn a_rollback_to_a_server_side_revision_forces_conflicts_and_no_other_does() {
        assert_eq!(
            rollback("kubeflow-trainer", "kubeflow-system", 2, Some("ssa")),
            "helm rollback kubeflow-trainer 2 -n kubeflow-system --force-conflicts"
        );
        assert_eq!(rollback("kubeflow-trainer", "kubeflow-system", 2, Some("csa")), "helm rollback kubeflow-trainer 2 -n kubeflow-system");
        assert_eq!(rollback("kubeflow-trainer", "kubeflow-system", 2, None), "helm rollback kubeflow-trainer 2 -n kubeflow-system");
        assert_eq!(rollback("my release", "ns", 1, Some("")), "helm rollback 'my release' 1 -n ns");
    }
}
