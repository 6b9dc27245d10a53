//! What the audit reads from a cluster, and nothing more: each resource with its API group,
//! version, plural and scope, the selectors that narrow it, and the permission it needs (for
//! warnings and the least-privilege ClusterRole).

/// One kind of object the audit lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    pub label_selector: Option<&'static str>,
    pub field_selector: Option<&'static str>,
    /// Absent from clusters without the CRD: a 404 is normal, not a warning.
    pub optional: bool,
}

impl Resource {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `list secrets` / `list clustertrainingruntimes.trainer.kubeflow.org`.
    pub fn permission(&self) -> String {
        if self.group.is_empty() {
            format!("list {}", self.plural)
        } else {
            format!("list {}.{}", self.plural, self.group)
        }
    }
}

const fn core(kind: &'static str, plural: &'static str, namespaced: bool) -> Resource {
    Resource { group: "", version: "v1", kind, plural, namespaced, label_selector: None, field_selector: None, optional: false }
}

const fn custom(group: &'static str, version: &'static str, kind: &'static str, plural: &'static str, namespaced: bool) -> Resource {
    Resource { group, version, kind, plural, namespaced, label_selector: None, field_selector: None, optional: true }
}

pub const TRAINER_GROUP: &str = "trainer.kubeflow.org";
pub const JOBSET_GROUP: &str = "jobset.x-k8s.io";
/// The Training Operator v1 API group.
pub const LEGACY_GROUP: &str = "kubeflow.org";
pub const LEGACY_KINDS: &[&str] = &["PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"];
pub const PUBLIC_CONFIGMAP: &str = "kubeflow-trainer-public";
pub const CONTROLLER_DEPLOYMENT: &str = "kubeflow-trainer-controller-manager";

/// Everything listed, in the order it is listed.
pub const RESOURCES: &[Resource] = &[
    Resource { optional: false, ..custom("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false) },
    custom(TRAINER_GROUP, "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", false),
    custom(TRAINER_GROUP, "v1alpha1", "TrainingRuntime", "trainingruntimes", true),
    custom(TRAINER_GROUP, "v1alpha1", "TrainJob", "trainjobs", true),
    // The chart ships JobSet's CRD: its objects are validated against the target's too.
    custom(JOBSET_GROUP, "v1alpha2", "JobSet", "jobsets", true),
    // Training Operator v1 jobs, for `migrate --legacy`.
    custom(LEGACY_GROUP, "v1", "PyTorchJob", "pytorchjobs", true),
    custom(LEGACY_GROUP, "v1", "TFJob", "tfjobs", true),
    custom(LEGACY_GROUP, "v1", "MPIJob", "mpijobs", true),
    custom(LEGACY_GROUP, "v1", "XGBoostJob", "xgboostjobs", true),
    custom(LEGACY_GROUP, "v1", "PaddleJob", "paddlejobs", true),
    custom(LEGACY_GROUP, "v1", "JAXJob", "jaxjobs", true),
    Resource { label_selector: Some("owner=helm"), ..core("Secret", "secrets", true) },
    Resource { label_selector: Some("owner=helm"), ..core("ConfigMap", "configmaps", true) },
    Resource { field_selector: Some("metadata.name=kubeflow-trainer-public"), ..core("ConfigMap", "configmaps", true) },
    // Every Deployment: Trainer's under any release name, and the neighbours' (Kueue, JobSet,
    // LWS, schedulers, Training Operator, cert-manager) are told by image; the rest are dropped.
    Resource { group: "apps", ..core("Deployment", "deployments", true) },
    // Kueue LocalQueues (names only), for TrainJobs labelled with a queue; v1beta1 is served
    // from Kueue 0.9 to 0.19.
    custom("kueue.x-k8s.io", "v1beta1", "LocalQueue", "localqueues", true),
    // Quotas and LimitRanges: what the upgrade creates in each namespace it writes into (release
    // objects, hook Jobs and their Pods, rollout Pods, 2.3's runtime snapshots) is checked against them.
    core("ResourceQuota", "resourcequotas", true),
    core("LimitRange", "limitranges", true),
    core("Namespace", "namespaces", false),
    Resource { group: "admissionregistration.k8s.io", ..core("ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false) },
    Resource { group: "admissionregistration.k8s.io", ..core("MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false) },
];

/// CRD groups whose definitions are kept whole (Trainer, Training Operator v1 leftovers, JobSet,
/// LWS); `neighbours::CRD_GROUPS` are kept without their schemas.
pub const CRD_GROUPS: &[&str] = &[TRAINER_GROUP, "kubeflow.org", JOBSET_GROUP, "leaderworkerset.x-k8s.io"];
