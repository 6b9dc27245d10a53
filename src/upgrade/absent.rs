//! Whether the cluster holds a Kubeflow Trainer install at all. An upgrade of nothing is refused
//! once, saying where the audit looked, before the questions only an install raises (the
//! Kubernetes version it runs on, the version installed): a cluster without Trainer used to be
//! asked for `--kube-version`, then `--from`, and with both was found `ready`.

use crate::cluster::catalog::{CONTROLLER_DEPLOYMENT, PUBLIC_CONFIGMAP, TRAINER_GROUP};
use crate::cluster::install::{installed_version, overall};
use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::engine::Method;
use crate::objects::str_at;

/// Why there is nothing to upgrade, when no trace of Trainer is in `state`: no Helm release of
/// its chart, no object of its API group (CRDs, TrainJobs, runtimes), no controller, no public
/// ConfigMap. None when any is there.
pub fn nothing_installed(state: &ClusterState, releases: &[Release]) -> Option<String> {
    let release = releases.iter().any(|r| r.current.chart_name == "kubeflow-trainer");
    let crds = state.crds().any(|c| str_at(c, &["spec", "group"]) == TRAINER_GROUP);
    let objects = ["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"].iter().any(|k| state.of_kind(k).next().is_some());
    let version = installed_version(state, releases).is_some();
    let method = overall(state, releases).method != Method::Unknown;
    if release || crds || objects || version || method {
        return None;
    }
    let forbidden = state.warnings.iter().filter(|w| w.starts_with("forbidden")).count();
    let partial = match forbidden {
        0 => String::new(),
        n => format!(" ({n} of the reads were forbidden cluster-wide, and made only in the namespaces that matter: see the warnings)"),
    };
    Some(format!(
        "no Kubeflow Trainer install found: looked for a Helm release of chart kubeflow-trainer in every namespace, \
         the {TRAINER_GROUP} CRDs, TrainJobs and runtimes, the controller Deployment {CONTROLLER_DEPLOYMENT} and \
         ConfigMap {PUBLIC_CONFIGMAP}, and found none{partial}. There is nothing to upgrade: check that this is the \
         cluster (--context, --snapshot); to install Trainer, use helm install"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_cluster_is_named_as_such_and_one_trace_of_trainer_is_enough() {
        let empty = ClusterState::default();
        let why = nothing_installed(&empty, &[]).unwrap();
        assert!(why.starts_with("no Kubeflow Trainer install found: looked for a Helm release"), "{why}");
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "trainjobs.trainer.kubeflow.org"}, "spec": {"group": "trainer.kubeflow.org"}
        });
        let state = ClusterState::from_normalised(Default::default(), vec![crd], vec![]);
        assert_eq!(nothing_installed(&state, &[]), None);
    }
}
