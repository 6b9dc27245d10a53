//! Trainer 2.3.0's validating admission webhooks, modelled: what `validator.trainjob`,
//! `validator.clustertrainingruntime` and `validator.trainingruntime` (kubeflow/trainer v2.3.0
//! `pkg/webhooks/`) refuse on a create or update, so that `check` can name the live objects a 2.3
//! controller will refuse to let anyone write (rule TA-WH-001, whose sources cite every modelled
//! line) and the webhook differential can compare against the real webhooks. The API server's own
//! schema and CEL validation runs before these and is [`kube_validate::Validator`]'s; this module
//! models only what the webhook servers add. Each check lives in its own module, with the file and
//! lines it follows.

mod decode;
mod initializers;
mod ml_policy;
mod replicated_jobs;
mod runtime_patches;
mod runtime_ref;
mod torchtune;
mod volcano;

use serde_json::Value;

use crate::objects::str_at;

/// The TrainJob webhook's name in the 2.3.0 chart's ValidatingWebhookConfiguration.
pub const TRAINJOB_WEBHOOK: &str = "validator.trainjob.trainer.kubeflow.org";
/// The TrainJob defaulting (mutating) webhook, called before the API server's schema validation.
pub const DEFAULTING_WEBHOOK: &str = "defaulter.trainjob.trainer.kubeflow.org";
pub const CLUSTER_RUNTIME_WEBHOOK: &str = "validator.clustertrainingruntime.trainer.kubeflow.org";
pub const RUNTIME_WEBHOOK: &str = "validator.trainingruntime.trainer.kubeflow.org";
/// The runtime webhooks' objectSelector skips objects carrying this label with this value
/// (charts/kubeflow-trainer/templates/webhook/validating_webhook_configuration.yaml, TA-RT-004).
pub const BYPASS_LABEL: (&str, &str) = ("trainer.kubeflow.org/webhook-validation", "disabled");

/// One reason a webhook refuses an object: the field path and the detail, as the Go
/// `field.Error` names them (`spec.trainer.env: … must not have reserved envs …`), or a plain
/// error with no field.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    pub webhook: &'static str,
    /// Empty for an error that is not a field error (`unsupported runtime: …`).
    pub field: String,
    pub detail: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.detail)
        } else {
            write!(f, "{}: {}", self.field, self.detail)
        }
    }
}

/// Whether a write of the object is a create or an update of a stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// What the runtime webhooks refuse for a ClusterTrainingRuntime or TrainingRuntime. The
/// TrainingRuntime webhook validates creates only; a runtime with the bypass label is never sent.
pub fn runtime(obj: &Value, op: Operation) -> Vec<Refusal> {
    let webhook = match str_at(obj, &["kind"]) {
        "ClusterTrainingRuntime" => CLUSTER_RUNTIME_WEBHOOK,
        "TrainingRuntime" if op == Operation::Create => RUNTIME_WEBHOOK,
        _ => return Vec::new(),
    };
    if bypassed(obj) {
        return Vec::new();
    }
    replicated_jobs::refusals(obj).into_iter().map(|(field, detail)| Refusal { webhook, field, detail }).collect()
}

/// Whether the runtime webhooks' objectSelector leaves the object out.
pub fn bypassed(obj: &Value) -> bool {
    str_at(obj, &["metadata", "labels", BYPASS_LABEL.0]) == BYPASS_LABEL.1
}

/// The runtimes stored in the cluster, where the TrainJob webhook looks up the one a TrainJob
/// names.
#[derive(Debug, Default)]
pub struct Runtimes<'a>(pub Vec<&'a Value>);

impl<'a> Runtimes<'a> {
    /// `namespace` is ignored for a ClusterTrainingRuntime.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Value> {
        self.0.iter().copied().find(|r| {
            str_at(r, &["kind"]) == kind
                && str_at(r, &["metadata", "name"]) == name
                && (kind == "ClusterTrainingRuntime" || str_at(r, &["metadata", "namespace"]) == namespace)
        })
    }
}

/// What the TrainJob defaulting webhook refuses before the API server validates the object:
/// a TrainJob that does not decode into Trainer's Go types. `schema_errors` are the CRD schema's
/// errors for the same object ([`kube_validate::Validator::validate`]).
pub fn trainjob_undecodable(job: &Value, schema_errors: &[kube_validate::FieldError]) -> Option<Refusal> {
    decode::refusal(job, schema_errors)
}

