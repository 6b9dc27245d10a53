//! How far each namespace has moved from the Training Operator v1 (`kubeflow.org/v1` PyTorchJob,
//! TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob) to TrainJobs: per namespace the legacy jobs
//! running and finished per kind, the TrainJobs, and a migration state read from what still
//! runs — legacy only, both, TrainJob only, idle (nothing running).
//!
//! A v1 job is finished once its `Succeeded` or `Failed` condition is true
//! (kubeflow/trainer@v1.9.4 pkg/apis/kubeflow.org/v1/common_types.go#L132-L154); a TrainJob once
//! `Complete` or `Failed` is (kubeflow/trainer@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L57-L64).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::catalog::LEGACY_KINDS;
use super::ClusterState;
use crate::objects::str_at;

/// The Training Operator's API version (the MPI Operator's `kubeflow.org/v2beta1` MPIJobs are
/// not its jobs).
pub const LEGACY_API_VERSION: &str = "kubeflow.org/v1";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub running: usize,
    pub finished: usize,
}

impl Counts {
    fn add(&mut self, finished: bool) {
        if finished {
            self.finished += 1;
        } else {
            self.running += 1;
        }
    }

    fn plus(&mut self, other: Counts) {
        self.running += other.running;
        self.finished += other.finished;
    }

    pub fn total(&self) -> usize {
        self.running + self.finished
    }
}

/// What runs in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Legacy jobs run, no TrainJob does.
    LegacyOnly,
    /// Both run.
    Both,
    /// TrainJobs run, no legacy job does.
    TrainjobOnly,
    /// Jobs exist but none runs.
    Idle,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::LegacyOnly => "legacy only",
            State::Both => "both",
            State::TrainjobOnly => "TrainJob only",
            State::Idle => "idle",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Namespace {
    pub namespace: String,
    pub state: State,
    /// Legacy kind → counts (kinds with no job left out).
    pub legacy: BTreeMap<String, Counts>,
    pub trainjobs: Counts,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Migration {
    /// Namespaces with any legacy job or TrainJob, by name.
    pub namespaces: Vec<Namespace>,
    pub legacy: BTreeMap<String, Counts>,
    pub trainjobs: Counts,
    /// State → how many namespaces are in it.
    pub states: BTreeMap<State, usize>,
}

impl Migration {
    pub fn legacy_total(&self) -> usize {
        self.legacy.values().map(Counts::total).sum()
    }
}

fn condition_true(o: &Json, types: &[&str]) -> bool {
    o.pointer("/status/conditions")
        .and_then(Json::as_array)
        .is_some_and(|cs| cs.iter().any(|c| types.contains(&str_at(c, &["type"])) && str_at(c, &["status"]) == "True"))
}

/// Whether a v1 job has finished.
pub fn legacy_finished(job: &Json) -> bool {
    condition_true(job, &["Succeeded", "Failed"])
}

/// Whether a TrainJob has finished.
pub fn trainjob_finished(job: &Json) -> bool {
    condition_true(job, &["Complete", "Failed"])
}

/// The `spec.managedBy` of TrainJobs the built-in controller reconciles (its default).
pub const OWN_CONTROLLER: &str = "trainer.kubeflow.org/trainjob-controller";

/// The reason of a `Failed` condition the 2.3 controller keeps (a TrainJob past its
/// `activeDeadlineSeconds`).
pub const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";

/// Why the 2.3 controller gives a TrainJob no `<name>-runtime-snapshot` ConfigMap, or None when it
/// does. kubeflow/trainer v2.3.0 `pkg/controller/trainjob_controller.go`: a TrainJob managed by
/// another controller is skipped (L89-L92); `removeFailedCondition` (L100, L246-L252) drops a
/// `Failed` condition unless its reason is `DeadlineExceeded` before `IsTrainJobFinished` is read
/// (L107), so only `Complete` and deadline-failed TrainJobs count as finished; every other one
/// is reconciled and snapshotted (`pkg/runtime/core/clustertrainingruntime.go` L61-L76), a
/// Failed one included.
pub fn no_runtime_snapshot(job: &Json) -> Option<&'static str> {
    let managed_by = job.pointer("/spec/managedBy").and_then(Json::as_str).unwrap_or(OWN_CONTROLLER);
    if managed_by != OWN_CONTROLLER {
        return Some("managed by another controller");
    }
    let conditions = || job.pointer("/status/conditions").and_then(Json::as_array).into_iter().flatten();
    let is_true = |c: &Json| str_at(c, &["status"]) == "True";
    if conditions().any(|c| str_at(c, &["type"]) == "Complete" && is_true(c)) {
        return Some("Complete");
    }
    if conditions().any(|c| str_at(c, &["type"]) == "Failed" && is_true(c) && str_at(c, &["reason"]) == DEADLINE_EXCEEDED) {
        return Some("Failed on its deadline (DeadlineExceeded)");
    }
    None
}

