//! The components Trainer depends on or runs beside (Kueue, JobSet, LWS, the scheduler-plugins
//! coscheduling scheduler, Volcano, the legacy Training Operator, cert-manager): how each is
//! recognised read-only — its CRDs, its Deployments' images, names and labels, its Helm release
//! records (kept as stubs naming the chart) — which of those objects a cluster state keeps and
//! how far they are trimmed, and what is installed: presence, version and the evidence for both.
//!
//! Names, images and charts were read in each project's own manifests and charts (cited per
//! component in [`Component::source`]).

use serde::Serialize;
use serde_json::Value as Json;

use super::release::{is_stub, STUB_APP_VERSION, STUB_CHART, STUB_VERSION};
use super::ClusterState;
use crate::objects::str_at;
use crate::objects::workload::ImageRef;

/// How one component is recognised.
#[derive(Debug)]
pub struct Component {
    /// Stable id (`kueue`), as rules and JSON name it.
    pub id: &'static str,
    pub name: &'static str,
    /// CRDs whose presence shows it.
    pub crds: &'static [&'static str],
    /// Image repositories, by their last path segments (`kueue/kueue` matches
    /// `registry.k8s.io/kueue/kueue`).
    pub images: &'static [&'static str],
    /// Deployment names of its default installs (a trailing `-` match, so a Helm release prefix
    /// like `kubeflow-trainer-lws-controller-manager` counts).
    pub deployments: &'static [&'static str],
    /// A Deployment label that marks it.
    pub label: Option<(&'static str, &'static str)>,
    /// Helm chart names.
    pub charts: &'static [&'static str],
    pub source: &'static str,
}

pub const KUEUE: &str = "kueue";
pub const JOBSET: &str = "jobset";
pub const LWS: &str = "lws";
pub const SCHEDULER_PLUGINS: &str = "scheduler-plugins";
pub const VOLCANO: &str = "volcano";
pub const TRAINING_OPERATOR: &str = "training-operator";
pub const CERT_MANAGER: &str = "cert-manager";

