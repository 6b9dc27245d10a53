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
    /// Stable id (`kueue`), as rules, JSON and `--neighbour` name it.
    pub id: &'static str,
    pub name: &'static str,
    /// CRDs whose presence shows it.
    pub crds: &'static [&'static str],
    /// Image names (the last path segment) that are this component whatever the registry and
    /// the path in front: `harbor.corp.example/mirror/kueue`, `registry.k8s.io/kueue/kueue` and
    /// `localhost:5000/kueue` are all Kueue. Only names no other project's image carries.
    pub image_names: &'static [&'static str],
    /// Image paths for names other projects share (`scheduler-plugins/kube-scheduler`: the
    /// plain `kube-scheduler` is Kubernetes' own): matched by their last segments.
    pub image_paths: &'static [&'static str],
    /// Deployment names of its default installs (a trailing `-` match, so a Helm release prefix
    /// like `kubeflow-trainer-lws-controller-manager` counts).
    pub deployments: &'static [&'static str],
    /// Deployment labels that mark it (any one).
    pub labels: &'static [(&'static str, &'static str)],
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

/// The label every chart of the field (Kueue, JobSet, LWS, Trainer up to 2.2) puts the release's
/// version in, read when an image tag does not tell it.
pub const VERSION_LABEL: &str = "app.kubernetes.io/version";
const NAME_LABEL: &str = "app.kubernetes.io/name";

pub const COMPONENTS: &[Component] = &[
    Component {
        id: KUEUE,
        name: "Kueue",
        crds: &["clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"],
        image_names: &["kueue"],
        image_paths: &[],
        deployments: &["kueue-controller-manager"],
        labels: &[(NAME_LABEL, "kueue")],
        charts: &["kueue"],
        source: "kubernetes-sigs/kueue@v0.17.0 config/default/kustomization.yaml#L2,#L9 (namespace kueue-system, prefix kueue-), charts/kueue/templates/manager/manager.yaml (<fullname>-controller-manager), charts/kueue/templates/_helpers.tpl#L52-L68 (app.kubernetes.io/name: kueue, app.kubernetes.io/version: the app version)",
    },
    Component {
        id: JOBSET,
        name: "JobSet",
        crds: &["jobsets.jobset.x-k8s.io"],
        image_names: &["jobset"],
        image_paths: &[],
        deployments: &["jobset-controller-manager", "jobset-controller"],
        labels: &[(NAME_LABEL, "jobset")],
        charts: &["jobset"],
        source: "kubernetes-sigs/jobset@v0.12.0 config/default/kustomization.yaml (jobset-system, jobset-controller-manager), charts/jobset/templates/_helpers.tpl#L50-L68 (app.kubernetes.io/name: jobset, app.kubernetes.io/version: the chart version); the Trainer chart's subchart renders jobset-controller (fullnameOverride jobset)",
    },
    Component {
        id: LWS,
        name: "LeaderWorkerSet",
        crds: &["leaderworkersets.leaderworkerset.x-k8s.io"],
        image_names: &["lws"],
        image_paths: &[],
        deployments: &["lws-controller-manager"],
        labels: &[(NAME_LABEL, "lws")],
        charts: &["lws"],
        source: "kubernetes-sigs/lws@v0.10.0 config/default/kustomization.yaml (lws-system, lws-controller-manager); the Trainer chart's subchart renders <release>-lws-controller-manager",
    },
    Component {
        id: SCHEDULER_PLUGINS,
        name: "scheduler-plugins",
        crds: &["podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"],
        image_names: &[],
        image_paths: &["scheduler-plugins/kube-scheduler", "scheduler-plugins/controller"],
        deployments: &["scheduler-plugins-scheduler", "scheduler-plugins-controller"],
        labels: &[],
        charts: &["scheduler-plugins"],
        source: "kubernetes-sigs/scheduler-plugins manifests/install/charts/as-a-second-scheduler/values.yaml (scheduler.name scheduler-plugins-scheduler, controller.name scheduler-plugins-controller, images registry.k8s.io/scheduler-plugins/kube-scheduler and /controller, read at the chart for v0.35.7 images), templates/crds/podgroup.yaml",
    },
    Component {
        id: VOLCANO,
        name: "Volcano",
        crds: &["podgroups.scheduling.volcano.sh", "queues.scheduling.volcano.sh"],
        image_names: &["vc-scheduler", "vc-controller-manager", "vc-webhook-manager"],
        image_paths: &[],
        deployments: &["volcano-scheduler", "volcano-controllers", "volcano-admission"],
        labels: &[("app", "volcano-scheduler")],
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
        image_names: &["training-operator"],
        image_paths: &[],
        deployments: &["training-operator"],
        labels: &[("control-plane", "kubeflow-training-operator")],
        charts: &["training-operator"],
        source: "kubeflow/trainer@v1.9.4 manifests/base/deployment.yaml#L4-L23 (training-operator, control-plane: kubeflow-training-operator, ghcr.io/kubeflow/training-v1/training-operator), manifests/base/crds/ (jaxjobs from v1.9.0; mxjobs until v1.8.1)",
    },
    Component {
        id: CERT_MANAGER,
        name: "cert-manager",
        crds: &["certificates.cert-manager.io", "issuers.cert-manager.io"],
        image_names: &["cert-manager-controller"],
        image_paths: &[],
        deployments: &["cert-manager"],
        labels: &[],
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

/// The Trainer manager's image name (`ghcr.io/kubeflow/trainer/trainer-controller-manager`, or
/// the same name under any mirror).
pub const TRAINER_IMAGE: &str = "trainer-controller-manager";

fn images(d: &Json) -> Vec<(String, ImageRef)> {
    d.pointer("/spec/template/spec/containers")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| Some((str_at(c, &["name"]).to_string(), ImageRef::parse(c.get("image").and_then(Json::as_str)?))))
        .collect()
}

/// The last path segment of a repository (`kueue` of `harbor.corp.example/mirror/kueue`).
fn image_name(repository: &str) -> &str {
    repository.rsplit('/').next().unwrap_or(repository)
}

fn repository_matches(repository: &str, suffix: &str) -> bool {
    repository == suffix || repository.ends_with(&format!("/{suffix}"))
}

impl Component {
    /// Whether an image is this component's, whatever registry and path it is pulled through.
    pub fn owns_image(&self, image: &ImageRef) -> bool {
        self.image_names.contains(&image_name(&image.repository))
            || self.image_paths.iter().any(|p| repository_matches(&image.repository, p))
    }
}

fn name_matches(name: &str, default: &str) -> bool {
    name == default || name.ends_with(&format!("-{default}"))
}

/// The component a Deployment belongs to: by image first (any registry), then by name or label.
pub fn component_of_deployment(d: &Json) -> Option<&'static Component> {
    let images = images(d);
    let name = str_at(d, &["metadata", "name"]);
    COMPONENTS.iter().find(|c| images.iter().any(|(_, i)| c.owns_image(i))).or_else(|| {
        COMPONENTS.iter().find(|c| {
            c.deployments.iter().any(|n| name_matches(name, n)) || c.labels.iter().any(|(k, v)| str_at(d, &["metadata", "labels", k]) == *v)
        })
    })
}