/// What the TrainJob webhook refuses for a TrainJob (after the API server's defaults: the
/// runtimeRef's kind and apiGroup are filled in when absent) on a create; an update runs the same
/// checks and [`trainjob_update`]'s.
pub fn trainjob(job: &Value, runtimes: &Runtimes) -> Vec<Refusal> {
    let webhook = TRAINJOB_WEBHOOK;
    let wrap = |v: Vec<(String, String)>| v.into_iter().map(|(field, detail)| Refusal { webhook, field, detail }).collect::<Vec<_>>();
    let runtime = match runtime_ref::resolve(job, runtimes) {
        Ok(r) => r,
        Err(e) => return wrap(vec![e]),
    };
    let template = runtime_patches::merged_containers(runtime, job);
    let mut out = Vec::new();
    out.extend(ml_policy::refusals(runtime, &template, job));
    out.extend(initializers::refusals(&template, job));
    out.extend(runtime_patches::refusals(&template, job));
    out.extend(torchtune::refusals(runtime, job));
    out.extend(volcano::refusals(runtime, job));
    wrap(out)
}

/// A call to a webhook that the API server gives up on: the object is refused (failurePolicy
/// Fail) with `failed calling webhook "<webhook>": …` instead of the webhook's own answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CallFailure {
    pub webhook: &'static str,
    /// Why the webhook server does not answer.
    pub reason: String,
}

/// Whether the TrainJob webhook's call for `job` never returns: its runtime has
/// `podGroupPolicy.volcano` and a pod template naming a PriorityClass, and the manager may not
/// list and watch `priorityclasses` (`priority_classes_readable`), so the Volcano plugin's cached
/// lookup waits for an informer that never syncs until the API server's timeout. A create and an
/// update alike; a TrainJob whose runtime is not found never reaches the plugin.
pub fn trainjob_call_fails(job: &Value, runtimes: &Runtimes, priority_classes_readable: bool) -> Option<CallFailure> {
    if priority_classes_readable {
        return None;
    }
    let runtime = runtime_ref::resolve(job, runtimes).ok()?;
    let names = volcano::priority_lookups(runtime);
    let first = names.first()?;
    Some(CallFailure {
        webhook: TRAINJOB_WEBHOOK,
        reason: format!(
            "the Volcano plugin looks up PriorityClass {first:?} through the manager's cache, and the manager may not list and watch priorityclasses.scheduling.k8s.io: the lookup never returns"
        ),
    })
}

/// The PriorityClasses the TrainJob webhook looks up for TrainJobs on `runtime` (Volcano runtimes only).
pub fn priority_lookups(runtime: &Value) -> Vec<String> {
    volcano::priority_lookups(runtime)
}

/// What the TrainJob webhook refuses on an update of `old` to `new`: the checks of a create, and
/// the runtimePatches immutability.
pub fn trainjob_update(old: &Value, new: &Value, runtimes: &Runtimes) -> Vec<Refusal> {
    let mut out = trainjob(new, runtimes);
    out.extend(runtime_patches::update_refusals(old, new).into_iter().map(|(field, detail)| Refusal {
        webhook: TRAINJOB_WEBHOOK,
        field,
        detail,
    }));
    out
}

/// The replicatedJobs of a runtime's JobSet template after the TrainJob's runtimePatches are
/// merged in (by name, as the strategic merge patch does): each job's name, its containers and
/// initContainers (name and volumeMount names).
#[derive(Debug, Default)]
pub struct Template {
    pub jobs: Vec<Job>,
}

#[derive(Debug, Default)]
pub struct Job {
    pub name: String,
    pub containers: Vec<Container>,
    pub init_containers: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Container {
    pub name: String,
    pub volume_mounts: Vec<String>,
}

impl Template {
    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

impl Job {
    /// Names of containers and initContainers (the JobSet plugin's set per replicatedJob).
    pub fn has_container(&self, name: &str) -> bool {
        self.containers.iter().any(|c| c.name == name) || self.init_containers.iter().any(|c| c == name)
    }
}

fn items<'a>(v: &'a Value, path: &[&str]) -> impl Iterator<Item = &'a Value> {
    let mut at = Some(v);
    for p in path {
        at = at.and_then(|x| x.get(*p));
    }
    at.and_then(Value::as_array).into_iter().flatten()
}

#[cfg(test)]
mod tests;
