//! Check kinds: the code behind rules (kube-linter's templates, cargo-deny's check modules).
//! Each kind lives in its own file with a typed params struct (`deny_unknown_fields`) that is
//! checked when rules load, reads the [`CheckInput`] (or, for kinds that need no cluster, the
//! [`ChartInput`] of a chart review) and returns hits; the rule that names it supplies id,
//! severity and words. Kinds are generic (ownership of whatever the target owns, any object against
//! whatever CRDs the target ships), so rules stay data.

mod adopt_refused;
mod apply_conflict;
mod cert_secret_ssa;
pub mod checks_skipped;
mod configmap_quota;
mod crd_keep;
mod crd_present;
mod crd_size;
mod crds_disabled;
mod crds_not_applied;
mod data_cache_lws;
mod direction;
mod feature_gates;
mod finalizer;
mod gang_scheduler;
mod hook_argocd_unsupported;
mod hook_delete_event;
mod hook_deletes;
mod hook_downloads;
mod hook_force_conflicts;
mod hook_image_pin;
mod hook_prunes_live;
mod hook_rbac_delete;
mod hook_security_context;
mod hook_unbounded;
mod hooks_skipped;
mod immutable_field;
mod kube_target_apis;
mod kube_target_crds;
mod kube_target_tested;
mod kube_version;
mod kueue_compat;
mod kueue_queue;
mod label_bypass;
mod migrate;
mod namespace_pod_security;
mod namespace_quota;
mod ownership;
mod pod_security;
mod read_incomplete;
mod release_size;
mod release_start;
mod removed_flag;
mod replace_runtime_fields;
mod running_version;
mod runtime_drift;
mod runtime_handoff;
mod schema;
mod schema_crd;
mod shared_crds;
mod stale_crd;
mod support;
mod upgrade_gate;
mod values_removed_key;
mod values_unknown_key;
mod volcano_priority_rbac;
mod webhook_admission;
mod webhook_ca_bundle;

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use super::finding::Severity;
use super::input::{ChartInput, CheckInput};

/// One thing a kind found.
#[derive(Debug, Clone, Default)]
pub struct Hit {
    pub subject: String,
    pub location: String,
    pub message: String,
    pub evidence: Vec<String>,
    /// Filled into the rule's fix template (`{commands}`, `{object}`, …).
    pub vars: BTreeMap<String, String>,
    /// The rule variant this hit selects (a kind's [`KindSpec::variants`]); the rule's own
    /// words and severity when the rule defines no such variant.
    pub variant: Option<&'static str>,
    /// A severity the kind computed from what it saw, over the rule's (and variant's).
    pub severity: Option<Severity>,
    /// What only the upgrade at the installed version meets: `plan` prints that upgrade only when
    /// an error stands there (`Upgrade::plan`), so the hit stands only beside another error.
    pub if_upgrade_runs: bool,
}

impl Hit {
    pub fn new(subject: impl Into<String>, message: impl Into<String>) -> Hit {
        Hit { subject: subject.into(), message: message.into(), ..Hit::default() }
    }

    pub fn evidence(mut self, e: impl Into<String>) -> Hit {
        self.evidence.push(e.into());
        self
    }

    pub fn var(mut self, k: &str, v: impl Into<String>) -> Hit {
        self.vars.insert(k.to_string(), v.into());
        self
    }

    pub fn located(mut self, location: impl Into<String>) -> Hit {
        self.location = location.into();
        self
    }

    pub fn variant(mut self, variant: &'static str) -> Hit {
        self.variant = Some(variant);
        self
    }

    pub fn severity(mut self, severity: Severity) -> Hit {
        self.severity = Some(severity);
        self
    }
}

/// A kind instantiated with a rule's params (regexes and the like prepared once, at load).
pub trait Check: std::fmt::Debug + Send + Sync {
    /// Hits for an upgrade (`check`, `plan`, `runbook`).
    fn check(&self, input: &CheckInput) -> Vec<Hit>;

    /// Hits for a chart review (`hooks`); `None` when the kind needs the cluster.
    fn review(&self, _chart: &ChartInput) -> Option<Vec<Hit>> {
        None
    }

    /// For `upgrade-gate`: the versions every upgrade across the rule's range lands on first.
    fn gate(&self) -> Option<&helm_render::version::Constraint> {
        None
    }

