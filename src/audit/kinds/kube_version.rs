//! `kube-version`: the cluster is older than the target needs (no Trainer chart sets
//! `kubeVersion`, so Helm does not check it). The minimum is the `min` param, or else the
//! `kubernetes` column of the target's row in `rules/compat.yaml` (the version its CRDs were
//! shown to need on real API servers, `cargo xtask kube-versions`).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use kube_version::KubeVersion;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `MAJOR.MINOR`, e.g. `1.32`; when absent, the target's row of `rules/compat.yaml`.
    #[serde(default)]
    pub min: Option<KubeVersion>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let row = crate::audit::compat::get().trainer(&input.to);
        let observed = self.min.is_none();
        let Some(min) = self.min.clone().or_else(|| row.map(|r| r.kubernetes.clone())) else { return Vec::new() };
        // The two figures as one statement: what the chart documents, what its CRDs need on a
        // real API server (the table's minimum, `cargo xtask kube-versions`), and why they differ.
        let documented = row.and_then(|r| r.documented.as_ref()).filter(|d| **d != min);
        let why = match (observed, documented) {
            (true, Some(d)) => {
                format!(": its chart README documents {d}, but API servers older than {min} refuse its CRDs (rules/compat.yaml)")
            }
            (true, None) => format!(": API servers older than {min} refuse its CRDs (rules/compat.yaml)"),
            (false, _) => String::new(),
        };
        match input.state.kube_version() {
            Some(server) if server.minor_version() >= min => Vec::new(),
            Some(server) => vec![Hit::new(
                "cluster",
                format!("Trainer {} needs Kubernetes {min} or later, and this cluster runs {server}{why}", input.to),
            )
            .evidence(format!("server version {server}"))
            .var("min", min.to_string())],
            None => vec![Hit::new("cluster", format!("the Kubernetes version is unknown; {} needs {min} or later", input.to))
                .evidence("no server version (snapshot without ClusterInfo): pass --kube-version")
                .var("min", min.to_string())],
        }
    }
}