pub const COMPONENTS: &[Component] = &[
    Component {
        id: KUEUE,
        name: "Kueue",
        crds: &["clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"],
        images: &["kueue/kueue"],
        deployments: &["kueue-controller-manager"],
        label: None,
        charts: &["kueue"],
        source: "kubernetes-sigs/kueue@v0.17.0 config/default/kustomization.yaml#L2,#L9 (namespace kueue-system, prefix kueue-), charts/kueue/templates/manager/manager.yaml (<fullname>-controller-manager)",
    },
    Component {
        id: JOBSET,
        name: "JobSet",
        crds: &["jobsets.jobset.x-k8s.io"],
        images: &["jobset/jobset"],
        deployments: &["jobset-controller-manager", "jobset-controller"],
        label: None,
        charts: &["jobset"],
        source: "kubernetes-sigs/jobset@v0.12.0 config/default/kustomization.yaml (jobset-system, jobset-controller-manager); the Trainer chart's subchart renders jobset-controller (fullnameOverride jobset)",
    },
    Component {
        id: LWS,
        name: "LeaderWorkerSet",
        crds: &["leaderworkersets.leaderworkerset.x-k8s.io"],
        images: &["lws/lws"],
        deployments: &["lws-controller-manager"],
        label: None,
        charts: &["lws"],
        source: "kubernetes-sigs/lws@v0.10.0 config/default/kustomization.yaml (lws-system, lws-controller-manager); the Trainer chart's subchart renders <release>-lws-controller-manager",
    },
    Component {
        id: SCHEDULER_PLUGINS,
        name: "scheduler-plugins",
        crds: &["podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"],
        images: &["scheduler-plugins/kube-scheduler", "scheduler-plugins/controller"],
        deployments: &["scheduler-plugins-scheduler", "scheduler-plugins-controller"],
        label: None,
        charts: &["scheduler-plugins"],
        source: "kubernetes-sigs/scheduler-plugins manifests/install/charts/as-a-second-scheduler/values.yaml (scheduler.name scheduler-plugins-scheduler, controller.name scheduler-plugins-controller, images registry.k8s.io/scheduler-plugins/kube-scheduler and /controller, read at the chart for v0.35.7 images), templates/crds/podgroup.yaml",
    },
    Component {
        id: VOLCANO,
        name: "Volcano",
        crds: &["podgroups.scheduling.volcano.sh", "queues.scheduling.volcano.sh"],
        images: &["volcanosh/vc-scheduler", "volcanosh/vc-controller-manager", "volcanosh/vc-webhook-manager"],
        deployments: &["volcano-scheduler", "volcano-controllers", "volcano-admission"],
        label: Some(("app", "volcano-scheduler")),
        charts: &["volcano"],
        source: "volcano-sh/volcano installer/helm/chart/volcano/templates/scheduler.yaml (Deployment <release>-scheduler labelled app: volcano-scheduler), crd/bases/scheduling.volcano.sh_podgroups.yaml, values.yaml (docker.io volcanosh/vc-scheduler, vc-controller-manager, vc-webhook-manager)",
    },
    Component {
        id: TRAINING_OPERATOR,
        name: "Training Operator v1",
        crds: &[
            "pytorchjobs.kubeflow.org",
            "tfjobs.kubeflow.org",
            "mpijobs.kubeflow.org",
            "xgboostjobs.kubeflow.org",
            "paddlejobs.kubeflow.org",
            "jaxjobs.kubeflow.org",
        ],
        images: &["training-operator"],
        deployments: &["training-operator"],
        label: Some(("control-plane", "kubeflow-training-operator")),
        charts: &["training-operator"],
        source: "kubeflow/trainer@v1.9.4 manifests/base/deployment.yaml#L4-L23 (training-operator, control-plane: kubeflow-training-operator, ghcr.io/kubeflow/training-v1/training-operator), manifests/base/crds/ (jaxjobs from v1.9.0; mxjobs until v1.8.1)",
    },
    Component {
        id: CERT_MANAGER,
        name: "cert-manager",
        crds: &["certificates.cert-manager.io", "issuers.cert-manager.io"],
        images: &["cert-manager-controller"],
        deployments: &["cert-manager"],
        label: None,
        charts: &["cert-manager"],
        source: "cert-manager/cert-manager@v1.21.1 deploy/charts/cert-manager/templates/deployment.yaml (<fullname>, app.kubernetes.io/component: controller), values.yaml (image cert-manager-controller)",
    },
];

/// Helm charts whose release records are kept (as stubs).
pub const CHARTS: &[&str] = &["kueue", "jobset", "lws", "scheduler-plugins", "volcano", "training-operator", "cert-manager"];

/// CRD groups kept besides Trainer's own: only names and served versions (their schemas are
/// large and no check reads them).
pub const CRD_GROUPS: &[&str] = &["kueue.x-k8s.io", "scheduling.x-k8s.io", "scheduling.volcano.sh", "cert-manager.io"];

pub fn component(id: &str) -> Option<&'static Component> {
    COMPONENTS.iter().find(|c| c.id == id)
}

fn images(d: &Json) -> Vec<ImageRef> {
    d.pointer("/spec/template/spec/containers")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("image").and_then(Json::as_str))
        .map(ImageRef::parse)
        .collect()
}

fn repository_matches(repository: &str, suffix: &str) -> bool {
    repository == suffix || repository.ends_with(&format!("/{suffix}"))
}

fn name_matches(name: &str, default: &str) -> bool {
    name == default || name.ends_with(&format!("-{default}"))
}

/// The component a Deployment belongs to: by image first, then by name or label.
pub fn component_of_deployment(d: &Json) -> Option<&'static Component> {
    let images = images(d);
    let name = str_at(d, &["metadata", "name"]);
    COMPONENTS.iter().find(|c| images.iter().any(|i| c.images.iter().any(|s| repository_matches(&i.repository, s)))).or_else(|| {
        COMPONENTS.iter().find(|c| {
            c.deployments.iter().any(|n| name_matches(name, n)) || c.label.is_some_and(|(k, v)| str_at(d, &["metadata", "labels", k]) == v)
        })
    })
}

