//! The seam to the target CRDs' validator: `migrate` asks a [`TargetSchema`] whether each
//! converted object would be accepted by the API server holding the target CRDs. The validator
//! lives elsewhere (a CRD-schema + CEL evaluator); until one is plugged in, [`Unvalidated`] says so
//! in the report instead of pretending the objects passed.

use serde::Serialize;
use serde_json::Value as Json;

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

/// Validates an object as a create or update under the target CRDs would.
pub trait TargetSchema {
    fn check(&self, object: &Json) -> SchemaVerdict;
}

/// The stand-in used while no validator is wired: every verdict is "not validated".
#[derive(Debug, Clone, Default)]
pub struct Unvalidated {
    pub reason: String,
}

impl TargetSchema for Unvalidated {
    fn check(&self, _object: &Json) -> SchemaVerdict {
        SchemaVerdict::NotValidated { reason: self.reason.clone() }
    }
}

/// Any closure works as a validator (tests plug the real API server in this way).
impl<F: Fn(&Json) -> SchemaVerdict> TargetSchema for F {
    fn check(&self, object: &Json) -> SchemaVerdict {
        self(object)
    }
}
