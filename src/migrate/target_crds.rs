//! The seam to the target CRDs: `migrate` asks a [`TargetSchema`] whether each converted object
//! would be accepted by the API server holding the target CRDs. [`TargetCrds`] answers with
//! trainer-audit's own validator (`kube_validate`), for the target chart's CRDs at the
//! cluster's version; tests can plug the real API server in through a closure.

use serde::Serialize;
use serde_json::Value as Json;

use super::PatchOp;
use kube_validate::memo::Memo;
use kube_validate::stored::CrdSet;

/// The verdict on one converted object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum SchemaVerdict {
    /// No validator ran; the reason says which.
    NotValidated { reason: String },
    /// Accepted. `pruned` lists fields the write would drop, `unevaluated` rules the validator
    /// could not evaluate (never counted as passed).
    Accepted { pruned: Vec<String>, unevaluated: Vec<String> },
    /// Rejected with the API server's field errors (`spec.trainer.numNodes: Invalid value: …`).
    Rejected { errors: Vec<String>, pruned: Vec<String> },
}

/// One write to validate: `object` as a create, or as an update of `stored` once the
/// `--before-crds` patch has reached it.
pub struct Write<'a> {
    pub object: &'a Json,
    pub stored: Option<&'a Json>,
    pub patch: &'a [PatchOp],
}

impl Write<'_> {
    /// The stored object as the update meets it (copied only when patched).
    pub fn stored(&self) -> Option<std::borrow::Cow<'_, Json>> {
        let stored = self.stored?;
        Some(if self.patch.is_empty() { std::borrow::Cow::Borrowed(stored) } else { std::borrow::Cow::Owned(patched(stored, self.patch)) })
    }
}

/// Validates an object as a create (`stored` None) or as an update of `stored` under the
/// target CRDs would.
pub trait TargetSchema {
    fn check(&self, object: &Json, stored: Option<&Json>) -> SchemaVerdict;

