//! How Trainer was installed and which version runs, with the evidence for each conclusion:
//! per object from ownership labels, annotations and field managers (Helm, Argo CD, Flux,
//! kubectl/kustomize), overall from the controller Deployment and the Trainer CRDs; the version
//! from the Helm release, else the controller image tag, else `kubeflow-trainer-public`.
//! Sources: Helm's ownership metadata (helm v4.2.3 `pkg/action/validate.go`), the Trainer
//! kustomize manifests (kubeflow/trainer v2.3.0 `manifests/base/`), the `kubeflow-trainer-public`
//! ConfigMap (v2.3.0 `charts/kubeflow-trainer/templates/manager/public-configmap.yaml`).

use serde::Serialize;
use serde_json::Value as Json;

use super::catalog::{CONTROLLER_DEPLOYMENT, TRAINER_GROUP};
use super::release::Release;
use super::ClusterState;
use crate::kube::str_at;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    Helm,
    /// Spelt `argocd` as everywhere else (the `argocd` CLI, `--engine argocd`, the rules).
    #[serde(rename = "argocd")]
    ArgoCd,
    FluxHelm,
    FluxKustomize,
    /// `kubectl apply` / kustomize (client- or server-side).
    Kubectl,
    Unknown,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Helm => "Helm",
            Method::ArgoCd => "Argo CD",
            Method::FluxHelm => "Flux helm-controller",
            Method::FluxKustomize => "Flux kustomize-controller",
            Method::Kubectl => "kubectl / kustomize",
            Method::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub method: Method,
    pub evidence: Vec<String>,
}

fn managers(o: &Json) -> Vec<&str> {
    o.pointer("/metadata/managedFields")
        .and_then(Json::as_array)
        .map(|f| f.iter().map(|e| str_at(e, &["manager"])).collect())
        .unwrap_or_default()
}

/// The method one object shows, with what shows it.
pub fn object_method(o: &Json) -> Verdict {
    let label = |k: &str| str_at(o, &["metadata", "labels", k]);
    let annotation = |k: &str| str_at(o, &["metadata", "annotations", k]);
    let managers = managers(o);
    let has_manager = |m: &str| managers.contains(&m);
    let mut evidence = Vec::new();
    let method = if !label("helm.toolkit.fluxcd.io/name").is_empty() || has_manager("helm-controller") {
        evidence.push(format!("label helm.toolkit.fluxcd.io/name={}", label("helm.toolkit.fluxcd.io/name")));
        Method::FluxHelm
    } else if !label("kustomize.toolkit.fluxcd.io/name").is_empty() || has_manager("kustomize-controller") {
        evidence.push(format!("label kustomize.toolkit.fluxcd.io/name={}", label("kustomize.toolkit.fluxcd.io/name")));
        Method::FluxKustomize
    } else if !annotation("argocd.argoproj.io/tracking-id").is_empty() || has_manager("argocd-controller") {
        if !annotation("argocd.argoproj.io/tracking-id").is_empty() {
            evidence.push(format!("annotation argocd.argoproj.io/tracking-id={}", annotation("argocd.argoproj.io/tracking-id")));
        }
        if has_manager("argocd-controller") {
            evidence.push("field manager argocd-controller".into());
        }
        Method::ArgoCd
    } else if !annotation("meta.helm.sh/release-name").is_empty() {
        evidence.push(format!(
            "annotations meta.helm.sh/release-name={}, meta.helm.sh/release-namespace={}",
            annotation("meta.helm.sh/release-name"),
            annotation("meta.helm.sh/release-namespace")
        ));
        if label("app.kubernetes.io/managed-by") == "Helm" {
            evidence.push("label app.kubernetes.io/managed-by=Helm".into());
        }
        Method::Helm
    } else if has_manager("helm") {
        // Helm created it without release metadata: a chart's crds/ file.
        evidence.push("field manager helm without meta.helm.sh annotations (created from a chart's crds/, not a release object)".into());
        Method::Helm
    } else if managers.iter().any(|m| m.starts_with("kubectl")) {
        evidence.push(format!("field managers {}", managers.join(", ")));
        if label("app.kubernetes.io/managed-by") == "Helm" {
            evidence.push(
                "label app.kubernetes.io/managed-by=Helm without meta.helm.sh annotations (rendered by Helm, applied by kubectl)".into(),
            );
        }
        Method::Kubectl
    } else {
        if !managers.is_empty() {
            evidence.push(format!("field managers {}", managers.join(", ")));
        }
        Method::Unknown
    };
    Verdict { method, evidence }
}