/// A Trainer controller Deployment, under any release name.
pub fn is_trainer_deployment(d: &Json) -> bool {
    if images(d).iter().any(|i| i.repository.ends_with("trainer-controller-manager")) {
        return true;
    }
    // Subcharts of a Trainer release carry its name (`kubeflow-trainer-lws-controller-manager`).
    if component_of_deployment(d).is_some() {
        return false;
    }
    let name = str_at(d, &["metadata", "name"]);
    name == super::catalog::CONTROLLER_DEPLOYMENT
        || str_at(d, &["metadata", "labels", "app.kubernetes.io/name"]) == "kubeflow-trainer"
        || name.contains("trainer")
}

/// Deployments a state keeps: Trainer's and the neighbours'.
pub fn keep_deployment(d: &Json) -> bool {
    is_trainer_deployment(d) || component_of_deployment(d).is_some()
}

/// A neighbour's Deployment keeps its metadata, selector and containers' names, images and args
/// (what recognising it, ownership and selector checks read); the rest of its pod spec and its
/// status go. Trainer's own Deployment is kept whole.
pub fn trim_deployment(d: &mut Json) {
    if is_trainer_deployment(d) {
        return;
    }
    if let Some(obj) = d.as_object_mut() {
        obj.remove("status");
    }
    if let Some(spec) = d.pointer_mut("/spec/template/spec").and_then(Json::as_object_mut) {
        let containers: Vec<Json> = spec
            .get("containers")
            .and_then(Json::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let mut kept = serde_json::Map::new();
                        for key in ["name", "image", "command", "args"] {
                            if let Some(v) = c.get(key) {
                                kept.insert(key.to_string(), v.clone());
                            }
                        }
                        Json::Object(kept)
                    })
                    .collect()
            })
            .unwrap_or_default();
        spec.clear();
        spec.insert("containers".into(), Json::Array(containers));
    }
}

/// A neighbour CRD keeps its identity and served versions, not its schema.
pub fn trim_crd(crd: &mut Json) {
    if let Some(versions) = crd.pointer_mut("/spec/versions").and_then(Json::as_array_mut) {
        for v in versions.iter_mut().filter_map(Json::as_object_mut) {
            v.retain(|k, _| matches!(k.as_str(), "name" | "served" | "storage"));
        }
    }
    if let Some(obj) = crd.as_object_mut() {
        obj.remove("status");
    }
}

/// What is installed of one component.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Neighbour {
    pub id: String,
    pub component: String,
    pub present: bool,
    /// `0.17.0`, or a bound (`>= 1.9`) when only that can be told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What shows presence and version, each a short sentence naming the object.
    pub evidence: Vec<String>,
}

impl Neighbour {
    /// The version as semver, when it is one.
    pub fn semver(&self) -> Option<semver::Version> {
        self.version.as_deref().and_then(|v| helm_render::version::parse_lenient(v.trim_start_matches('v')))
    }
}

/// A version from an image tag (`v0.17.0`, `0.12.0`; not `main` or `v1-93c5489`).
fn tag_version(tag: &str) -> Option<String> {
    let t = tag.trim_start_matches('v');
    let core = t.split(['-', '+']).next().unwrap_or(t);
    (core.split('.').count() == 3 && helm_render::version::parse_strict(t).is_some()).then(|| t.to_string())
}

fn served(crd: &Json) -> String {
    let names: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("served").and_then(Json::as_bool) == Some(true))
        .map(|v| str_at(v, &["name"]))
        .collect();
    names.join(",")
}

