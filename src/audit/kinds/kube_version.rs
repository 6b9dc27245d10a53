//! `kube-version`: the cluster is older than the target needs (no Trainer chart sets
//! `kubeVersion`, so Helm does not check it). The minimum is the `min` param, or else the
//! `kubernetes` column of the target's row in `rules/compat.yaml` (the version its CRDs were
//! shown to need on real API servers, `cargo xtask kube-minimum`).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `MAJOR.MINOR`, e.g. `1.32`; when absent, the target's row of `rules/compat.yaml`.
    #[serde(default, deserialize_with = "minor_version")]
    pub min: Option<(String, u64)>,
}

fn parse_minor(text: &str) -> Option<u64> {
    match text.split_once('.').and_then(|(major, minor)| Some((major.parse::<u64>().ok()?, minor.parse::<u64>().ok()?))) {
        Some((1, minor)) => Some(minor),
        _ => None,
    }
}

fn minor_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(String, u64)>, D::Error> {
    let text = String::deserialize(d)?;
    match parse_minor(&text) {
        Some(minor) => Ok(Some((text, minor))),
        None => Err(serde::de::Error::custom(format!("min {text:?} is not a Kubernetes version like 1.32"))),
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let row = crate::audit::compat::get().trainer(&input.to);
        let from_table = row.and_then(|r| Some((r.kubernetes.clone(), parse_minor(&r.kubernetes)?)));
        let observed = self.min.is_none();
        let Some((min, min_minor)) = self.min.clone().or(from_table) else { return Vec::new() };
        let min = &min;
        // The two figures as one statement: what the chart documents, what its CRDs need on a
        // real API server (the table's minimum, `cargo xtask kube-minimum`), and why they differ.
        let documented = row.and_then(|r| r.documented.as_ref()).filter(|d| **d != *min);
        let why = match (observed, documented) {
            (true, Some(d)) => {
                format!(": its chart README documents {d}, but API servers older than {min} refuse its CRDs (rules/compat.yaml)")
            }
            (true, None) => format!(": API servers older than {min} refuse its CRDs (rules/compat.yaml)"),
            (false, _) => String::new(),
        };
        let server = input.state.info.server_version.as_deref().unwrap_or("?");
        match input.state.server_minor() {
            Some(minor) if minor >= min_minor => Vec::new(),
            Some(_) => vec![Hit::new(
                "cluster",
                format!("Trainer {} needs Kubernetes {min} or later, and this cluster runs {server}{why}", input.to),
            )
            .evidence(format!("server version {server}"))
            .var("min", min.as_str())],
            None => vec![Hit::new("cluster", format!("the Kubernetes version is unknown; {} needs {min} or later", input.to))
                .evidence("no server version (snapshot without ClusterInfo): pass --kube-version")
                .var("min", min.as_str())],
        }
    }
}
