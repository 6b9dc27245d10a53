//! The inputs of an upgrade held against what they claim, before anything is audited: `-n` and
//! `--release` name a Trainer install the cluster holds, `--from` agrees with what the cluster
//! says, `--from-chart` is the installed version of the Trainer chart, and the Kubernetes version
//! is known and one under which the CRDs already installed could have been created. A run on an
//! input that is not what it says would audit something else and call it this cluster, so each
//! mismatch is refused, naming the input and what was found.

use super::{version, Request, UpgradeError};
use crate::cluster::install::{installs, Install, InstalledVersion};
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use kube_validate::crd_write::{self, CrdWrite, IssueKind};
use kube_version::KubeVersion;

/// The install `-n`/`--release` select (None: the cluster holds no Trainer install at all, and
/// the version must come from `--from`). Refused when they select none of the installs found,
/// or when several remain and nothing picks one.
pub fn select_install(request: &Request, state: &ClusterState, releases: &[Release]) -> Result<Option<Install>, UpgradeError> {
    let all = installs(state, releases);
    if all.is_empty() {
        return Ok(None);
    }
    let (ns, name) = (request.namespace.as_deref(), request.release.as_deref());
    let matches = |i: &&Install| {
        ns.is_none_or(|n| n == i.namespace)
            // A Helm release by its name; a chart another engine rendered by the release it was
            // rendered as; kustomize manifests have none (the name is the release to create).
            && name.is_none_or(|n| match (i.helm_release, &i.rendered_as) {
                (true, _) => n == i.name,
                (false, Some(rendered)) => n == rendered,
                (false, None) => true,
            })
    };
    let chosen: Vec<&Install> = all.iter().filter(matches).collect();
    let found = || all.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    match chosen.as_slice() {
        [] => {
            let asked = match (ns, name) {
                (Some(n), Some(r)) => format!("release {r} in namespace {n}"),
                (Some(n), None) => format!("namespace {n}"),
                (None, Some(r)) => format!("release {r}"),
                (None, None) => unreachable!("without -n or --release every install matches"),
            };
            Err(UpgradeError::Usage(format!(
                "{asked} holds no Trainer install; the cluster has: {}. Pick one with -n/--namespace and --release",
                found()
            )))
        }
        [one] => Ok(Some((*one).clone())),
        several => {
            let helm: Vec<&&Install> = several.iter().filter(|i| i.helm_release).collect();
            match helm.as_slice() {
                [one] => Ok(Some((**one).clone())),
                _ => Err(UpgradeError::Usage(format!(
                    "several Trainer installs ({}): pick one with -n/--namespace and --release",
                    several.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                ))),
            }
        }
    }
}

/// The installed version the selected install tells, with its evidence (a Helm release's record,
/// else the controller image).
pub fn install_version(install: &Install, releases: &[Release]) -> Option<InstalledVersion> {
    if install.helm_release {
        let r = releases.iter().find(|r| r.current.name == install.name && r.current.namespace == install.namespace)?;
        return Some(crate::cluster::install::release_version(r));
    }
    install.version.as_ref().map(|v| InstalledVersion {
        version: v.clone(),
        evidence: format!("controller image {}", install.image.as_deref().unwrap_or_default()),
    })
}

/// `--from` against what the cluster says: refused when both are versions and they differ.
pub fn check_from(from: &str, found: Option<&InstalledVersion>) -> Result<(), UpgradeError> {
    let Some(found) = found else { return Ok(()) };
    let (Ok(given), Ok(seen)) = (version(from, "--from"), version(&found.version, "installed")) else { return Ok(()) };
    if given == seen {
        return Ok(());
    }
    Err(UpgradeError::Usage(format!(
        "--from {from} contradicts the cluster: {} says {seen}. Drop --from (it is for a cluster that does not tell its version)",
        found.evidence
    )))
}

/// `--from-chart` (already known to be the Trainer chart) against the installed version.
pub fn check_from_chart(path: &str, chart_version: &str, from: &semver::Version, evidence: &str) -> Result<(), UpgradeError> {
    let v = version(chart_version, "--from-chart")?;
    if v == *from {
        return Ok(());
    }
    Err(UpgradeError::Usage(format!(
        "--from-chart {path} is kubeflow-trainer {chart_version}, but the installed version is {from} ({evidence}): pass the chart of {from}"
    )))
}