/// The Trainer controller manager's Deployment, under any release name and registry: its image
/// name, the labels its chart and its kustomize manifests give it (`app.kubernetes.io/component:
/// manager` with `app.kubernetes.io/name` `kubeflow-trainer` or `trainer`), or its default name
/// under a release prefix.
pub fn is_trainer_manager(d: &Json) -> bool {
    let label = |k: &str| str_at(d, &["metadata", "labels", k]);
    images(d).iter().any(|(_, i)| image_name(&i.repository) == TRAINER_IMAGE)
        || (label("app.kubernetes.io/component") == "manager" && matches!(label(NAME_LABEL), "kubeflow-trainer" | "trainer"))
        || name_matches(str_at(d, &["metadata", "name"]), super::catalog::CONTROLLER_DEPLOYMENT)
}

/// A Trainer Deployment, under any release name: the manager, or one whose name or labels say
/// Trainer (kept whole in a state; subcharts of a Trainer release are their components').
pub fn is_trainer_deployment(d: &Json) -> bool {
    if is_trainer_manager(d) {
        return true;
    }
    // Subcharts of a Trainer release carry its name (`kubeflow-trainer-lws-controller-manager`).
    if component_of_deployment(d).is_some() {
        return false;
    }
    let name = str_at(d, &["metadata", "name"]);
    str_at(d, &["metadata", "labels", NAME_LABEL]) == "kubeflow-trainer" || name.contains("trainer")
}

