//! The `check` report's data, as the upgrade makes it: the verdict, the inputs it rests on, the
//! install, the notes and the findings (JSON is its serde form; `report::check` renders it).

use serde::Serialize;

use crate::audit::finding::Finding;
use crate::audit::verdict::Decision;
use crate::engine::Method;

/// The inputs a check's verdict rests on, as the run took them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inputs {
    /// Where the installed version comes from (a Helm release, a controller image, `--from`).
    pub installed: String,
    /// The installed chart: `--from-chart`, or the repository version.
    pub installed_chart: String,
    /// The target chart: `--chart`, or the repository version.
    pub target_chart: String,
    /// The Kubernetes version every check used, and whether the cluster or `--kube-version` gave it.
    pub kubernetes: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    #[serde(flatten)]
    pub decision: Decision,
    pub inputs: Inputs,
    pub release: String,
    pub namespace: String,
    pub method: Method,
    pub from: String,
    pub to: String,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
    pub findings: Vec<Finding>,
}
