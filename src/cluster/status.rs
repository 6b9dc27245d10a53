//! What is installed, summarised for people (`trainer-audit status`): install method and its
//! evidence, Trainer version, the Helm release (values masked), CRDs with ownership metadata and
//! versions, runtimes with owner, labels and finalizers, TrainJob counts, JobSet/LWS presence,
//! the neighbours Trainer depends on (with version and evidence), the per-namespace migration
//! from the Training Operator v1, Pod Security labels, the Kubernetes version, and per kind how
//! the live objects fare under the installed CRDs (or a target chart's): valid, ratcheted,
//! rejected, unevaluated, pruned.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::install::{installed_version, object_method, overall, InstallMethod, InstalledVersion};
use super::release::redact;
use super::ClusterState;
use crate::objects::str_at;
use kube_validate::stored::{CrdSet, KindTally, ASSUMED_KUBE};
use kube_version::KubeVersion;

#[derive(Debug, Clone, Serialize)]
pub struct ReleaseSummary {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub status: crate::cluster::release::ReleaseStatus,
    pub chart_version: String,
    pub app_version: String,
    /// Helm refuses a plain `helm upgrade` (pending, or no revision deployed).
    pub stuck: bool,
    /// What `helm upgrade` does with it (`helm upgrade starts from revision 2 (kubeflow-trainer-2.2.1)`).
    pub upgrade: String,
    pub history: Vec<String>,
    /// User-supplied values, secret-looking keys masked.
    pub values: Json,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrdSummary {
    pub name: String,
    pub served: Vec<String>,
    pub storage: Vec<String>,
    pub owner: String,
    pub managed_by: String,
    pub release_name: String,
    pub release_namespace: String,
    pub resource_policy: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuntimeSummary {
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    pub owner: String,
    pub labels: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
    pub deleting: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub kubernetes: Option<String>,
    pub install: InstallMethod,
    pub version: Option<InstalledVersion>,
    pub releases: Vec<ReleaseSummary>,
    pub release_errors: Vec<String>,
    pub crds: Vec<CrdSummary>,
    pub runtimes: Vec<RuntimeSummary>,
    pub trainjobs: usize,
    pub trainjobs_per_runtime: BTreeMap<String, usize>,
    pub trainjobs_per_namespace: BTreeMap<String, usize>,
    pub jobset: Option<String>,
    pub lws: Option<String>,
    /// Components Trainer depends on or runs beside, installed or not.
    pub neighbours: Vec<super::neighbours::Neighbour>,
    /// Training Operator v1 jobs and TrainJobs per namespace, and how far each has moved.
    pub migration: super::legacy::Migration,
    /// Namespace → `enforce=…` Pod Security labels, for namespaces that have any.
    pub pod_security: BTreeMap<String, String>,
    pub validation: Validation,
    pub warnings: Vec<String>,
}

/// The live objects of each kind the CRDs define, validated as their next write would be.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Validation {
    /// `the installed CRDs`, or `the CRDs of oci://… 2.3.0`.
    pub against: String,
    pub kubernetes: String,
    /// Whether `kubernetes` is the cluster's version or assumed.
    pub kubernetes_known: bool,
    pub kinds: Vec<KindTally>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl Validation {
    /// Validates the state's objects against `crds` (None: the state's own CRDs).
    pub fn of(state: &ClusterState, crds: Option<(&[Json], String)>) -> Validation {
        let known = state.kube_version().map(KubeVersion::minor_version);
        let kube = known.clone().unwrap_or(ASSUMED_KUBE);
        let (set, against) = match crds {
            Some((crds, label)) => (CrdSet::new(crds.iter(), kube.clone()), label),
            None => (CrdSet::new(state.crds(), kube.clone()), "the installed CRDs".to_string()),
        };
        let survey = set.tally(state.objects.iter());
        Validation {
            against,
            kubernetes: kube.to_string(),
            kubernetes_known: known.is_some(),
            kinds: survey.kinds,
            skipped: survey.skipped,
        }
    }
}

/// Labels of a runtime that change behaviour.
const RUNTIME_LABELS: &[&str] = &[
    "trainer.kubeflow.org/framework",
    "trainer.kubeflow.org/webhook-validation",
    "trainer.kubeflow.org/managed-by",
    "app.kubernetes.io/managed-by",
];

fn versions(crd: &Json, flag: &str) -> Vec<String> {
    crd.pointer("/spec/versions")
        .and_then(Json::as_array)
        .map(|vs| {
            vs.iter().filter(|v| v.get(flag).and_then(Json::as_bool) == Some(true)).map(|v| str_at(v, &["name"]).to_string()).collect()
        })
        .unwrap_or_default()
}

/// The status, with the objects validated against the installed CRDs.
pub fn status(state: &ClusterState) -> Status {
    status_against(state, || Validation::of(state, None))
}

/// The status, with the objects validated by `validate` (see [`Validation::of`]): the validation
/// runs on the pool's cores while the rest, a walk on one core, is summarised beside it.
pub fn status_against(state: &ClusterState, validate: impl FnOnce() -> Validation + Send) -> Status {
    let (validation, status) = rayon::join(validate, || summary(state));
    Status { validation, ..status }
}

/// Everything of the status but the validation (left empty).
fn summary(state: &ClusterState) -> Status {
    let (releases, release_errors) = state.releases();
    let install = overall(state, &releases);
    let version = installed_version(state, &releases);
    let release_summaries = releases
        .iter()
        .map(|r| {
            let mut values = r.current.config.clone();
            redact(&mut values);
            values.sort_all_objects();
            ReleaseSummary {
                name: r.current.name.clone(),
                namespace: r.current.namespace.clone(),
                revision: r.current.revision,
                status: r.current.status.clone(),
                chart_version: r.current.chart_version.clone(),
                app_version: r.current.app_version.clone(),
                stuck: !matches!(r.start(false), crate::cluster::release::Start::From(_)),
                upgrade: r.describe_start(),
                history: r.history.iter().map(ToString::to_string).collect(),
                values,
            }
        })
        .collect();
    let crds = state
        .crds()
        .map(|c| CrdSummary {
            name: str_at(c, &["metadata", "name"]).to_string(),
            served: versions(c, "served"),
            storage: versions(c, "storage"),
            owner: object_method(c).method.describe().to_string(),
            managed_by: str_at(c, &["metadata", "labels", "app.kubernetes.io/managed-by"]).to_string(),
            release_name: str_at(c, &["metadata", "annotations", "meta.helm.sh/release-name"]).to_string(),
            release_namespace: str_at(c, &["metadata", "annotations", "meta.helm.sh/release-namespace"]).to_string(),
            resource_policy: str_at(c, &["metadata", "annotations", "helm.sh/resource-policy"]).to_string(),
        })
        .collect();
    let runtimes = state
        .runtimes()
        .map(|r| RuntimeSummary {
            kind: str_at(r, &["kind"]).to_string(),
            namespace: str_at(r, &["metadata", "namespace"]).to_string(),
            name: str_at(r, &["metadata", "name"]).to_string(),
            owner: object_method(r).method.describe().to_string(),
            labels: RUNTIME_LABELS
                .iter()
                .filter_map(|k| Some((k.to_string(), str_at(r, &["metadata", "labels", k]).to_string())).filter(|(_, v)| !v.is_empty()))
                .collect(),
            finalizers: r
                .pointer("/metadata/finalizers")
                .and_then(Json::as_array)
                .map(|f| f.iter().filter_map(Json::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            deleting: r.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null()),
        })
        .collect();
    // Counted under borrowed keys, owned once per distinct key: 50,000 TrainJobs made 100,000
    // strings here before.
    let mut runtime_counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut namespace_counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut trainjobs = 0;
    for tj in state.trainjobs() {
        trainjobs += 1;
        *runtime_counts.entry((str_at(tj, &["spec", "runtimeRef", "kind"]), str_at(tj, &["spec", "runtimeRef", "name"]))).or_insert(0) += 1;
        *namespace_counts.entry(str_at(tj, &["metadata", "namespace"])).or_insert(0) += 1;
    }
    let mut per_runtime = BTreeMap::new();
    for ((kind, name), n) in runtime_counts {
        *per_runtime.entry(format!("{kind}/{name}")).or_insert(0) += n;
    }
    let per_namespace: BTreeMap<String, usize> = namespace_counts.into_iter().map(|(ns, n)| (ns.to_string(), n)).collect();
    let crd_versions = |name: &str| state.crd(name).map(|c| versions(c, "served").join(","));
    let pod_security = state
        .of_kind("Namespace")
        .filter_map(|ns| {
            let labels = ns.pointer("/metadata/labels").and_then(Json::as_object)?;
            let levels: Vec<String> = labels
                .iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("pod-security.kubernetes.io/")
                        .filter(|m| !m.ends_with("-version"))
                        .map(|m| format!("{m}={}", v.as_str().unwrap_or("")))
                })
                .collect();
            (!levels.is_empty()).then(|| (str_at(ns, &["metadata", "name"]).to_string(), levels.join(",")))
        })
        .collect();
    Status {
        kubernetes: state.info.server_version.as_ref().map(ToString::to_string),
        install,
        version,
        releases: release_summaries,
        release_errors,
        crds,
        runtimes,
        trainjobs,
        trainjobs_per_runtime: per_runtime,
        trainjobs_per_namespace: per_namespace,
        jobset: crd_versions("jobsets.jobset.x-k8s.io"),
        lws: crd_versions("leaderworkersets.leaderworkerset.x-k8s.io"),
        neighbours: super::neighbours::detect(state),
        migration: super::legacy::migration(state),
        pod_security,
        validation: Validation::default(),
        warnings: state.warnings.clone(),
    }
}