/// Deployments a state keeps: Trainer's and the neighbours'.
pub fn keep_deployment(d: &Json) -> bool {
    is_trainer_deployment(d) || component_of_deployment(d).is_some()
}

/// A neighbour's Deployment loses its status; its pod template stays whole. An upgrade of the
/// release that holds it (the JobSet controller in Trainer's release) or adopts it patches that
/// template, and whether the patch rolls it out is read against the live one, field by field
/// (`namespace-quota`, `namespace-pod-security`): a template cut to its containers' names,
/// images and args read as a rollout on every upgrade (live explorer seed 1 states 46, 50, 62: a
/// LimitRange predicted to refuse a JobSet Pod that no rollout made). A cluster holds a handful
/// of these. Trainer's own Deployment is kept whole.
pub fn trim_deployment(d: &mut Json) {
    if is_trainer_deployment(d) {
        return;
    }
    if let Some(obj) = d.as_object_mut() {
        obj.remove("status");
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
    /// Something of it was found (a CRD, a Deployment, a Helm release), and it was not declared
    /// absent (`--neighbour ID=none`).
    pub present: bool,
    /// `0.17.0`, or a bound (`>= 1.9`) when only that can be told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Why the version of a present component could not be told (digest only, `latest`, no
    /// label, no Deployment recognised), and how to declare it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_unknown: Option<String>,
    /// What shows presence and version, each a short sentence naming the object.
    pub evidence: Vec<String>,
}

impl Neighbour {
    /// The version as semver, when it is one.
    pub fn semver(&self) -> Option<semver::Version> {
        self.version.as_deref().and_then(|v| helm_render::version::parse_lenient(v.trim_start_matches('v')))
    }
}

/// A version the user declared for a component the cluster does not tell the version of
/// (`--neighbour kueue=0.16.9`), or that it does not run (`kueue=none`: only its CRDs are left).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    Version(semver::Version),
    NotRunning,
}

impl std::fmt::Display for Declared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Declared::Version(v) => write!(f, "{v}"),
            Declared::NotRunning => f.write_str(NOT_RUNNING),
        }
    }
}

/// The word `--neighbour ID=none` declares a component not running with.
pub const NOT_RUNNING: &str = "none";

/// The flag that declares a neighbour's version, as printed in findings and errors.
pub fn declare_flag(id: &str) -> String {
    format!("--neighbour {id}=VERSION")
}

/// `--neighbour [CLUSTER:]ID=VERSION` (`VERSION` may be `none`), checked: a known id, a release
/// version. The cluster (a fleet member's name, which may itself hold `:`) is everything before
/// the last `:` in front of the id.
pub fn parse_declaration(text: &str) -> Result<(Option<String>, String, Declared), String> {
    let bad = |why: &str| format!("invalid --neighbour {text:?}: {why}; expected [CLUSTER:]ID=VERSION, ID one of {}", ids().join(", "));
    let (lhs, version) = text.rsplit_once('=').ok_or_else(|| bad("no '='"))?;
    let (cluster, id) = match lhs.rsplit_once(':') {
        Some((c, id)) if !c.is_empty() => (Some(c.to_string()), id),
        Some((_, id)) => (None, id),
        None => (None, lhs),
    };
    if id == "trainer" {
        return Err(format!(
            "invalid --neighbour {text:?}: the installed Trainer version is declared with --from VERSION (the running manager's image is read from its Deployment)"
        ));
    }
    if component(id).is_none() {
        return Err(bad(&format!("unknown component {id:?}")));
    }
    let declared = if version == NOT_RUNNING {
        Declared::NotRunning
    } else {
        let v = version.trim_start_matches('v');
        match helm_render::version::parse_strict(v) {
            Some(parsed) if v.split(['-', '+']).next().is_some_and(|core| core.split('.').count() == 3) => Declared::Version(parsed),
            _ => return Err(bad(&format!("{version:?} is not a release version (MAJOR.MINOR.PATCH, or {NOT_RUNNING})"))),
        }
    };
    Ok((cluster, id.to_string(), declared))
}

fn ids() -> Vec<&'static str> {
    COMPONENTS.iter().map(|c| c.id).collect()
}

/// A version from an image tag or a label (`v0.17.0`, `0.12.0`; not `main` or `v1-93c5489`).
fn tag_version(tag: &str) -> Option<String> {
    let t = tag.trim_start_matches('v');
    let core = t.split(['-', '+']).next().unwrap_or(t);
    (core.split('.').count() == 3 && helm_render::version::parse_strict(t).is_some()).then(|| t.to_string())
}