pub fn migration(state: &ClusterState) -> Migration {
    #[derive(Default)]
    struct Acc<'a> {
        legacy: BTreeMap<&'a str, Counts>,
        trainjobs: Counts,
    }
    let mut per_ns: BTreeMap<&str, Acc> = BTreeMap::new();
    for kind in LEGACY_KINDS {
        for job in state.of_kind(kind).filter(|j| str_at(j, &["apiVersion"]) == LEGACY_API_VERSION) {
            let acc = per_ns.entry(str_at(job, &["metadata", "namespace"])).or_default();
            acc.legacy.entry(kind).or_default().add(legacy_finished(job));
        }
    }
    for job in state.trainjobs() {
        per_ns.entry(str_at(job, &["metadata", "namespace"])).or_default().trainjobs.add(trainjob_finished(job));
    }
    let mut out = Migration::default();
    for (ns, acc) in per_ns {
        let legacy_running = acc.legacy.values().any(|c| c.running > 0);
        let state = match (legacy_running, acc.trainjobs.running > 0) {
            (true, true) => State::Both,
            (true, false) => State::LegacyOnly,
            (false, true) => State::TrainjobOnly,
            (false, false) => State::Idle,
        };
        for (kind, c) in &acc.legacy {
            out.legacy.entry(kind.to_string()).or_default().plus(*c);
        }
        out.trainjobs.plus(acc.trainjobs);
        *out.states.entry(state).or_default() += 1;
        out.namespaces.push(Namespace {
            namespace: ns.to_string(),
            state,
            legacy: acc.legacy.into_iter().map(|(k, c)| (k.to_string(), c)).collect(),
            trainjobs: acc.trainjobs,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterInfo;
    use serde_json::json;

    fn job(api: &str, kind: &str, ns: &str, name: &str, condition: Option<&str>) -> Json {
        let mut j = json!({"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": {}});
        if let Some(c) = condition {
            j["status"] = json!({"conditions": [{"type": "Created", "status": "True"}, {"type": c, "status": "True"}]});
        }
        j
    }

    #[test]
    fn namespaces_get_counts_per_kind_and_a_state() {
        let v1 = "kubeflow.org/v1";
        let tj = "trainer.kubeflow.org/v1alpha1";
        let state = ClusterState::from_objects(
            ClusterInfo::default(),
            vec![
                job(v1, "PyTorchJob", "both", "p1", Some("Running")),
                job(v1, "PyTorchJob", "both", "p2", Some("Succeeded")),
                job(tj, "TrainJob", "both", "t1", None),
                job(v1, "TFJob", "legacy", "t", Some("Running")),
                job(v1, "MPIJob", "legacy", "m", Some("Failed")),
                job(tj, "TrainJob", "moved", "t2", None),
                job(v1, "XGBoostJob", "moved", "x", Some("Succeeded")),
                job(tj, "TrainJob", "quiet", "t3", Some("Complete")),
                // An MPI Operator v2 job is not the Training Operator's.
                job("kubeflow.org/v2beta1", "MPIJob", "other", "m2", None),
            ],
            Vec::new(),
        );
        let m = migration(&state);
        let by: BTreeMap<&str, &Namespace> = m.namespaces.iter().map(|n| (n.namespace.as_str(), n)).collect();
        assert_eq!(by.keys().copied().collect::<Vec<_>>(), ["both", "legacy", "moved", "quiet"]);
        assert_eq!(by["both"].state, State::Both);
        assert_eq!(by["both"].legacy["PyTorchJob"], Counts { running: 1, finished: 1 });
        assert_eq!(by["legacy"].state, State::LegacyOnly);
        assert_eq!(by["legacy"].legacy["MPIJob"], Counts { running: 0, finished: 1 });
        assert_eq!(by["moved"].state, State::TrainjobOnly);
        assert_eq!(by["quiet"].state, State::Idle);
        assert_eq!(m.legacy_total(), 5);
        assert_eq!(m.trainjobs, Counts { running: 2, finished: 1 });
        assert_eq!(m.states[&State::Both], 1);
        assert_eq!(serde_json::to_value(State::TrainjobOnly).unwrap(), json!("trainjob-only"));
    }
}
