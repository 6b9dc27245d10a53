//! The TrainJob defaulting webhook (`defaulter.trainjob`, kubeflow/trainer v2.3.0
//! `pkg/webhooks/trainjob_webhook.go` L36-L45) is a mutating webhook, so the API server calls it
//! before it validates the object against the CRD schema; controller-runtime first decodes the
//! object into Trainer's Go types and refuses what does not decode (sigs.k8s.io/controller-runtime
//! v0.24.1 `pkg/webhook/admission/defaulter_custom.go` L128-L129), with Go's
//! `json: cannot unmarshal <JSON type> into Go struct field …`. The CRD schema is generated from
//! those Go types, so a value of the wrong JSON type where the schema names a type is exactly what
//! fails to decode: such a TrainJob is refused by the defaulter, not by the API server's schema.

use serde_json::Value;

use super::{Refusal, DEFAULTING_WEBHOOK};
use kube_validate::{BadValue, ErrorKind, FieldError};

/// Go's name for a JSON value's type in an `UnmarshalTypeError` (the schema's word for it here).
fn go_json_type(schema_type: &str) -> Option<&'static str> {
    Some(match schema_type {
        "string" => "string",
        "integer" | "number" => "number",
        "boolean" => "bool",
        "array" => "array",
        "object" => "object",
        _ => return None,
    })
}

/// The defaulter's refusal of a TrainJob, from the schema errors of the same object: the first
/// value of the wrong JSON type (Go's decoder reports the first). Null and string formats decode.
pub fn refusal(_job: &Value, schema_errors: &[FieldError]) -> Option<Refusal> {
    schema_errors.iter().find_map(|e| {
        let BadValue::Str(found) = &e.value else { return None };
        if e.kind != ErrorKind::TypeInvalid || !e.detail.ends_with(&format!(": \"{found}\"")) {
            return None;
        }
        let go = go_json_type(found)?;
        Some(Refusal {
            webhook: DEFAULTING_WEBHOOK,
            field: e.field.clone(),
            detail: format!("json: cannot unmarshal {go} into Go struct field"),
        })
    })
}