    /// [`TargetSchema::check`] for many writes, in order. One at a time unless the validator
    /// can be shared between threads (trainer-audit's own can: see [`crate::par`]).
    fn check_all(&self, writes: &[Write<'_>]) -> Vec<SchemaVerdict> {
        writes.iter().map(|w| self.check(w.object, w.stored().as_deref())).collect()
    }

    /// What the objects are validated against, for the report.
    fn describe(&self) -> String {
        "the target CRDs".into()
    }

    /// The validator as one that can be shared between threads, when it can be (trainer-audit's
    /// own can); None runs every write on the calling thread.
    fn shared(&self) -> Option<&(dyn TargetSchema + Sync)> {
        None
    }

    /// A checker for one thread's writes, one at a time; trainer-audit's own keeps its memo
    /// across them (writes of the same shape validated once).
    fn checker(&self) -> Box<dyn FnMut(&Write<'_>) -> SchemaVerdict + '_> {
        Box::new(|w| self.check(w.object, w.stored().as_deref()))
    }
}

/// Any closure works as a validator (tests plug the real API server in this way).
impl<F: Fn(&Json, Option<&Json>) -> SchemaVerdict> TargetSchema for F {
    fn check(&self, object: &Json, stored: Option<&Json>) -> SchemaVerdict {
        self(object, stored)
    }
}

/// The target chart's CRDs, compiled for the cluster's version.
#[derive(Debug)]
pub struct TargetCrds {
    pub crds: CrdSet,
    /// `the 2.3.0 CRDs (Kubernetes 1.33)`.
    pub label: String,
}

impl TargetSchema for TargetCrds {
    fn check(&self, object: &Json, stored: Option<&Json>) -> SchemaVerdict {
        self.crds.check(object, stored)
    }

    fn check_all(&self, writes: &[Write<'_>]) -> Vec<SchemaVerdict> {
        self.crds.check_all(writes)
    }

    fn describe(&self) -> String {
        self.label.clone()
    }

    fn shared(&self) -> Option<&(dyn TargetSchema + Sync)> {
        Some(self)
    }

    fn checker(&self) -> Box<dyn FnMut(&Write<'_>) -> SchemaVerdict + '_> {
        self.crds.checker()
    }
}

impl TargetSchema for CrdSet {
    fn check(&self, object: &Json, stored: Option<&Json>) -> SchemaVerdict {
        verdict(self, object, stored, &mut Memo::new())
    }

    /// In shares, each with a memo: writes of the same shape (most conversions of a large
    /// cluster) are validated once per share.
    fn check_all(&self, writes: &[Write<'_>]) -> Vec<SchemaVerdict> {
        crate::par::map_chunks(writes, |share| {
            let mut memo = Memo::new();
            share.iter().map(|w| verdict(self, w.object, w.stored().as_deref(), &mut memo)).collect::<Vec<_>>()
        })
        .concat()
    }

    fn shared(&self) -> Option<&(dyn TargetSchema + Sync)> {
        Some(self)
    }

    fn checker(&self) -> Box<dyn FnMut(&Write<'_>) -> SchemaVerdict + '_> {
        let mut memo = Memo::new();
        Box::new(move |w| verdict(self, w.object, w.stored().as_deref(), &mut memo))
    }
}

/// One write's verdict, through `memo`.
fn verdict(crds: &CrdSet, object: &Json, stored: Option<&Json>, memo: &mut Memo) -> SchemaVerdict {
    let Some(v) = crds.validate_with(object, stored, memo) else {
        let kind = object.get("kind").and_then(Json::as_str).unwrap_or("?");
        return SchemaVerdict::NotValidated { reason: format!("the target chart ships no CRD for {kind}") };
    };
    let unevaluated: Vec<String> = v.unevaluated.iter().map(|u| format!("{}: {} ({})", u.path, u.rule, u.reason)).collect();
    if v.errors.is_empty() {
        SchemaVerdict::Accepted { pruned: v.pruned, unevaluated }
    } else {
        SchemaVerdict::Rejected { errors: v.errors.iter().map(ToString::to_string).collect(), pruned: v.pruned }
    }
}

/// `object` with the JSON Patch operations applied (`test` ops are checked and skipped; an op
/// that does not apply is skipped too: this models the stored object after `--before-crds`,
/// whose own `test` guards stop the real patch in that case).
pub fn patched(object: &Json, ops: &[PatchOp]) -> Json {
    let mut out = object.clone();
    patch(&mut out, ops);
    out
}

/// [`patched`] in place.
pub fn patch(out: &mut Json, ops: &[PatchOp]) {
    for op in ops {
        let Some((parent, key)) = op.path.rsplit_once('/') else { continue };
        let key = key.replace("~1", "/").replace("~0", "~");
        match op.op {
            "add" | "replace" => {
                if let (Some(Json::Object(m)), Some(v)) = (out.pointer_mut(parent), &op.value) {
                    m.insert(key, v.clone());
                }
            }
            "remove" => {
                if let Some(Json::Object(m)) = out.pointer_mut(parent) {
                    m.remove(&key);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patches_model_the_stored_object() {
        let o = json!({"spec": {"trainer": {"numProcPerNode": "cpu", "image": "x"}}});
        let ops = [
            PatchOp { op: "test", path: "/spec/trainer/numProcPerNode".into(), value: Some(json!("cpu")) },
            PatchOp { op: "replace", path: "/spec/trainer/numProcPerNode".into(), value: Some(json!(2)) },
        ];
        assert_eq!(patched(&o, &ops), json!({"spec": {"trainer": {"numProcPerNode": 2, "image": "x"}}}));
        let rm = [PatchOp { op: "remove", path: "/spec/trainer/numProcPerNode".into(), value: None }];
        assert_eq!(patched(&o, &rm), json!({"spec": {"trainer": {"image": "x"}}}));
        let nowhere = [PatchOp { op: "add", path: "/spec/missing/x".into(), value: Some(json!(1)) }];
        assert_eq!(patched(&o, &nowhere), o);
    }
}
