//! What the cluster holds, read back with `kubectl`/`helm` after each step: the release's status
//! and chart, the Trainer CRDs, every runtime (Terminating or not, finalizers, who manages it),
//! every TrainJob as stored. Compared before and after to name the damage an upgrade did.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::lab::Lab;

pub const TRAINER_CRDS: [&str; 3] =
    ["clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org", "trainjobs.trainer.kubeflow.org"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// Its UID: another one on read-back is the object deleted and re-created.
    pub uid: String,
    pub terminating: bool,
    pub finalizers: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub spec: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// (`deployed`/`failed`/`pending-upgrade`/…, `kubeflow-trainer-2.3.0`) or (`absent`, "").
    pub release: (String, String),
    /// Trainer CRDs present (of [`TRAINER_CRDS`]).
    pub crds: Vec<String>,
    /// ClusterTrainingRuntimes by name.
    pub runtimes: BTreeMap<String, Runtime>,
    /// TrainJobs by `namespace/name`, as stored (spec only).
    pub trainjobs: BTreeMap<String, Json>,
}

fn map(v: &Json) -> BTreeMap<String, String> {
    v.as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect()).unwrap_or_default()
}

impl State {
    pub fn read(lab: &Lab) -> State {
        let release = lab.release();
        let present = lab.shell_ok("kubectl get crd -o name").stdout;
        let crds = TRAINER_CRDS
            .iter()
            .filter(|c| present.lines().any(|l| l == format!("customresourcedefinition.apiextensions.k8s.io/{c}")))
            .map(|c| c.to_string())
            .collect::<Vec<_>>();
        let has = |plural: &str| crds.iter().any(|c| c.starts_with(&format!("{plural}.")));
        let mut runtimes = BTreeMap::new();
        if has("clustertrainingruntimes") {
            for item in lab.get_json("clustertrainingruntimes")["items"].as_array().cloned().unwrap_or_default() {
                let meta = &item["metadata"];
                runtimes.insert(
                    meta["name"].as_str().unwrap_or_default().to_string(),
                    Runtime {
                        uid: meta["uid"].as_str().unwrap_or_default().to_string(),
                        terminating: !meta["deletionTimestamp"].is_null(),
                        finalizers: meta["finalizers"]
                            .as_array()
                            .map(|f| f.iter().filter_map(|s| s.as_str().map(String::from)).collect())
                            .unwrap_or_default(),
                        labels: map(&meta["labels"]),
                        annotations: map(&meta["annotations"]),
                        spec: item["spec"].clone(),
                    },
                );
            }
        }
        let mut trainjobs = BTreeMap::new();
        if has("trainjobs") {
            for item in lab.get_json("trainjobs -A")["items"].as_array().cloned().unwrap_or_default() {
                let meta = &item["metadata"];
                let key = format!("{}/{}", meta["namespace"].as_str().unwrap_or_default(), meta["name"].as_str().unwrap_or_default());
                trainjobs.insert(key, item["spec"].clone());
            }
        }
        State { release, crds, runtimes, trainjobs }
    }

    /// One line per fact, for the scenario's log.
    pub fn describe(&self) -> String {
        let runtimes: Vec<String> = self
            .runtimes
            .iter()
            .map(|(name, r)| {
                let mut s = name.clone();
                if r.terminating {
                    s.push_str(" (Terminating)");
                }
                if let Some(keep) = r.annotations.get("helm.sh/resource-policy") {
                    s.push_str(&format!(" [{keep}]"));
                }
                s
            })
            .collect();
        format!(
            "release {} {}; CRDs {}; runtimes: {}; TrainJobs: {}",
            self.release.0,
            self.release.1,
            self.crds.len(),
            runtimes.join(", "),
            self.trainjobs.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    }
}
