//! How Trainer was installed and which version runs, with the evidence for each conclusion:
//! per object from ownership labels, annotations and field managers (Helm, Argo CD, Flux,
//! kubectl/kustomize), overall from the controller Deployment and the Trainer CRDs; the version
//! from the Helm release, else the controller image tag, else `kubeflow-trainer-public`.
//! Sources: Helm's ownership metadata (helm v4.2.3 `pkg/action/validate.go`), the Trainer
//! kustomize manifests (kubeflow/trainer v2.3.0 `manifests/base/`), the `kubeflow-trainer-public`
//! ConfigMap (v2.3.0 `charts/kubeflow-trainer/templates/manager/public-configmap.yaml`).

use serde::Serialize;
use serde_json::Value as Json;

use super::catalog::TRAINER_GROUP;
use super::neighbours::{deployment_version, is_trainer_manager, VersionRead, TRAINER_IMAGE};
use super::release::Release;
use super::ClusterState;
use crate::engine::Method;
use crate::objects::str_at;

/// How Trainer (or one object of it) was installed, and what shows it.
#[derive(Debug, Clone, Serialize)]
pub struct InstallMethod {
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
pub fn object_method(o: &Json) -> InstallMethod {
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
    InstallMethod { method, evidence }
}

/// The Trainer objects the verdict rests on: the controller Deployment(s) and the Trainer CRDs.
fn trainer_objects(state: &ClusterState) -> Vec<&Json> {
    state
        .of_kind("Deployment")
        .filter(|d| is_trainer_manager(d))
        .chain(state.crds().filter(|c| str_at(c, &["spec", "group"]) == TRAINER_GROUP))
        .collect()
}

/// The install method overall: the most common among Trainer objects (a release record alone
/// means Helm when objects show nothing else).
pub fn overall(state: &ClusterState, releases: &[Release]) -> InstallMethod {
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
            InstallMethod { method: m, evidence }
        }
        (None, Some(r)) => InstallMethod {
            method: Method::Helm,
            evidence: vec![format!(
                "Helm release {}/{} revision {} ({})",
                r.current.namespace, r.current.name, r.current.revision, r.current.status
            )],
        },
        (None, None) if objects.is_empty() => {
            InstallMethod { method: Method::Unknown, evidence: vec!["no Trainer controller Deployment or CRDs found".into()] }
        }
        (None, None) => InstallMethod { method: Method::Unknown, evidence: counts.remove(&Method::Unknown).unwrap_or_default() },
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
        return Some(release_version(r));
    }
    for d in state.of_kind("Deployment").filter(|d| is_trainer_manager(d)) {
        if let Some((version, from)) = image_version(d) {
            return Some(InstalledVersion { version, evidence: format!("controller {from}") });
        }
    }
    let public = state.public_configmap()?;
    let v = str_at(public, &["data", "kubeflow_trainer_version"]);
    (!v.is_empty()).then(|| InstalledVersion {
        version: v.trim_start_matches('v').to_string(),
        evidence: format!("ConfigMap {}/kubeflow-trainer-public kubeflow_trainer_version={v}", str_at(public, &["metadata", "namespace"])),
    })
}

/// The version a Helm release's upgrade starts from ([`Release::base`]: Helm's own choice of
/// revision), with the evidence: that revision, and why it is not the last one when it is not.
pub fn release_version(r: &Release) -> InstalledVersion {
    use super::release::Route;
    let (base, last) = (r.base(), &r.current);
    let at = |rec: &super::release::ReleaseRecord| {
        format!("Helm release {}/{} revision {} (chart {})", rec.namespace, rec.name, rec.revision, rec.chart())
    };
    let evidence = match r.route() {
        Route::Upgrade { from } if from == last.revision => at(base),
        Route::Upgrade { .. } => format!(
            "{}, the deployed revision helm upgrade starts from: the last, revision {} ({}), is {}",
            at(base),
            last.revision,
            last.chart(),
            last.status
        ),
        Route::Rollback { to, .. } if to == last.revision => {
            format!("{}, {}: helm upgrade refuses it until it is rolled back to itself (TA-REL-001/TA-REL-003)", at(base), last.status)
        }
        Route::Rollback { .. } => format!(
            "{}, which its {} revision {} ({}) is rolled back to first (helm upgrade refuses it until then)",
            at(base),
            last.status,
            last.revision,
            last.chart()
        ),
        Route::Reinstall { finish_uninstall: false } => format!(
            "{}, uninstalled: helm upgrade --install installs the target afresh as revision {} over what it left",
            at(base),
            last.revision + 1
        ),
        Route::Reinstall { finish_uninstall: true } => format!(
            "{}, uninstalling: once the uninstall is finished (TA-REL-003), helm upgrade --install installs the target afresh as revision {} over what it left",
            at(base),
            last.revision + 1
        ),
    };
    InstalledVersion { version: base.chart_version.clone(), evidence }
}