/// The Kubernetes version is known (the cluster's, or `--kube-version`), and a `--kube-version`
/// is one under which the Trainer CRDs already installed could have been created: their CEL
/// compiles there. Every part of the run then reads this one version.
pub fn check_kube_version(state: &ClusterState) -> Result<(), UpgradeError> {
    let Some(kube) = state.kube_version().map(KubeVersion::minor_version) else {
        return Err(UpgradeError::Usage(
            "the Kubernetes version is unknown (a snapshot without ClusterInfo, or a server whose version is not MAJOR.MINOR): pass the cluster's version with --kube-version (e.g. 1.33)".to_string(),
        ));
    };
    if !state.info.version_given {
        return Ok(());
    }
    let trainer = state.crds().filter(|c| crate::objects::str_at(c, &["spec", "group"]) == crate::cluster::catalog::TRAINER_GROUP);
    let refused: Vec<String> = trainer
        .flat_map(|c| {
            let name = crate::objects::str_at(c, &["metadata", "name"]).to_string();
            crd_write::issues(c, &kube, CrdWrite::Create).unwrap_or_default().into_iter().map(move |i| (name.clone(), i))
        })
        .filter(|(_, i)| i.kind == IssueKind::Compile && i.accepted_from.as_ref().is_some_and(|from| *from > kube))
        .map(|(crd, i)| {
            let from = i.accepted_from.as_ref().map(ToString::to_string).unwrap_or_default();
            format!("{crd} at {}: {} (compiles from Kubernetes {from})", i.path, i.message)
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(UpgradeError::Usage(format!(
        "--kube-version {kube} contradicts the CRDs installed in the cluster: a Kubernetes {kube} API server could not have created them ({}). Pass the cluster's real version",
        refused.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn controller(namespace: &str, image: &str, instance: Option<&str>) -> serde_json::Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "kubeflow-trainer-controller-manager", "namespace": namespace, "labels": {}},
            "spec": {"template": {"spec": {"containers": [{"name": "manager", "image": image}]}}}});
        if let Some(i) = instance {
            d["metadata"]["labels"]["app.kubernetes.io/instance"] = json!(i);
        }
        d
    }

    fn state(objects: Vec<serde_json::Value>) -> ClusterState {
        ClusterState::from_objects(Default::default(), objects, Vec::new())
    }

    fn request(namespace: Option<&str>, release: Option<&str>) -> Request {
        Request { namespace: namespace.map(Into::into), release: release.map(Into::into), ..Request::default() }
    }

    #[test]
    fn the_flags_select_one_install_or_are_refused_naming_the_ones_found() {
        let image = "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.0";
        let one = state(vec![controller("ml", image, Some("trainer"))]);
        let picked = select_install(&request(None, None), &one, &[]).unwrap().unwrap();
        assert_eq!((picked.namespace.as_str(), picked.version.as_deref()), ("ml", Some("2.2.0")));
        assert!(select_install(&request(Some("ml"), Some("trainer")), &one, &[]).unwrap().is_some());
        let err = select_install(&request(Some("other"), None), &one, &[]).unwrap_err().to_string();
        assert!(
            err.contains("namespace other holds no Trainer install")
                && err.contains("Deployment ml/kubeflow-trainer-controller-manager (unknown, 2.2.0, rendered as release trainer)"),
            "{err}"
        );
        let err = select_install(&request(None, Some("kubeflow-trainer")), &one, &[]).unwrap_err().to_string();
        assert!(err.contains("release kubeflow-trainer holds no Trainer install"), "{err}");
        // Manifests without a release: a release name is the one Helm will create.
        let kustomize = state(vec![controller("ml", image, None)]);
        assert!(select_install(&request(None, Some("new")), &kustomize, &[]).unwrap().is_some());
        // Two installs and nothing to pick one.
        let two = state(vec![controller("a", image, None), controller("b", image, None)]);
        assert!(select_install(&request(None, None), &two, &[]).unwrap_err().to_string().contains("several Trainer installs"));
        assert_eq!(select_install(&request(Some("b"), None), &two, &[]).unwrap().unwrap().namespace, "b");
        assert!(select_install(&request(Some("x"), None), &state(Vec::new()), &[]).unwrap().is_none(), "nothing installed: --from decides");
    }

    #[test]
    fn from_is_refused_only_when_the_cluster_tells_another_version() {
        let found = InstalledVersion { version: "2.2.1".into(), evidence: "Helm release ns/r revision 2".into() };
        assert!(check_from("2.2.1", Some(&found)).is_ok());
        assert!(check_from("v2.2.1", Some(&found)).is_ok());
        let err = check_from("9.9.9", Some(&found)).unwrap_err().to_string();
        assert!(err.contains("--from 9.9.9") && err.contains("Helm release ns/r revision 2 says 2.2.1"), "{err}");
        assert!(check_from("2.2.0", None).is_ok(), "a cluster that tells nothing takes --from");
        let latest = InstalledVersion { version: "latest".into(), evidence: "controller image x:latest".into() };
        assert!(check_from("2.2.0", Some(&latest)).is_ok(), "an image tag that is no version tells nothing");
        assert!(check_from_chart("c", "2.2.0", &semver::Version::new(2, 2, 1), "e")
            .unwrap_err()
            .to_string()
            .contains("pass the chart of 2.2.1"));
    }
}
