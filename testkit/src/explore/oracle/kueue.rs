//! Kueue's TrainJob integration against the target's TrainJob CRD: each Kueue release writes the
//! pod overrides of the Trainer API its go.mod requires, into the TrainJob it admits —
//! `spec.podSpecOverrides` (kueue v0.14.0: go.mod L12 `github.com/kubeflow/trainer/v2 v2.0.1`,
//! `pkg/controller/jobs/trainjob/trainjob_controller.go` L251-L257), `spec.podTemplateOverrides`
//! (v0.14.5 to v0.16.x: trainer v2.1.0, L270-L276 at v0.14.5, L277-L288 at v0.16.6),
//! `spec.runtimePatches` (v0.17.0: trainer v2.2.0, L342-L344). A field the target's TrainJob CRD
//! does not declare is pruned by the API server, and Kueue never starts the TrainJob. The field is
//! looked up in the target chart's own CRD, not in trainer-audit's rules.

use serde_json::Value as Json;
use trainer_audit::objects::str_at;

use super::{Failure, Situation};

/// The TrainJob field a Kueue release writes.
fn field(version: &str) -> Option<&'static str> {
    let v = semver::Version::parse(version).ok()?;
    if v.major != 0 {
        return None;
    }
    Some(match (v.minor, v.patch) {
        (14, p) if p < 5 => "podSpecOverrides",
        (14, _) | (15, _) | (16, _) => "podTemplateOverrides",
        (17, _) => "runtimePatches",
        _ => return None,
    })
}

/// Whether the TrainJob CRD (templated or from crds/) declares `spec.<field>` in its storage version.
fn declares(crd: &Json, field: &str) -> bool {
    crd.pointer("/spec/versions").and_then(Json::as_array).into_iter().flatten().any(|v| {
        v.pointer("/schema/openAPIV3Schema/properties/spec/properties").and_then(Json::as_object).is_some_and(|p| p.contains_key(field))
    })
}

pub fn failures(s: &Situation) -> Vec<Failure> {
    let Some(target) = &s.target else { return Vec::new() };
    let crd = target
        .objects
        .iter()
        .chain(&target.crds)
        .find(|o| o["kind"] == "CustomResourceDefinition" && str_at(o, &["metadata", "name"]) == "trainjobs.trainer.kubeflow.org");
    let Some(crd) = crd else { return Vec::new() };
    let mut out = Vec::new();
    for n in s.state.neighbours.iter().filter(|n| n.kind == "kueue" && n.image.tells_version()) {
        let Some(field) = field(&n.version) else { continue };
        if !declares(crd, field) {
            out.push(Failure {
                class: "kueue",
                area: "world §2",
                what: format!(
                    "Kueue {} writes spec.{field} into the TrainJobs it admits; the Trainer {} TrainJob CRD does not declare it, so it is pruned and Kueue never starts them",
                    n.version, target.version
                ),
                named_by: vec!["Kueue".into(), "TA-NB-001".into()],
            });
        }
    }
    out
}