/// The Trainer objects the verdict rests on: the controller Deployment(s) and the Trainer CRDs.
fn trainer_objects(state: &ClusterState) -> Vec<&Json> {
    state
        .of_kind("Deployment")
        .filter(|d| str_at(d, &["metadata", "name"]) == CONTROLLER_DEPLOYMENT)
        .chain(state.crds().filter(|c| str_at(c, &["spec", "group"]) == TRAINER_GROUP))
        .collect()
}

/// The install method overall: the most common among Trainer objects (a release record alone
/// means Helm when objects show nothing else).
pub fn overall(state: &ClusterState, releases: &[Release]) -> Verdict {
    let objects = trainer_objects(state);
    let mut counts: std::collections::BTreeMap<Method, Vec<String>> = Default::default();
    for o in &objects {
        let v = object_method(o);
        let who = format!("{}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "name"]));
        counts.entry(v.method).or_default().extend(v.evidence.into_iter().map(|e| format!("{who}: {e}")));
        if counts.get(&v.method).is_some_and(Vec::is_empty) {
            counts.entry(v.method).or_default().push(format!("{who}: no ownership metadata"));
        }
    }
    let tally = |m: &Method| objects.iter().filter(|o| object_method(o).method == *m).count();
    let best = counts.keys().filter(|m| **m != Method::Unknown).max_by_key(|m| (tally(m), std::cmp::Reverse(**m))).copied();
    let trainer_release = releases.iter().find(|r| r.current.chart_name == "kubeflow-trainer");
    match (best, trainer_release) {
        (Some(m), release) => {
            let mut evidence = counts.remove(&m).unwrap_or_default();
            if let Some(r) = release {
                evidence.push(format!(
                    "Helm release {}/{} revision {} ({})",
                    r.current.namespace, r.current.name, r.current.revision, r.current.status
                ));
            }
            Verdict { method: m, evidence }
        }
        (None, Some(r)) => Verdict {
            method: Method::Helm,
            evidence: vec![format!(
                "Helm release {}/{} revision {} ({})",
                r.current.namespace, r.current.name, r.current.revision, r.current.status
            )],
        },
        (None, None) if objects.is_empty() => {
            Verdict { method: Method::Unknown, evidence: vec!["no Trainer controller Deployment or CRDs found".into()] }
        }
        (None, None) => Verdict { method: Method::Unknown, evidence: counts.remove(&Method::Unknown).unwrap_or_default() },
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct InstalledVersion {
    pub version: String,
    pub evidence: String,
}

/// The installed Trainer version and the evidence used.
pub fn installed_version(state: &ClusterState, releases: &[Release]) -> Option<InstalledVersion> {
    if let Some(r) = releases.iter().find(|r| r.current.chart_name == "kubeflow-trainer") {
        return Some(InstalledVersion {
            version: r.current.chart_version.clone(),
            evidence: format!(
                "Helm release {}/{} revision {} (chart kubeflow-trainer-{})",
                r.current.namespace, r.current.name, r.current.revision, r.current.chart_version
            ),
        });
    }
    for d in state.of_kind("Deployment").filter(|d| str_at(d, &["metadata", "name"]) == CONTROLLER_DEPLOYMENT) {
        for c in crate::kube::workload::containers(d) {
            let image = crate::kube::workload::ImageRef::parse(&c.image);
            if image.repository.ends_with("trainer-controller-manager") && !image.tag.is_empty() {
                let version = image.tag.trim_start_matches('v').to_string();
                return Some(InstalledVersion { version, evidence: format!("controller image {}", c.image) });
            }
        }
    }
    let public = state.public_configmap()?;
    let v = str_at(public, &["data", "kubeflow_trainer_version"]);
    (!v.is_empty()).then(|| InstalledVersion {
        version: v.trim_start_matches('v').to_string(),
        evidence: format!("ConfigMap {}/kubeflow-trainer-public kubeflow_trainer_version={v}", str_at(public, &["metadata", "namespace"])),
    })
}
