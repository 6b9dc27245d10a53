//! `kube-target-tested`: the Kubernetes version the cluster moves to (`--to-kube`) against the
//! newest one each controller's release is tested on (`kubernetes_tested` of `rules/compat.yaml`:
//! the end-to-end matrix at its tag) — the target Trainer, the JobSet its chart bundles, and the
//! Kueue the cluster runs. Past it is untested, not known to break.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::compat::{self, Component};
use crate::audit::input::CheckInput;
use crate::cluster::neighbours;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(target) = input.to_kube else { return Vec::new() };
        let table = compat::get();
        let mut versions = vec![(Component::Trainer, input.to.clone())];
        if let Some(jobset) = table.trainer(&input.to).and_then(|r| semver::Version::parse(&r.jobset.bundled).ok()) {
            versions.push((Component::Jobset, jobset));
        }
        if let Some(kueue) = neighbours::find(input.state, neighbours::KUEUE).semver() {
            versions.push((Component::Kueue, kueue));
        }
        let mut hits = Vec::new();
        for (component, version) in versions {
            let Some(row) = table.tested(component, &version) else { continue };
            let Some(max) = row.max() else { continue };
            if target.minor_version() <= max {
                continue;
            }
            let matrix: Vec<String> = row.matrix.iter().map(ToString::to_string).collect();
            hits.push(
                Hit::new(
                    format!("{} {version}", component.name()),
                    format!(
                        "{} {version} is tested on Kubernetes up to {max}; {target} is past it (untested, not known to break)",
                        component.name()
                    ),
                )
                .evidence(format!("end-to-end matrix: {} — {}", matrix.join(", "), row.source))
                .var("component", component.name())
                .var("max", max.to_string())
                .var("kube", target.to_string()),
            );
        }
        hits
    }
}
