//! `schema-crd`: the target chart's CRDs against the cluster's API server — rules whose CEL the
//! server cannot compile at its version (a CRD write compiles new rules with the environment of
//! the version one minor below the server's; Trainer 2.3's `metadata.namespace` rules need
//! Kubernetes 1.32), and rules over the estimated CEL cost budget. When the cluster's version is
//! unknown, the CRDs are compiled for Kubernetes 1.30 and only the rules that some later version
//! accepts are reported, with that version.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::str_at;
use kube_validate::crd_write::{self, CrdIssue, CrdWrite, IssueKind};
use kube_version::KubeVersion;

/// The version compiled for when the cluster's is unknown: the oldest with ratcheting, below
/// every library boundary the Trainer CRDs meet.
const FLOOR: KubeVersion = KubeVersion::new(1, 30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Issue {
    /// CEL the cluster cannot compile (the CRD apply fails).
    Compile,
    /// Estimated cost over the per-rule or per-CRD budget.
    Cost,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub issue: Issue,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (kube, known) = input.kube();
        let kube = if known { kube } else { FLOOR };
        let server = input.state.kube_version().map_or_else(|| "unknown".to_string(), ToString::to_string);
        let mut hits = Vec::new();
        for crd in input.target.objects.iter().filter(|o| o.identity.kind == "CustomResourceDefinition") {
            let name = crd.identity.name.as_str();
            // The upgrade updates a CRD the cluster has (its old rules compile as stored ones).
            let installed = input.state.crds().find(|c| str_at(c, &["metadata", "name"]) == name);
            let write = installed.map_or(CrdWrite::Create, CrdWrite::Update);
            let Ok(issues) = crd_write::issues(&crd.body, &kube, write) else { continue };
            let wanted = match self.issue {
                Issue::Compile => IssueKind::Compile,
                Issue::Cost => IssueKind::Cost,
            };
            hits.extend(
                issues
                    .iter()
                    .filter(|i| i.kind == wanted)
                    .filter(|i| known || i.accepted_from.is_some())
                    .map(|i| hit(input, name, i, known, &kube, &server)),
            );
        }
        hits
    }
}

fn hit(input: &CheckInput, crd: &str, i: &CrdIssue, known: bool, kube: &KubeVersion, server: &str) -> Hit {
    let rule = i.rule.as_deref().map(|r| format!(" rule `{r}`")).unwrap_or_default();
    let message = match (known, &i.accepted_from) {
        (true, Some(v)) => format!(
            "the {crd} CRD of {} cannot be applied to Kubernetes {server}: at {}{rule}: {} (accepted from Kubernetes {v})",
            input.to, i.path, i.message
        ),
        (true, None) => format!("the {crd} CRD of {}, applied to Kubernetes {server}: at {}{rule}: {}", input.to, i.path, i.message),
        (false, v) => format!(
            "the {crd} CRD of {} needs Kubernetes {} or later (the cluster's version is unknown): at {}{rule}: {}",
            input.to,
            v.as_ref().map(|v| v.to_string()).unwrap_or_default(),
            i.path,
            i.message
        ),
    };
    let mut hit = Hit::new(format!("CustomResourceDefinition/{crd}"), message)
        .evidence(format!("compiled as a Kubernetes {kube} API server compiles a CRD write"))
        .var("crd", crd);
    match &i.accepted_from {
        Some(v) => hit = hit.var("min", v.to_string()),
        None => hit = hit.var("min", "(none: no Kubernetes version accepts this rule; report it to the chart's maintainers)"),
    }
    hit
}
