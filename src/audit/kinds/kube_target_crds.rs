//! `kube-target-crds`: the CRDs on the Kubernetes version the cluster moves to (`--to-kube`), as
//! that version's API server judges a CRD write (kube_validate::crd_write: its CEL environment
//! for new and for stored rules, its cost estimator and limits): the target chart's CRDs as the
//! Trainer upgrade writes them there (an update of a CRD the cluster has, else a create), and the
//! installed CRDs the target does not carry as their next unchanged re-apply there (what a
//! `helm upgrade` of a chart that templates its CRDs, or a `kubectl apply`, sends; a stored
//! rule's library gone would show here too).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::str_at;
use kube_validate::crd_write::{self, CrdIssue, CrdWrite, IssueKind};
use kube_version::KubeVersion;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

fn hit(crd: &str, what: &str, target: &KubeVersion, i: &CrdIssue) -> Hit {
    let rule = i.rule.as_deref().map(|r| format!(" rule `{r}`")).unwrap_or_default();
    let kind = match i.kind {
        IssueKind::Compile => "does not compile",
        IssueKind::Cost => {
            if i.exact {
                "is over a cost limit"
            } else {
                "may be over a cost limit (estimate)"
            }
        }
    };
    let mut h = Hit::new(
        format!("CustomResourceDefinition/{crd}"),
        format!("{what} on Kubernetes {target}: at {} (version {}){rule}: {}", i.path, i.version, i.message),
    )
    .evidence(format!("the rule {kind} as a Kubernetes {target} API server judges the write"))
    .var("crd", crd)
    .var("kube", target.to_string());
    if let Some(from) = &i.accepted_from {
        h = h.evidence(format!("accepted from Kubernetes {from}"));
    }
    h
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(target) = input.to_kube else { return Vec::new() };
        let mut hits = Vec::new();
        let mut carried = Vec::new();
        for crd in input.target.objects.iter().filter(|o| o.identity.kind == "CustomResourceDefinition") {
            let name = crd.identity.name.as_str();
            carried.push(name.to_string());
            let installed = input.state.crds().find(|c| str_at(c, &["metadata", "name"]) == name);
            let (write, what) = match installed {
                Some(old) => (CrdWrite::Update(old), format!("the {name} CRD of {} applied over the installed one", input.to)),
                None => (CrdWrite::Create, format!("the {name} CRD of {} created", input.to)),
            };
            let Ok(issues) = crd_write::issues(&crd.body, target, write) else { continue };
            hits.extend(issues.iter().map(|i| hit(name, &what, target, i)));
        }
        for installed in input.state.crds() {
            let name = str_at(installed, &["metadata", "name"]);
            if carried.iter().any(|c| c == name) {
                continue;
            }
            let Ok(issues) = crd_write::issues(installed, target, CrdWrite::Update(installed)) else { continue };
            let what = format!("the installed {name} CRD, applied again unchanged");
            hits.extend(issues.iter().map(|i| hit(name, &what, target, i).variant("installed")));
        }
        hits
    }
}