/// What is installed of `c`, from the state.
pub fn detect_one(state: &ClusterState, c: &Component) -> Neighbour {
    let mut evidence = Vec::new();
    let mut version: Option<String> = None;
    let crds: Vec<&Json> = c.crds.iter().filter_map(|n| state.crd(n)).collect();
    for crd in &crds {
        evidence.push(format!("CRD {} (served {})", str_at(crd, &["metadata", "name"]), served(crd)));
    }
    for d in state.of_kind("Deployment").filter(|d| !is_trainer_deployment(d) && component_of_deployment(d).is_some_and(|x| x.id == c.id)) {
        let at = format!("Deployment {}/{}", str_at(d, &["metadata", "namespace"]), str_at(d, &["metadata", "name"]));
        let image = images(d).into_iter().find(|i| c.images.iter().any(|s| repository_matches(&i.repository, s)));
        match image {
            Some(i) => {
                if version.is_none() {
                    version = tag_version(&i.tag);
                }
                evidence.push(format!("{at} image {}", i.reference));
            }
            None => evidence.push(at.clone()),
        }
        let label = str_at(d, &["metadata", "labels", "app.kubernetes.io/version"]);
        if version.is_none() && !label.is_empty() {
            version = tag_version(label);
            evidence.push(format!("{at} label app.kubernetes.io/version={label}"));
        }
    }
    let mut records: Vec<&Json> =
        state.objects.iter().filter(|o| is_stub(o) && c.charts.contains(&str_at(o, &["metadata", "annotations", STUB_CHART]))).collect();
    // The newest revision of each release speaks for it.
    records.sort_by_key(|o| str_at(o, &["metadata", "labels", "version"]).parse::<u64>().unwrap_or(0));
    if let Some(r) = records.last() {
        let chart_version = str_at(r, &["metadata", "annotations", STUB_VERSION]);
        let app = str_at(r, &["metadata", "annotations", STUB_APP_VERSION]);
        evidence.push(format!(
            "Helm release {}/{} chart {}-{chart_version}{}",
            str_at(r, &["metadata", "namespace"]),
            str_at(r, &["metadata", "labels", "name"]),
            str_at(r, &["metadata", "annotations", STUB_CHART]),
            if app.is_empty() { String::new() } else { format!(" (app {app})") }
        ));
        if version.is_none() {
            version = tag_version(app).or_else(|| tag_version(chart_version));
        }
    }
    if c.id == TRAINING_OPERATOR && version.is_none() {
        // Its image tags are commits; the CRD set bounds the release.
        if state.crd("jaxjobs.kubeflow.org").is_some() {
            version = Some(">= 1.9".into());
            evidence.push("jaxjobs.kubeflow.org exists from v1.9.0".into());
        } else if state.crd("mxjobs.kubeflow.org").is_some() {
            version = Some("<= 1.8".into());
            evidence.push("mxjobs.kubeflow.org exists until v1.8.1".into());
        }
    }
    Neighbour {
        id: c.id.to_string(),
        component: c.name.to_string(),
        present: evidence.iter().any(|e| !e.starts_with("jaxjobs") && !e.starts_with("mxjobs")),
        version,
        evidence,
    }
}

/// Every component, in [`COMPONENTS`] order.
pub fn detect(state: &ClusterState) -> Vec<Neighbour> {
    COMPONENTS.iter().map(|c| detect_one(state, c)).collect()
}

