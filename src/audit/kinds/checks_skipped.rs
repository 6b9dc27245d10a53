//! `checks-skipped`: the installed chart could not be read or rendered (no repository holds
//! that version, no `--from-chart`), so the checks that compare it with the target did not run.
//! A gate that passed without them would pass on a cluster it half judged; the hit names each
//! check that did not run.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

/// The kinds that read the installed chart's render and see nothing without it, and whether
/// each runs only in a GitOps review (with the file's engine options).
pub const READS_INSTALLED_CHART: &[(&str, bool)] =
    &[("runtime-drift", false), ("adopt-refused", true), ("crds-not-applied", true), ("values-removed-key", false)];

/// Whether a rule of `kind` reads the installed chart in this run (`gitops`: a GitOps review).
pub fn reads_installed_chart(kind: &str, gitops: bool) -> bool {
    READS_INSTALLED_CHART.iter().any(|(k, only_gitops)| *k == kind && (gitops || !only_gitops))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(missing) = &input.installed_missing else { return Vec::new() };
        if missing.skipped.is_empty() {
            return Vec::new();
        }
        let ids: Vec<&str> = missing.skipped.iter().map(|(id, _)| id.as_str()).collect();
        let mut hit = Hit::new(
            format!("chart kubeflow-trainer {}", input.from),
            format!(
                "the installed chart {} could not be read ({}): {} that {} it with the target did not run: {}",
                input.from,
                missing.reason,
                super::counted(ids.len(), "check"),
                super::agree(ids.len(), "compares", "compare"),
                ids.join(", ")
            ),
        )
        .var("checks", ids.join(", "));
        for (id, title) in &missing.skipped {
            hit = hit.evidence(format!("{id} did not run: {title}"));
        }
        vec![hit]
    }

    fn reads_cluster(&self) -> bool {
        false
    }
}