/// One Trainer install the cluster holds: a Helm release of `kubeflow-trainer`, or a controller
/// Deployment no such release owns (kustomize, Argo CD, Flux…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Install {
    pub namespace: String,
    /// The Helm release's name, or the controller Deployment's when there is no release.
    pub name: String,
    /// Whether `name` is a Helm release (a Deployment otherwise).
    pub helm_release: bool,
    pub method: Method,
    pub version: Option<String>,
    /// For a Deployment: the release a chart was rendered as (`app.kubernetes.io/instance`, set
    /// by the chart when Argo CD or Flux render it); None for kustomize manifests.
    pub rendered_as: Option<String>,
    /// For a Deployment: the controller image the version was read from (None when a label told it).
    pub image: Option<String>,
}

impl std::fmt::Display for Install {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.helm_release { "" } else { "Deployment " };
        let version = self.version.as_deref().unwrap_or("version unknown");
        let release = self.rendered_as.as_deref().map(|r| format!(", rendered as release {r}")).unwrap_or_default();
        write!(f, "{what}{}/{} ({}, {version}{release})", self.namespace, self.name, self.method.describe())
    }
}

/// The version the controller Deployment runs (`v2.2.1` → `2.2.1`) and what tells it: its
/// manager image's tag whatever the registry, else its `app.kubernetes.io/version` label
/// (`neighbours::deployment_version`); None when neither does.
pub fn image_version(deployment: &Json) -> Option<(String, String)> {
    match deployment_version(deployment, &|i| i.repository.rsplit('/').next() == Some(TRAINER_IMAGE)) {
        VersionRead::Known { version, from } => Some((version, from)),
        VersionRead::Unknown(_) => None,
    }
}

/// Why the running controller's version cannot be told (digest only, `latest`, no label).
pub fn image_version_unknown(deployment: &Json) -> Option<String> {
    match deployment_version(deployment, &|i| i.repository.rsplit('/').next() == Some(TRAINER_IMAGE)) {
        VersionRead::Known { .. } => None,
        VersionRead::Unknown(why) => Some(why),
    }
}

/// Every Trainer install, Helm releases first (by namespace and name), then the controller
/// Deployments in namespaces without a Trainer release.
pub fn installs(state: &ClusterState, releases: &[Release]) -> Vec<Install> {
    let mut found: Vec<Install> = releases
        .iter()
        .filter(|r| r.current.chart_name == "kubeflow-trainer")
        .map(|r| Install {
            namespace: r.current.namespace.clone(),
            name: r.current.name.clone(),
            helm_release: true,
            method: Method::Helm,
            version: Some(r.base().chart_version.clone()),
            rendered_as: None,
            image: None,
        })
        .collect();
    found.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    for d in state.of_kind("Deployment").filter(|d| is_trainer_manager(d)) {
        let namespace = str_at(d, &["metadata", "namespace"]);
        if found.iter().any(|i| i.helm_release && i.namespace == namespace) {
            continue;
        }
        let image = image_version(d);
        found.push(Install {
            namespace: namespace.to_string(),
            name: str_at(d, &["metadata", "name"]).to_string(),
            helm_release: false,
            method: object_method(d).method,
            version: image.as_ref().map(|(v, _)| v.clone()),
            image: image.and_then(|(_, from)| from.strip_prefix("image ").map(str::to_string)),
            rendered_as: Some(str_at(d, &["metadata", "labels", "app.kubernetes.io/instance"]).to_string()).filter(|r| !r.is_empty()),
        });
    }
    found
}
