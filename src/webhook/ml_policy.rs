//! The ML-policy plugins' checks of a TrainJob against its runtime's `mlPolicy` (kubeflow/trainer
//! v2.3.0 `pkg/runtime/framework/plugins/`): torch (`torch/torch.go` L56-L107: no torchrun
//! reserved env in `spec.trainer.env`; every `envInjection` target container exists), MPI
//! (`mpi/mpi.go` L82-L109: its reserved envs; more than one node with `runLauncherAsNode` needs
//! both a `launcher` and a `node` job), XGBoost (`xgboost/xgboost.go` L53-L71: its reserved envs)
//! and Flux (`flux/flux.go` L103-L131: `numProcPerNode` at least 1, no `flux-installer`
//! initContainer in the `node` job). The reserved names are `pkg/constants/constants.go`
//! L175-L203, L269-L278, L299-L306.

use serde_json::Value;

use super::{items, Template};

const TORCH_RESERVED: [&str; 5] = ["PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"];
const MPI_RESERVED: [&str; 4] =
    ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots"];
const XGBOOST_RESERVED: [&str; 4] = ["DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"];

fn env_names(job: &Value) -> Vec<&str> {
    items(job, &["spec", "trainer", "env"]).filter_map(|e| e.get("name").and_then(Value::as_str)).collect()
}

/// `must not have reserved envs, invalid envs configured: [A B]` (Go prints the sorted set).
fn reserved(job: &Value, names: &[&str]) -> Option<(String, String)> {
    let mut hit: Vec<&str> = env_names(job).into_iter().filter(|n| names.contains(n)).collect();
    hit.sort_unstable();
    hit.dedup();
    (!hit.is_empty())
        .then(|| ("spec.trainer.env".into(), format!("must not have reserved envs, invalid envs configured: [{}]", hit.join(" "))))
}

pub fn refusals(runtime: &Value, template: &Template, job: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let policy = runtime.pointer("/spec/mlPolicy").unwrap_or(&Value::Null);
    let has_trainer = job.pointer("/spec/trainer").is_some_and(|t| !t.is_null());
    if let Some(torch) = policy.get("torch").filter(|t| !t.is_null()) {
        for target in items(torch, &["envInjection", "targets"]) {
            let jname = target.get("jobName").and_then(Value::as_str).unwrap_or_default();
            for c in items(target, &["containerNames"]).filter_map(Value::as_str) {
                if !template.job(jname).is_some_and(|j| j.has_container(c)) {
                    out.push((
                        "spec.runtimeRef".into(),
                        format!("envInjection target podSet {jname:?} container {c:?} not found in runtime template"),
                    ));
                }
            }
        }
        if has_trainer {
            out.extend(reserved(job, &TORCH_RESERVED));
        }
    }
    if let Some(mpi) = policy.get("mpi").filter(|t| !t.is_null()) {
        let nodes = job.pointer("/spec/trainer/numNodes").and_then(Value::as_i64).unwrap_or(1);
        let as_node = mpi.get("runLauncherAsNode").and_then(Value::as_bool).unwrap_or(false);
        if has_trainer && nodes >= 2 && as_node && (template.job("launcher").is_none() || template.job("node").is_none()) {
            out.push((
                "spec.trainer.numNodes".into(),
                "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node".into(),
            ));
        }
        if has_trainer {
            out.extend(reserved(job, &MPI_RESERVED));
        }
    }
    if policy.get("xgboost").is_some_and(|t| !t.is_null()) && has_trainer {
        for (i, name) in env_names(job).into_iter().enumerate() {
            if XGBOOST_RESERVED.contains(&name) {
                out.push((format!("spec.trainer.env[{i}]"), format!("{name} is reserved for the XGBoost runtime")));
            }
        }
    }
    if let Some(flux) = policy.get("flux").filter(|t| !t.is_null()) {
        let n = job
            .pointer("/spec/trainer/numProcPerNode")
            .and_then(Value::as_i64)
            .or_else(|| flux.get("numProcPerNode").and_then(Value::as_i64));
        if n.is_some_and(|n| n < 1) {
            out.push(("spec.trainer.numProcPerNode".into(), "must be greater than or equal to 1 for Flux TrainJob".into()));
        }
        if template.job("node").is_some_and(|j| j.init_containers.iter().any(|c| c == "flux-installer")) {
            out.push(("spec.trainer.initContainers".into(), "InitContainer 'flux-installer' is reserved".into()));
        }
    }
    out
}