/// What a Deployment tells of the version it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionRead {
    /// The version and where it was read (`image harbor.corp.example/mirror/kueue:v0.16.9`).
    Known { version: String, from: String },
    /// Why it cannot be told.
    Unknown(String),
}

/// Sidecars that are never the component itself.
const SIDECARS: &[&str] = &["kube-rbac-proxy"];

/// The version a Deployment runs: the tag of its component's image (`owns`, whatever registry
/// and path), else of its container named `manager`, else of its only container; when that tag
/// names no release (pinned by digest only, `latest`, `main`), the Deployment's
/// `app.kubernetes.io/version` label; else why neither tells.
pub fn deployment_version(d: &Json, owns: &dyn Fn(&ImageRef) -> bool) -> VersionRead {
    let all = images(d);
    let main: Vec<&(String, ImageRef)> =
        all.iter().filter(|(n, i)| !SIDECARS.contains(&image_name(&i.repository)) && !SIDECARS.contains(&n.as_str())).collect();
    let picked = main.iter().find(|(_, i)| owns(i)).or_else(|| main.iter().find(|(n, _)| n == "manager")).or_else(|| {
        if main.len() == 1 {
            main.first()
        } else {
            None
        }
    });
    let why_not = match picked {
        Some((_, i)) => match tag_version(&i.tag) {
            Some(version) => return VersionRead::Known { version, from: format!("image {}", i.reference) },
            None => match i.pin {
                crate::objects::workload::Pin::Digest if i.tag.is_empty() => format!("image {} is pinned by digest only", i.reference),
                crate::objects::workload::Pin::Untagged | crate::objects::workload::Pin::Latest => {
                    format!("image {} is tagged latest", i.reference)
                }
                _ => format!("the tag of image {} names no release", i.reference),
            },
        },
        None => format!(
            "none of its containers ({}) is recognisably the component's",
            all.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    let label = str_at(d, &["metadata", "labels", VERSION_LABEL]);
    match tag_version(label) {
        Some(version) => VersionRead::Known { version, from: format!("label {VERSION_LABEL}={label} ({why_not})") },
        None if label.is_empty() => VersionRead::Unknown(format!("{why_not}, and the Deployment has no {VERSION_LABEL} label")),
        None => VersionRead::Unknown(format!("{why_not}, and its label {VERSION_LABEL}={label} names no release")),
    }
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

/// What the cluster itself shows of `c` (no declaration applied): evidence, the version read
/// and from what, and why not when it cannot be told, and whether a Deployment of it runs.
struct Seen {
    evidence: Vec<String>,
    version: Option<String>,
    unknown: Vec<String>,
    deployments: Vec<String>,
}

/// The state's Helm release record stubs (other charts' records), in the state's order: found
/// once per detection, not once per component (a walk of every object each time).
fn stubs(state: &ClusterState) -> Vec<&Json> {
    state.objects.iter().filter(|o| is_stub(o)).collect()
}

fn seen(state: &ClusterState, c: &Component, stubs: &[&Json]) -> Seen {
    let mut evidence = Vec::new();
    let mut version: Option<String> = None;
    let mut unknown = Vec::new();
    let mut deployments = Vec::new();
    let crds: Vec<&Json> = c.crds.iter().filter_map(|n| state.crd(n)).collect();
    for crd in &crds {
        evidence.push(format!("CRD {} (served {})", str_at(crd, &["metadata", "name"]), served(crd)));
    }
    for d in state.of_kind("Deployment").filter(|d| !is_trainer_manager(d) && component_of_deployment(d).is_some_and(|x| x.id == c.id)) {
        let at = format!("Deployment {}/{}", str_at(d, &["metadata", "namespace"]), str_at(d, &["metadata", "name"]));
        deployments.push(at.clone());
        match deployment_version(d, &|i| c.owns_image(i)) {
            VersionRead::Known { version: v, from } => {
                evidence.push(format!("{at} {from}"));
                version.get_or_insert(v);
            }
            VersionRead::Unknown(why) => {
                evidence.push(format!("{at}: {why}"));
                unknown.push(format!("{at}: {why}"));
            }
        }
    }
    let mut records: Vec<&Json> =
        stubs.iter().copied().filter(|o| c.charts.contains(&str_at(o, &["metadata", "annotations", STUB_CHART]))).collect();
    // The newest revision of each release speaks for it.
    records.sort_by_key(|o| str_at(o, &["metadata", "labels", "version"]).parse::<u64>().unwrap_or(0));
    if let Some(r) = records.last() {
        let chart_version = str_at(r, &["metadata", "annotations", STUB_VERSION]);
        let app = str_at(r, &["metadata", "annotations", STUB_APP_VERSION]);
        let release = format!(
            "Helm release {}/{} chart {}-{chart_version}{}",
            str_at(r, &["metadata", "namespace"]),
            str_at(r, &["metadata", "labels", "name"]),
            str_at(r, &["metadata", "annotations", STUB_CHART]),
            if app.is_empty() { String::new() } else { format!(" (app {app})") }
        );
        if version.is_none() {
            version = tag_version(app).or_else(|| tag_version(chart_version));
            if version.is_some() && !deployments.is_empty() {
                evidence.push(format!("{release}: the version Helm deployed, as no running image tells it"));
            } else {
                evidence.push(release);
            }
        } else {
            evidence.push(release);
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
    if deployments.is_empty() && !crds.is_empty() && version.is_none() {
        unknown.push(format!("its CRDs are installed but no Deployment of {} was recognised (by image, name or label)", c.name));
    }
    Seen { evidence, version, unknown, deployments }
}

/// What is installed of `c`, from the state and what the user declared (`--neighbour`).
pub fn detect_one(state: &ClusterState, c: &Component) -> Neighbour {
    detect_among(state, c, &stubs(state))
}

fn detect_among(state: &ClusterState, c: &Component, stubs: &[&Json]) -> Neighbour {
    let Seen { mut evidence, mut version, unknown, .. } = seen(state, c, stubs);
    let mut present = evidence.iter().any(|e| !e.starts_with("jaxjobs") && !e.starts_with("mxjobs"));
    match state.info.declared.get(c.id) {
        Some(Declared::NotRunning) => {
            present = false;
            evidence.push(format!("declared not running: --neighbour {}={NOT_RUNNING}", c.id));
        }
        Some(Declared::Version(v)) if version.is_none() => {
            version = Some(v.to_string());
            evidence.push(format!("version declared: --neighbour {}={v}", c.id));
        }
        _ => {}
    }
    let version_unknown = (present && version.is_none() && c.id != TRAINING_OPERATOR && c.id != CERT_MANAGER).then(|| {
        let why = if unknown.is_empty() { "nothing in the cluster tells it".to_string() } else { unknown.join("; ") };
        format!("{why}: declare it with {} (or {}={NOT_RUNNING} if it does not run)", declare_flag(c.id), c.id)
    });
    Neighbour { id: c.id.to_string(), component: c.name.to_string(), present, version, version_unknown, evidence }
}

/// Checks a declaration against what the cluster shows: a declared version the cluster already
/// tells otherwise, or `none` for a component a Deployment runs, is a contradiction (the error
/// names both); a declaration for something the cluster does not have is refused too.
pub fn check_declaration(state: &ClusterState, id: &str, declared: &Declared) -> Result<(), String> {
    let c = component(id).ok_or_else(|| format!("unknown component {id:?}"))?;
    let seen = seen(state, c, &stubs(state));
    match declared {
        Declared::NotRunning if !seen.deployments.is_empty() => Err(format!(
            "--neighbour {id}={NOT_RUNNING} contradicts the cluster, where {} runs: {}",
            c.name,
            seen.deployments.join(", ")
        )),
        Declared::Version(v) => match seen.version.as_deref().and_then(helm_render::version::parse_lenient) {
            Some(read) if read != *v => Err(format!(
                "--neighbour {id}={v} contradicts the cluster, which tells {} {read} ({}): drop the flag (it is for a version the cluster does not tell)",
                c.name,
                seen.evidence.join("; ")
            )),
            _ if seen.evidence.is_empty() => Err(format!(
                "--neighbour {id}={v}: the cluster has no {} (no CRD, Deployment or Helm release of it): drop the flag",
                c.name
            )),
            _ => Ok(()),
        },
        Declared::NotRunning => Ok(()),
    }
}

/// Every component, in [`COMPONENTS`] order.
pub fn detect(state: &ClusterState) -> Vec<Neighbour> {
    let stubs = stubs(state);
    COMPONENTS.iter().map(|c| detect_among(state, c, &stubs)).collect()
}

/// What is installed of the component `id` (absent for an unknown id).
pub fn find(state: &ClusterState, id: &str) -> Neighbour {
    match component(id) {
        Some(c) => detect_one(state, c),
        None => Neighbour {
            id: id.to_string(),
            component: id.to_string(),
            present: false,
            version: None,
            version_unknown: None,
            evidence: Vec::new(),
        },
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
        trimmed["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": "500m"}});
        trimmed["status"] = json!({"replicas": 1});
        let template = trimmed["spec"]["template"].clone();
        trim_deployment(&mut trimmed);
        assert_eq!(trimmed["spec"]["template"], template, "the pod template an upgrade patches stays whole");
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

    /// The image forms a cluster shows, for every component and the Trainer manager: the
    /// project's own registry, a mirror that flattens the path, a mirror that keeps it, a
    /// registry with a port, tag and digest, digest only, `latest`, no tag, and a tag that names
    /// no release, each with and without the version label. The version comes from the tag
    /// whatever the path, else the label, else it is unknown with the reason.
    #[test]
    fn versions_are_read_whatever_the_registry_for_every_component() {
        let forms = |path: &str| {
            let name = path.rsplit('/').next().unwrap();
            vec![
                (format!("registry.k8s.io/{path}:v0.16.9"), Some("0.16.9")),
                (format!("harbor.corp.example/mirror/{name}:v0.16.9"), Some("0.16.9")),
                (format!("harbor.corp.example/mirror/registry.k8s.io/{path}:0.16.9"), Some("0.16.9")),
                (format!("registry.corp:5000/{name}:v0.16.9"), Some("0.16.9")),
                (format!("localhost:5000/{path}:v0.16.9@sha256:0123"), Some("0.16.9")),
                (format!("harbor.corp.example/mirror/{name}@sha256:0123"), None),
                (format!("harbor.corp.example/mirror/{name}:latest"), None),
                (format!("harbor.corp.example/mirror/{name}"), None),
                (format!("harbor.corp.example/mirror/{name}:main"), None),
            ]
        };
        let mut checked = 0;
        for c in COMPONENTS.iter().filter(|c| c.id != TRAINING_OPERATOR) {
            let paths: Vec<String> =
                c.image_names.iter().map(|n| format!("{}/{n}", c.id)).chain(c.image_paths.iter().map(|p| p.to_string())).collect();
            for path in paths {
                for (image, want) in forms(&path) {
                    // Recognised by its default Deployment name where a flattened mirror loses a
                    // shared image name (scheduler-plugins' kube-scheduler).
                    let d = deployment("ns", &format!("x-{}", c.deployments[0]), &image);
                    assert_eq!(component_of_deployment(&d).map(|x| x.id), Some(c.id), "{image}");
                    let read = deployment_version(&d, &|i| c.owns_image(i));
                    match (want, &read) {
                        (Some(v), VersionRead::Known { version, from }) => {
                            assert_eq!((version.as_str(), from.as_str()), (v, format!("image {image}").as_str()))
                        }
                        (None, VersionRead::Unknown(why)) => assert!(why.contains(&image) && why.contains(VERSION_LABEL), "{why}"),
                        _ => panic!("{} {image}: {read:?}", c.id),
                    }
                    let mut labelled = d.clone();
                    labelled["metadata"]["labels"] = json!({VERSION_LABEL: "v0.17.0"});
                    let read = deployment_version(&labelled, &|i| c.owns_image(i));
                    let VersionRead::Known { version, from } = read else { panic!("{image} with a label: {read:?}") };
                    assert_eq!(version, want.unwrap_or("0.17.0"), "{image}: the tag first, the label when it tells nothing");
                    assert_eq!(from.starts_with("label"), want.is_none(), "{from}");
                    checked += 1;
                }
            }
        }
        for (image, want) in forms("kubeflow/trainer/trainer-controller-manager") {
            let d = deployment("ml-platform", "trainer-kubeflow-trainer-controller-manager", &image);
            assert!(is_trainer_manager(&d) && component_of_deployment(&d).is_none(), "{image}");
            let read = deployment_version(&d, &|i| image_name(&i.repository) == TRAINER_IMAGE);
            assert_eq!(matches!(read, VersionRead::Known { .. }), want.is_some(), "{image}: {read:?}");
            checked += 1;
        }
        assert!(checked > 80, "{checked}");
    }

    #[test]
    fn a_present_neighbour_without_a_version_says_why_and_how_to_declare_it() {
        let kueue_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "workloads.kueue.x-k8s.io"},
            "spec": {"group": "kueue.x-k8s.io", "names": {"plural": "workloads"}, "versions": [{"name": "v1beta1", "served": true}]}});
        let digest = deployment("kueue-system", "kueue-controller-manager", "harbor.corp.example/mirror/kueue@sha256:0123");
        let mut state = ClusterState::from_objects(ClusterInfo::default(), vec![kueue_crd.clone(), digest], Vec::new());
        let k = find(&state, KUEUE);
        assert!(k.present && k.version.is_none(), "{k:?}");
        let why = k.version_unknown.unwrap();
        assert!(why.contains("pinned by digest only") && why.contains("--neighbour kueue=VERSION"), "{why}");
        state.declare_neighbour(KUEUE, Declared::Version(semver::Version::new(0, 16, 9))).unwrap();
        let k = find(&state, KUEUE);
        assert_eq!((k.version.as_deref(), k.version_unknown.as_deref()), (Some("0.16.9"), None));
        assert!(k.evidence.iter().any(|e| e == "version declared: --neighbour kueue=0.16.9"), "{:?}", k.evidence);
        // Declared `none` while a Deployment runs: a contradiction.
        let err = state.clone().declare_neighbour(KUEUE, Declared::NotRunning).unwrap_err().to_string();
        assert!(err.contains("contradicts") && err.contains("kueue-system/kueue-controller-manager"), "{err}");

        // Only the CRDs left: unknown until declared; `none` says it does not run.
        let mut crds_only = ClusterState::from_objects(ClusterInfo::default(), vec![kueue_crd], Vec::new());
        assert!(find(&crds_only, KUEUE).version_unknown.unwrap().contains("no Deployment of Kueue was recognised"));
        crds_only.declare_neighbour(KUEUE, Declared::NotRunning).unwrap();
        let k = find(&crds_only, KUEUE);
        assert!(!k.present && k.version_unknown.is_none(), "{k:?}");

        // A tag the cluster tells: a declaration must agree; nothing of it: refused.
        let tagged = deployment("kueue-system", "kueue-controller-manager", "harbor.corp.example/mirror/kueue:v0.16.9");
        let mut state = ClusterState::from_objects(ClusterInfo::default(), vec![tagged], Vec::new());
        assert!(state.clone().declare_neighbour(KUEUE, Declared::Version(semver::Version::new(0, 17, 0))).is_err());
        state.declare_neighbour(KUEUE, Declared::Version(semver::Version::new(0, 16, 9))).unwrap();
        let err = state.declare_neighbour(JOBSET, Declared::Version(semver::Version::new(0, 12, 0))).unwrap_err().to_string();
        assert!(err.contains("has no JobSet"), "{err}");
    }

    #[test]
    fn declarations_parse_with_and_without_a_cluster() {
        let v = |s| Declared::Version(semver::Version::parse(s).unwrap());
        assert_eq!(parse_declaration("kueue=0.16.9").unwrap(), (None, "kueue".into(), v("0.16.9")));
        assert_eq!(parse_declaration("kueue=v0.16.9").unwrap(), (None, "kueue".into(), v("0.16.9")));
        assert_eq!(parse_declaration("lws=none").unwrap(), (None, "lws".into(), Declared::NotRunning));
        assert_eq!(
            parse_declaration("arn:aws:eks:eu-west-1:1234:cluster/prod:kueue=0.17.0").unwrap(),
            (Some("arn:aws:eks:eu-west-1:1234:cluster/prod".into()), "kueue".into(), v("0.17.0"))
        );
        for bad in ["kueue", "kueue=0.16", "kueue=latest", "nginx=1.2.3", "=0.1.0"] {
            assert!(parse_declaration(bad).is_err(), "{bad}");
        }
        assert!(parse_declaration("trainer=2.2.1").unwrap_err().contains("--from"));
    }

    #[test]
    fn the_chart_list_covers_every_component() {
        for c in COMPONENTS {
            assert!(c.charts.iter().all(|ch| CHARTS.contains(ch)), "{}", c.id);
        }
    }
}