    /// The `rules/compat.yaml` tables the kind reads (`explain` prints their rows).
    fn compat(&self) -> &'static [crate::audit::compat::Table] {
        &[]
    }

    /// Whether its hits depend on the cluster (read, or unknown without one); a GitOps review
    /// without a cluster runs only the kinds that say no.
    fn reads_cluster(&self) -> bool {
        true
    }
}

/// A kind that reads one chart and nothing else: it runs the same in a chart review and, on the
/// target chart under the upgrade's engine, in an upgrade.
pub trait ChartKind: std::fmt::Debug + Send + Sync {
    fn hits(&self, chart: &ChartInput) -> Vec<Hit>;
}

impl<T: ChartKind> Check for T {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        self.hits(&input.chart())
    }

    fn review(&self, chart: &ChartInput) -> Option<Vec<Hit>> {
        Some(self.hits(chart))
    }

    fn reads_cluster(&self) -> bool {
        false
    }
}

pub struct KindSpec {
    pub name: &'static str,
    pub summary: &'static str,
    /// Variant names the kind's hits may select (rules may word each differently).
    pub variants: &'static [&'static str],
    /// Whether the kind can run in a chart review (it needs no cluster).
    pub reviews: bool,
    build: fn(Json) -> Result<Box<dyn Check>, String>,
}

impl KindSpec {
    /// The kind with these params, checked: unknown or missing params and wrong types fail.
    pub fn build(&self, params: Json) -> Result<Box<dyn Check>, String> {
        (self.build)(params)
    }
}

/// Reads a params struct from the rule's `params` (absent params read as `{}`).
fn typed<P: DeserializeOwned + Check + 'static>(params: Json) -> Result<Box<dyn Check>, String> {
    let params = if params.is_null() { Json::Object(Default::default()) } else { params };
    serde_json::from_value::<P>(params).map(|p| Box::new(p) as Box<dyn Check>).map_err(|e| e.to_string())
}

macro_rules! kind {
    ($name:literal, $module:ident, $summary:literal) => {
        kind!($name, $module, $summary, variants: [], reviews: false, typed)
    };
    ($name:literal, $module:ident, $summary:literal, variants: [$($v:literal),*], reviews: $reviews:literal, $how:ident) => {
        KindSpec { name: $name, summary: $summary, variants: &[$($v),*], reviews: $reviews, build: $how::<$module::Params> }
    };
}

