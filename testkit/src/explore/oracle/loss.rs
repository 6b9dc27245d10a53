//! What the upgrade deletes: Helm deletes every object of the base manifest the target does not
//! render, except those whose live object carries `helm.sh/resource-policy: keep` (Helm v4.2.3
//! `pkg/kube/client.go` L648-L690, `Update`'s delete of `original` not in `target`). A deleted CRD
//! takes every object of its kind with it (the API server deletes a CRD's instances, k8s
//! v1.36.1 `apiextensions-apiserver/pkg/controller/finalizer/crd_finalizer.go`); a deleted
//! ClusterTrainingRuntime that unfinished TrainJobs name leaves them without their runtime
//! (Trainer v2.3.0 `pkg/runtime/core/clustertrainingruntime.go` L59-L76).

use trainer_audit::objects::str_at;

use super::situation::key;
use super::{Failure, Situation};
use crate::explore::state::JobState;

pub fn failures(s: &Situation) -> Vec<Failure> {
    let (Some(base), Some(target)) = (&s.base, &s.target) else { return Vec::new() };
    if !s.upgrade_runs {
        return Vec::new();
    }
    let kept: Vec<String> = target.objects.iter().map(key).collect();
    let mut out = Vec::new();
    for o in base.objects.iter().filter(|o| !kept.contains(&key(o))) {
        let Some(live) = s.live.get(&key(o)) else { continue };
        if str_at(live, &["metadata", "annotations", "helm.sh/resource-policy"]) == "keep" {
            continue;
        }
        let name = str_at(o, &["metadata", "name"]);
        match str_at(o, &["kind"]) {
            "CustomResourceDefinition" => {
                let kind = str_at(o, &["spec", "names", "kind"]);
                let count = s.live.values().filter(|l| str_at(l, &["kind"]) == kind).count();
                if count > 0 {
                    out.push(Failure {
                        class: "data-loss",
                        area: "other",
                        what: format!("Helm deletes CustomResourceDefinition {name} (in the base manifest, not in the target, no keep) and the API server its {count} objects"),
                        named_by: vec![format!("CustomResourceDefinition/{name}")],
                    });
                }
            }
            "ClusterTrainingRuntime" => {
                let users: Vec<&str> = s
                    .built
                    .trainjobs
                    .iter()
                    .filter(|t| t.runtime == name && matches!(t.state, JobState::Running) && t.managed_by.is_none())
                    .map(|t| t.name.as_str())
                    .collect();
                if !users.is_empty() {
                    out.push(Failure {
                        class: "runtime-deleted-in-use",
                        area: "other",
                        what: format!("Helm deletes ClusterTrainingRuntime {name} (no keep) while unfinished TrainJobs {users:?} name it"),
                        named_by: vec![format!("ClusterTrainingRuntime/{name}")],
                    });
                }
            }
            _ => {}
        }
    }
    out
}