/// What is installed of the component `id` (absent for an unknown id).
pub fn find(state: &ClusterState, id: &str) -> Neighbour {
    match component(id) {
        Some(c) => detect_one(state, c),
        None => Neighbour { id: id.to_string(), component: id.to_string(), present: false, version: None, evidence: Vec::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterInfo;
    use serde_json::json;

    fn deployment(ns: &str, name: &str, image: &str) -> Json {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"serviceAccountName": "x",
                "containers": [{"name": "manager", "image": image, "args": ["--zap-log-level=2"], "env": [{"name": "A"}]}]}}},
            "status": {"replicas": 1}})
    }

    #[test]
    fn deployments_are_recognised_by_image_name_or_label() {
        let kueue = deployment("kueue-system", "kueue-controller-manager", "registry.k8s.io/kueue/kueue:v0.17.0");
        assert_eq!(component_of_deployment(&kueue).map(|c| c.id), Some(KUEUE));
        let renamed = deployment("q", "my-queue", "us-central1-docker.pkg.dev/k8s-staging-images/kueue/kueue:release-0.17");
        assert_eq!(component_of_deployment(&renamed).map(|c| c.id), Some(KUEUE));
        let lws = deployment("kubeflow-system", "kubeflow-trainer-lws-controller-manager", "example.com/mirror/lws:main");
        assert_eq!(component_of_deployment(&lws).map(|c| c.id), Some(LWS), "by name under a release prefix");
        let mut to = deployment("kubeflow", "tj", "example.com/op:latest");
        to["metadata"]["labels"] = json!({"control-plane": "kubeflow-training-operator"});
        assert_eq!(component_of_deployment(&to).map(|c| c.id), Some(TRAINING_OPERATOR));
        let nginx = deployment("web", "nginx", "nginx:1.27");
        assert!(component_of_deployment(&nginx).is_none() && !keep_deployment(&nginx));
        let trainer = deployment(
            "kubeflow-system",
            "kubeflow-trainer-controller-manager",
            "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0",
        );
        assert!(keep_deployment(&trainer) && is_trainer_deployment(&trainer));
        let mut trimmed = kueue.clone();
        trim_deployment(&mut trimmed);
        assert_eq!(
            trimmed["spec"]["template"]["spec"],
            json!({"containers": [{"name": "manager", "image": "registry.k8s.io/kueue/kueue:v0.17.0", "args": ["--zap-log-level=2"]}]})
        );
        assert!(trimmed.get("status").is_none() && trimmed["spec"]["selector"] == kueue["spec"]["selector"]);
        let mut whole = trainer.clone();
        trim_deployment(&mut whole);
        assert_eq!(whole, trainer, "Trainer's own Deployment stays whole");
    }

    #[test]
    fn versions_come_from_images_labels_records_and_crds() {
        let crd = |name: &str| {
            let (plural, group) = name.split_once('.').unwrap();
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name},
                "spec": {"group": group, "names": {"plural": plural}, "versions": [{"name": "v1", "served": true, "storage": true}]}})
        };
        let mut jobset =
            deployment("kubeflow-system", "jobset-controller", "us-central1-docker.pkg.dev/k8s-staging-images/jobset/jobset:main");
        jobset["metadata"]["labels"] = json!({"app.kubernetes.io/version": "0.12.0"});
        let stub = json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.cm.v2", "namespace": "cert-manager", "labels": {"name": "cm", "owner": "helm", "version": "2"},
                "annotations": {STUB_CHART: "cert-manager", STUB_VERSION: "v1.21.1", STUB_APP_VERSION: "v1.21.1"}}});
        let state = ClusterState::from_objects(
            ClusterInfo::default(),
            vec![
                crd("jobsets.jobset.x-k8s.io"),
                crd("pytorchjobs.kubeflow.org"),
                crd("jaxjobs.kubeflow.org"),
                jobset,
                deployment("kueue-system", "kueue-controller-manager", "registry.k8s.io/kueue/kueue:v0.17.2@sha256:abc"),
                stub,
            ],
            Vec::new(),
        );
        let all = detect(&state);
        let get = |id: &str| all.iter().find(|n| n.id == id).unwrap();
        assert_eq!(get(KUEUE).version.as_deref(), Some("0.17.2"));
        assert_eq!(get(KUEUE).semver(), Some(semver::Version::new(0, 17, 2)));
        assert_eq!(get(JOBSET).version.as_deref(), Some("0.12.0"), "{:?}", get(JOBSET).evidence);
        assert_eq!(get(CERT_MANAGER).version.as_deref(), Some("1.21.1"));
        assert!(get(CERT_MANAGER).present && !get(VOLCANO).present && get(VOLCANO).evidence.is_empty());
        assert_eq!(get(TRAINING_OPERATOR).version.as_deref(), Some(">= 1.9"));
        assert!(get(TRAINING_OPERATOR).present && get(TRAINING_OPERATOR).semver().is_none());
        assert!(!find(&state, "nope").present);
    }

    #[test]
    fn the_chart_list_covers_every_component() {
        for c in COMPONENTS {
            assert!(c.charts.iter().all(|ch| CHARTS.contains(ch)), "{}", c.id);
        }
    }
}