pub const KINDS: &[KindSpec] = &[
    kind!(
        "direction",
        direction,
        "a target below the installed version (a downgrade: what Helm deletes), the same version, or a pre-release move",
        variants: ["same", "prerelease", "crds-kept", "crds-rendered", "crds-outside"],
        reviews: false,
        typed
    ),
    kind!("upgrade-gate", upgrade_gate, "the upgrade skips a version every install must pass through"),
    kind!("kube-version", kube_version, "the cluster is older than the target needs"),
    kind!(
        "kube-target-crds",
        kube_target_crds,
        "the CRDs as the Kubernetes version the cluster moves to judges their write (--to-kube)",
        variants: ["installed"],
        reviews: false,
        typed
    ),
    kind!(
        "kube-target-apis",
        kube_target_apis,
        "API versions the Kubernetes version the cluster moves to no longer serves (--to-kube)",
        variants: ["release-manifest"],
        reviews: false,
        typed
    ),
    kind!(
        "kube-target-tested",
        kube_target_tested,
        "the Kubernetes version the cluster moves to is past what the controllers are tested on (--to-kube)"
    ),
    kind!("read-incomplete", read_incomplete, "the cluster read was refused some lists (missing permissions)"),
    kind!(
        "checks-skipped",
        checks_skipped,
        "the installed chart could not be read, so the checks that compare it with the target did not run"
    ),
    kind!(
        "release-start",
        release_start,
        "helm upgrade does not start from the release's last revision: it refuses (pending, no deployed revision) or starts from another",
        variants: ["reinstall", "finish-uninstall", "from-deployed"],
        reviews: false,
        typed
    ),
    kind!(
        "running-version",
        running_version,
        "the controller Deployment runs another version than the release records, or its rollout has not finished",
        variants: ["rollout", "unknown"],
        reviews: false,
        typed
    ),
    kind!(
        "shared-crds",
        shared_crds,
        "another Trainer install shares the cluster-scoped CRDs: what this upgrade's CRD change does to its controller"
    ),
    kind!("release-size", release_size, "the target's Helm release record does not fit the Secret or ConfigMap Helm stores it in"),
    kind!("ownership", ownership, "live objects the target will own lack this release's Helm metadata"),
    kind!("apply-conflict", apply_conflict, "objects Helm 4 applies server-side that another field manager applied with other values"),
    kind!(
        "immutable-field",
        immutable_field,
        "the target changes a field the API server will not update",
        variants: ["adopted", "orphaned"],
        reviews: false,
        typed
    ),
    kind!(
        "schema",
        schema,
        "live objects validated against the target CRDs as the API server validates their next write",
        variants: ["migrate"],
        reviews: false,
        typed
    ),
    kind!("schema-crd", schema_crd, "the target CRDs' CEL rules against the cluster's API server (compile, cost)"),
    kind!("migrate", migrate, "live objects trainer-audit migrate converts, one step of the rehearsed order per rule"),
    kind!("stale-crd", stale_crd, "a CRD from a chart's crds/ is older live than the target's (Helm never upgrades them)"),
    kind!(
        "crd-keep",
        crd_keep,
        "templated CRDs without the keep policy (in the chart, and on the live CRD when there is a cluster)",
        variants: [],
        reviews: true,
        typed
    ),
    kind!(
        "finalizer",
        finalizer,
        "objects carry a finalizer (stuck when also deleting; lost when deleting into a controller that removes it); below the release that removes it, only those the upgrade deletes",
        variants: ["terminating", "kept"],
        reviews: false,
        typed
    ),
    kind!(
        "runtime-handoff",
        runtime_handoff,
        "runtimes the release owns that the target no longer renders (Helm deletes them), and whether the target re-creates them",
        variants: ["not-recreated"],
        reviews: false,
        typed
    ),
    kind!(
        "runtime-drift",
        runtime_drift,
        "local edits to built-in runtimes (live against the installed release's render) that the target's installer undoes"
    ),
    kind!(
        "kueue-compat",
        kueue_compat,
        "the installed Kueue writes a TrainJob field the target Trainer (or the CRD it keeps) lacks",
        variants: ["stale-crd", "untested", "unknown-version"],
        reviews: false,
        typed
    ),
    kind!(
        "kueue-queue",
        kueue_queue,
        "TrainJobs name a Kueue queue, but Kueue or that LocalQueue is missing",
        variants: ["no-queue"],
        reviews: false,
        typed
    ),
    kind!(
        "data-cache-lws",
        data_cache_lws,
        "dataCache.enabled without LeaderWorkerSet after the upgrade, and the ignored dataCache.lws.install",
        variants: ["install-ignored"],
        reviews: false,
        typed
    ),
    kind!(
        "configmap-quota",
        configmap_quota,
        "namespaces whose ConfigMap quota cannot hold one runtime snapshot per TrainJob the 2.3 controller reconciles (variant: some are Failed)",
        variants: ["failed"],
        reviews: false,
        typed
    ),
    kind!(
        "namespace-quota",
        namespace_quota,
        "what the upgrade creates in each namespace it writes into (new release objects, hook Jobs and their Pods, rollout Pods) against its ResourceQuotas and LimitRanges",
        variants: ["unset-resources", "limit-range"],
        reviews: false,
        typed
    ),
    kind!(
        "namespace-pod-security",
        namespace_pod_security,
        "every Pod the upgrade creates (new and rolled-out Deployments, hook Jobs) against the Pod Security level its namespace enforces",
        variants: ["baseline"],
        reviews: false,
        typed
    ),
    kind!(
        "gang-scheduler",
        gang_scheduler,
        "runtimes ask for coscheduling or Volcano, whose PodGroup CRD or scheduler is missing",
        variants: ["no-scheduler"],
        reviews: false,
        typed
    ),
    kind!(
        "volcano-priority-rbac",
        volcano_priority_rbac,
        "Volcano runtimes naming a PriorityClass the target's manager may not list (the TrainJob webhook's lookup hangs)"
    ),
    kind!("crds-disabled", crds_disabled, "CRDs the target ships that crds.enabled=false leaves out and the cluster lacks"),
    kind!(
        "webhook-ca-bundle",
        webhook_ca_bundle,
        "under Argo CD: webhook configurations rendered without caBundle that ignoreDifferences does not cover",
        variants: [],
        reviews: true,
        typed
    ),
    kind!("removed-flag", removed_flag, "the live controller passes a flag the target's manager no longer defines (it exits at start)"),
    kind!(
        "cert-secret-ssa",
        cert_secret_ssa,
        "a Secret declared with the keys a certificate rotator rewrites, in a release Helm applies server-side",
        variants: ["dropped", "redeclared"],
        reviews: false,
        typed
    ),
    kind!("label-bypass", label_bypass, "user objects carry a label that skips validation"),
    kind!("webhook-admission", webhook_admission, "live TrainJobs and user runtimes the target's validating webhooks would refuse"),
    kind!(
        "hook-prunes-live",
        hook_prunes_live,
        "live runtimes a target upgrade hook's prune loop selects but does not apply (it deletes them)"
    ),
    kind!("crd-present", crd_present, "CRDs of a group (and version) exist in the cluster"),
    kind!(
        "values-unknown-key",
        values_unknown_key,
        "user values the target chart or the subchart they fall under does not know (Helm ignores them), the nearest key it has, and keys it renamed",
        variants: ["renamed", "nearest"],
        reviews: false,
        typed
    ),
    kind!(
        "values-removed-key",
        values_removed_key,
        "user values the installed chart's templates read that the target dropped without a successor (or, on a downgrade, does not have yet)",
        variants: ["downgrade"],
        reviews: false,
        typed
    ),
    kind!(
        "feature-gates",
        feature_gates,
        "feature gates the target controller refuses, or an older controller image pinned (refusing the chart's configuration, or variant older)",
        variants: ["older"],
        reviews: false,
        typed
    ),
    kind!(
        "crd-size",
        crd_size,
        "CRDs too large for client-side apply under the engine",
        variants: ["argocd", "kustomize"],
        reviews: true,
        typed
    ),
    kind!(
        "hook-downloads",
        hook_downloads,
        "hooks that install or download software at run time",
        variants: [],
        reviews: true,
        typed
    ),
    kind!(
        "hook-force-conflicts",
        hook_force_conflicts,
        "hooks that server-side apply with --force-conflicts",
        variants: [],
        reviews: true,
        typed
    ),
    kind!("hook-deletes", hook_deletes, "hooks whose script deletes objects", variants: ["loop"], reviews: true, typed),
    kind!(
        "hook-security-context",
        hook_security_context,
        "hooks without a securityContext, or that may run as root",
        variants: ["may-run-as-root"],
        reviews: true,
        typed
    ),
    kind!("hook-unbounded", hook_unbounded, "hook Jobs without backoffLimit or activeDeadlineSeconds", variants: [], reviews: true, typed),
    kind!("hook-image-pin", hook_image_pin, "hook images not pinned by digest", variants: ["tag"], reviews: true, typed),
    kind!("hook-rbac-delete", hook_rbac_delete, "hooks whose service account may delete objects", variants: [], reviews: true, typed),
    kind!(
        "hook-delete-event",
        hook_delete_event,
        "delete hooks, and what the engine does with them",
        variants: ["argocd", "argocd-supported", "kustomize"],
        reviews: true,
        typed
    ),
    kind!(
        "hook-argocd-unsupported",
        hook_argocd_unsupported,
        "hooks with only events Argo CD never runs",
        variants: [],
        reviews: true,
        typed
    ),
    kind!(
        "crds-not-applied",
        crds_not_applied,
        "in a GitOps review: crds/ CRDs the engine's options leave uncreated or stale while the target's copy changed",
        variants: ["not-created", "used"],
        reviews: false,
        typed
    ),
    kind!("adopt-refused", adopt_refused, "in a GitOps review: objects the upgrade must adopt while the engine's options refuse to"),
    kind!("hooks-skipped", hooks_skipped, "in a GitOps review: install or upgrade hooks the engine's options switch off"),
    kind!(
        "replace-runtime-fields",
        replace_runtime_fields,
        "under Argo CD Replace=true: objects the chart renders empty for a controller to fill, wiped on every sync",
        variants: [],
        reviews: true,
        typed
    ),
];

/// `1 TrainJob`, `3 TrainJobs`: a count with its noun in the number it takes (every noun the
/// kinds count takes an `s`).
pub(crate) fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The verb after [`counted`]: `uses` for one, `use` for several.
pub(crate) fn agree(n: usize, one: &'static str, several: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        several
    }
}

pub fn kind(name: &str) -> Option<&'static KindSpec> {
    KINDS.iter().find(|k| k.name == name)
}
