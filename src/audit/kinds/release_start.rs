//! `release-start`: where Helm v4.2.3 starts `helm upgrade` of this release, when that is not
//! simply its last revision ([`Release::start`], modelled from `pkg/action/upgrade.go`
//! `prepareUpgrade` and the CLI's `--install` path). Each rule names the cases it reports:
//! `pending` (Helm refuses every upgrade: another operation is in progress), `no-deployed` (Helm
//! refuses `helm upgrade`: `has no deployed releases`), `not-deployed` (the last revision is not
//! deployed, yet Helm upgrades from it or from the deployed revision below it).
//!
//! Where Helm refuses, the plan goes through the command Helm takes ([`Route`]): `helm upgrade
//! --install` over an uninstalled release (variant `reinstall`), else a rollback, which Helm
//! allows from any status. The `{rollback}` var holds its commands: first, when the rollback
//! would delete CRDs (in the last revision's manifest, not in the one it restores) that exist,
//! the keep annotation Helm's delete honours; then `helm rollback`, which applies as the
//! revision it restores was applied (`pkg/action/rollback.go` L167), so to a server-side one it
//! carries `--force-conflicts` — fields controllers took over since (the cert rotators' keys,
//! TA-NB-007) conflict otherwise, seen in the pending-upgrade rehearsal — and to a client-side one
//! it cannot (Helm refuses `forceConflicts enabled when serverSideApply disabled`).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::release::{Release, ReleaseStatus, Route, Start};

/// The cases of Helm's start a rule reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// The last revision is pending: Helm refuses every upgrade.
    Pending,
    /// No revision is deployed and the last is neither failed nor superseded: Helm refuses
    /// `helm upgrade`.
    NoDeployed,
    /// The last revision is not deployed, and Helm upgrades anyway: from the deployed revision
    /// below it, else (failed, superseded) from it.
    NotDeployed,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub cases: Vec<Case>,
}

fn case_of(release: &Release) -> Option<Case> {
    match release.start(false) {
        Start::Pending => Some(Case::Pending),
        Start::NoDeployed | Start::Reinstall => Some(Case::NoDeployed),
        Start::From(_) if release.current.status != ReleaseStatus::Deployed => Some(Case::NotDeployed),
        Start::From(_) => None,
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(r) = input.release else { return Vec::new() };
        let Some(case) = case_of(r).filter(|c| self.cases.contains(c)) else { return Vec::new() };
        let last = &r.current;
        let base = r.base();
        let what = match case {
            Case::Pending => "Helm refuses every upgrade until it is resolved".to_string(),
            Case::NotDeployed if base.revision == last.revision => format!("helm upgrade starts from this revision ({})", base.chart()),
            Case::NotDeployed => format!("helm upgrade starts from the deployed revision {} ({}), not from it", base.revision, base.chart()),
            Case::NoDeployed => match r.route() {
                Route::Reinstall { finish_uninstall: false } => format!(
                    "none is deployed, so helm upgrade refuses (\"{}\" has no deployed releases) and helm upgrade --install installs {} afresh as revision {} over what the uninstall left",
                    last.name,
                    input.to,
                    last.revision + 1
                ),
                Route::Reinstall { finish_uninstall: true } => format!(
                    "none is deployed, so helm upgrade refuses (\"{}\" has no deployed releases), with --install too; once the uninstall is finished, helm upgrade --install installs {} afresh as revision {} over what it left",
                    last.name,
                    input.to,
                    last.revision + 1
                ),
                _ => format!("none is deployed, so helm upgrade refuses (\"{}\" has no deployed releases), with --install too", last.name),
            },
        };
        let mut hit = Hit::new(
            format!("release {}/{}", last.namespace, last.name),
            match case {
                Case::NoDeployed => format!("revision {} ({}) is {} and {what}", last.revision, last.chart(), last.status),
                _ => format!("revision {} ({}) is {}: {what}", last.revision, last.chart(), last.status),
            },
        )
        .evidence(match last.description.as_str() {
            "" => format!("status {}", last.status),
            d => format!("status {} ({d})", last.status),
        })
        .evidence(format!("history: {}", r.history.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))
        .var("base", base.revision.to_string())
        .var("base_chart", base.chart());
        if let Route::Rollback { to, .. } = r.route() {
            hit = hit.var("revision", to.to_string()).var("rollback", rollback_commands(input, r, to));
        }
        match r.route() {
            Route::Reinstall { finish_uninstall: false } => hit = hit.variant("reinstall"),
            Route::Reinstall { finish_uninstall: true } => {
                let q = crate::shell::quote;
                hit = hit
                    .variant("finish-uninstall")
                    .var("uninstall", format!("helm uninstall {} -n {} --keep-history", q(&last.name), q(&last.namespace)));
            }
            _ => {}
        }
        if case == Case::NotDeployed && base.revision != last.revision {
            hit = hit.variant("from-deployed");
        }
        vec![hit]
    }
}

/// The commands that roll the release back to `to`: the keep annotation on every CRD the
/// rollback would delete that exists (Helm reads the live object before deleting, v4.2.3
/// `pkg/kube/client.go` Update), then `helm rollback`.
fn rollback_commands(input: &CheckInput, release: &Release, to: i64) -> String {
    use crate::shell::quote;
    let mut lines = Vec::new();
    let kept: Vec<String> = release.record(to).map(|r| r.objects()).unwrap_or_default().into_iter().map(|o| o.identity.name).collect();
    let mut deleted: Vec<String> = release
        .current
        .objects()
        .into_iter()
        .filter(|o| o.identity.kind == "CustomResourceDefinition" && !kept.contains(&o.identity.name))
        .map(|o| o.identity.name)
        .filter(|name| input.state.crd(name).is_some())
        .collect();
    deleted.sort();
    if !deleted.is_empty() {
        let names: Vec<String> = deleted.iter().map(|n| quote(n)).collect();
        lines.push(format!("kubectl annotate crd {} helm.sh/resource-policy=keep --overwrite", names.join(" ")));
    }
    let server_side = release.record(to).is_some_and(|r| r.server_side());
    lines.push(rollback(&release.current.name, &release.current.namespace, to, server_side));
    lines.join("\n")
}

/// `helm rollback RELEASE REVISION -n NAMESPACE`, forcing conflicts when the revision was applied
/// server-side.
fn rollback(release: &str, namespace: &str, revision: i64, server_side: bool) -> String {
    use crate::shell::quote;
    let force = if server_side { " --force-conflicts" } else { "" };
    format!("helm rollback {} {revision} -n {}{force}", quote(release), quote(namespace))
}

#[cfg(test)]
mod tests {
    use super::rollback;

    #[test]
    fn a_rollback_to_a_server_side_revision_forces_conflicts_and_no_other_does() {
        assert_eq!(
            rollback("kubeflow-trainer", "kubeflow-system", 2, true),
            "helm rollback kubeflow-trainer 2 -n kubeflow-system --force-conflicts"
        );
        assert_eq!(rollback("kubeflow-trainer", "kubeflow-system", 2, false), "helm rollback kubeflow-trainer 2 -n kubeflow-system");
        assert_eq!(rollback("my release", "ns", 1, false), "helm rollback 'my release' 1 -n ns");
    }
}
