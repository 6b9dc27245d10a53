//! Validates objects against a CRD version's own schema the way kube-apiserver does on a write —
//! OpenAPI value validation, ObjectMeta and embedded resources, list-type invariants, CEL
//! `x-kubernetes-validations`, defaulting and pruning, ratcheting on update — and reports what the
//! cluster's API server would say about the CRD's rules themselves (CEL it cannot compile, cost
//! estimates). The order of checks follows apiextensions-apiserver
//! `pkg/registry/customresource/strategy.go` (`Validate`, `ValidateUpdate`) at v0.36.1.

pub mod cel;
pub mod crd_write;
pub mod fielderr;
pub mod format;
pub mod listtype;
pub mod memo;
pub mod meta;
pub mod openapi;
pub mod prune;
pub mod ratchet;
pub mod stored;
pub mod structural;

use std::fmt;

use serde_json::Value;

pub use crd_write::{CrdIssue, CrdWrite, IssueKind};
pub use fielderr::{BadValue, ErrorKind, FieldError};

use kube_version::KubeVersion;
pub use structural::Schema;

/// Inputs the validator cannot use.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("the CRD has no {0}: pass a CustomResourceDefinition (apiextensions.k8s.io/v1) as JSON")]
    NotACrd(&'static str),
    #[error("CRD {crd} has no version {version:?} (it has: {have})")]
    NoSuchVersion { crd: String, version: String, have: String },
    #[error("CRD {crd} version {version} has no openAPIV3Schema")]
    NoSchema { crd: String, version: String },
    #[error("CRD {crd} version {version}: {source}")]
    Schema { crd: String, version: String, source: structural::SchemaError },
}

/// What one write of one object would do.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WriteOutcome {
    pub accepted: bool,
    pub errors: Vec<FieldError>,
    /// Errors an update keeps as warnings because the value did not change (ratcheting).
    pub ratcheted: Vec<FieldError>,
    /// Fields the write drops (unknown to the schema).
    pub pruned: Vec<String>,
    pub unevaluated: Vec<cel::Unevaluated>,
}

impl WriteOutcome {
    /// The `message` kube-apiserver puts in the 422 Status for these errors.
    pub fn status_message(&self, kind_group: &str, name: &str) -> String {
        let parts: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        if parts.len() == 1 {
            format!("{kind_group} {} is invalid: {}", fielderr::go_quote(name), parts[0])
        } else {
            format!("{kind_group} {} is invalid: [{}]", fielderr::go_quote(name), parts.join(", "))
        }
    }
}

/// For a stored object: how the next writes under the target schema would go.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outlook {
    /// Errors a write of the object as it is (create, restore from backup, `kubectl replace`
    /// without the old object) would raise.
    pub as_new: WriteOutcome,
    /// Errors that remain on an update changing nothing but metadata (labels, finalizers):
    /// these reject *every* update, e.g. the controller's own.
    pub on_any_update: Vec<FieldError>,
    /// Errors ratcheting forgives until the field itself is changed.
    pub when_field_changes: Vec<FieldError>,
}

/// One CRD version, compiled for one cluster version.
pub struct Validator {
    pub group: String,
    pub kind: String,
    pub version: String,
    pub namespaced: bool,
    status_subresource: bool,
    schema: Schema,
    kube: KubeVersion,
    /// Every transition rule of the schema is `self == oldSelf`: then a metadata-only update of
    /// an object that validates as new raises nothing either (see [`Validator::outlook`]).
    transitions_reflexive: bool,
    /// Validation reads `metadata` only as ObjectMeta validation and root rules on its name do
    /// (see [`memo`]): outlooks can be shared between objects that differ only there.
    memo_blind: bool,
    ctx: ::cel::Context<'static, 'static>,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Validator({}.{}/{} @ {})", self.kind, self.group, self.version, self.kube)
    }
}

impl Validator {
    /// `version` defaults to the storage version.
    pub fn from_crd(crd: &Value, version: Option<&str>, kube: KubeVersion) -> Result<Self, ValidateError> {
        let spec = crd.get("spec").ok_or(ValidateError::NotACrd("spec"))?;
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("<unnamed>").to_string();
        let group = spec.get("group").and_then(Value::as_str).ok_or(ValidateError::NotACrd("spec.group"))?;
        let kind = spec.pointer("/names/kind").and_then(Value::as_str).ok_or(ValidateError::NotACrd("spec.names.kind"))?;
        let versions = spec.get("versions").and_then(Value::as_array).ok_or(ValidateError::NotACrd("spec.versions"))?;
        let have: Vec<&str> = versions.iter().filter_map(|v| v.get("name").and_then(Value::as_str)).collect();
        let chosen = match version {
            Some(want) => versions.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(want)),
            None => versions.iter().find(|v| v.get("storage").and_then(Value::as_bool) == Some(true)),
        };
        let chosen = chosen.ok_or_else(|| ValidateError::NoSuchVersion {
            crd: name.clone(),
            version: version.unwrap_or("(storage)").to_string(),
            have: have.join(", "),
        })?;
        let vname = chosen.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let raw = chosen
            .pointer("/schema/openAPIV3Schema")
            .or_else(|| spec.pointer("/validation/openAPIV3Schema"))
            .ok_or_else(|| ValidateError::NoSchema { crd: name.clone(), version: vname.clone() })?;
        let mut schema =
            Schema::parse(raw, &kube).map_err(|source| ValidateError::Schema { crd: name.clone(), version: vname.clone(), source })?;
        cel::compile_tree(&mut schema, &kube, true, Some(1));
        let mut transitions_reflexive = true;
        walk_rules(&schema, "", &mut |_, r| transitions_reflexive &= !r.uses_old_self || r.reflexive);
        let status_subresource = chosen.pointer("/subresources/status").is_some() || spec.pointer("/subresources/status").is_some();
        let memo_blind = Validator::compute_memo_blind(&schema);
        Ok(Validator {
            memo_blind,
            group: group.to_string(),
            kind: kind.to_string(),
            version: vname,
            namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
            status_subresource,
            schema,
            kube,
            transitions_reflexive,
            ctx: cel::root_context(),
        })
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn kube_version(&self) -> &KubeVersion {
        &self.kube
    }

    fn ratcheting(&self) -> bool {
        self.kube.at_least(1, 30)
    }

    /// Validates a create (`old` = None) or an update of the main resource.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> WriteOutcome {
        self.validate_owned(obj.clone(), old.cloned())
    }

    /// [`Validator::validate`] on objects the caller no longer needs (defaulting and pruning
    /// work on them in place).
    pub fn validate_owned(&self, mut new: Value, mut old: Option<Value>) -> WriteOutcome {
        let mut verdict = WriteOutcome::default();
        if self.status_subresource {
            // PrepareForCreate / PrepareForUpdate: the main resource cannot write status.
            if let Value::Object(m) = &mut new {
                match old.as_ref().and_then(|o| o.get("status")) {
                    Some(st) => {
                        m.insert("status".into(), st.clone());
                    }
                    None => {
                        m.remove("status");
                    }
                }
            }
        }
        for v in std::iter::once(&mut new).chain(old.as_mut()) {
            prune::prune_nulls(v, Some(&self.schema));
            prune::apply_defaults(v, &self.schema);
        }
        verdict.pruned = prune::prune_resource(&mut new, &self.schema);
        if let Some(o) = old.as_mut() {
            prune::prune_resource(o, &self.schema);
        }
        let mut errs = self.type_meta(&new);
        if !errs.is_empty() {
            verdict.errors = errs;
            return verdict;
        }
        let ratchet = old.is_some() && self.ratcheting();
        if old.is_none() {
            meta::validate_root_meta(&new, self.namespaced, &mut errs);
        }
        let mut walker = openapi::Walker::new(&self.schema);
        walker.validate(&self.schema, &new);
        for e in walker.errors {
            match (&old, ratchet) {
                (Some(o), true) if ratchet::ratcheted(&self.schema, &new, o, &e.node) => verdict.ratcheted.push(e.error),
                _ => errs.push(e.error),
            }
        }
        meta::validate_embedded("", &new, &self.schema, &mut errs);
        let check_lists = match &old {
            Some(o) => {
                let mut old_errs = Vec::new();
                listtype::validate("", &self.schema, o, &mut old_errs);
                old_errs.is_empty()
            }
            None => true,
        };
        if check_lists {
            listtype::validate("", &self.schema, &new, &mut errs);
        }
        if self.schema.has_rules_below {
            if errs.iter().any(|e| e.kind.blocks_cel()) {
                errs.push(FieldError::invalid(
                    "<nil>",
                    BadValue::Json("null".into()),
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            } else {
                let mut eval = cel::Eval::new(&self.ctx, old.is_some());
                eval.invalid_data = !verdict.ratcheted.is_empty();
                eval.validate(&self.schema, &new, old.as_ref(), true);
                for e in eval.errors {
                    match (&old, ratchet) {
                        (Some(o), true) if !e.uses_old_self && ratchet::ratcheted(&self.schema, &new, o, &e.node) => {
                            verdict.ratcheted.push(e.error)
                        }
                        _ => errs.push(e.error),
                    }
                }
                verdict.unevaluated = eval.unevaluated;
            }
        }
        verdict.accepted = errs.is_empty() && verdict.unevaluated.is_empty();
        verdict.errors = errs;
        verdict
    }

    /// For an object already stored: a write of it as new, and a metadata-only update of it.
    ///
    /// When the write as new raises nothing (no error, no unevaluated rule) and every transition
    /// rule is `self == oldSelf`, the update cannot raise anything either, and is not run: it
    /// validates the same object (plus an annotation, which neither the schema nor CEL sees)
    /// with fewer checks — no ObjectMeta validation, errors ratcheted, list types only when the
    /// old object had them right — and the only rules it adds are the transition rules, which an
    /// unchanged value passes. Half of `check`'s time over a healthy cluster was this probe.
    pub fn outlook(&self, stored: &Value) -> Outlook {
        self.outlook_of(stored, false)
    }

    /// [`Validator::outlook`] of the object without its `status`: writes of the main resource
    /// keep the stored status as it is, and cluster reads keep only a summary of it. Each copy
    /// is made without it, rather than copied whole first.
    pub fn outlook_without_status(&self, stored: &Value) -> Outlook {
        self.outlook_of(stored, true)
    }

    pub(crate) fn outlook_of(&self, stored: &Value, no_status: bool) -> Outlook {
        let copy = |v: &Value| if no_status { without_status(v) } else { v.clone() };
        let as_new = self.validate_owned(copy(stored), None);
        if self.transitions_reflexive && as_new.errors.is_empty() && as_new.unevaluated.is_empty() {
            return Outlook { as_new, on_any_update: Vec::new(), when_field_changes: Vec::new() };
        }
        let mut touched = copy(stored);
        if let Some(Value::Object(meta)) = touched.get_mut("metadata") {
            let ann = meta.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(a) = ann {
                a.insert(memo::PROBE_ANNOTATION.into(), Value::String("update".into()));
            }
        }
        let update = self.validate_owned(touched, Some(copy(stored)));
        Outlook { as_new, on_any_update: update.errors, when_field_changes: update.ratcheted }
    }

    fn type_meta(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if kind != self.kind {
            errs.push(FieldError::invalid("kind", BadValue::Str(kind.into()), format!("must be {}", self.kind)));
        }
        let want = format!("{}/{}", self.group, self.version);
        if api != want {
            errs.push(FieldError::invalid("apiVersion", BadValue::Str(api.into()), format!("must be {want}")));
        }
        errs
    }
}

/// A copy of an object without its `status`, made without copying the status first (stored
/// objects are judged and rewritten without it; 50,000 of them are copied this way).
pub fn without_status(obj: &Value) -> Value {
    match obj {
        Value::Object(m) => Value::Object(m.iter().filter(|(k, _)| *k != "status").map(|(k, v)| (k.clone(), v.clone())).collect()),
        other => other.clone(),
    }
}

/// Every compiled rule of the schema with its node's path (`spec.template[*]`, `<root>`).
fn walk_rules(s: &Schema, path: &str, f: &mut dyn FnMut(&str, &cel::CompiledRule)) {
    if !s.has_rules_below {
        return;
    }
    for r in &s.compiled {
        f(if path.is_empty() { "<root>" } else { path }, r);
    }
    for (k, p) in &s.properties {
        walk_rules(p, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, f);
    }
    if let Some(i) = &s.items {
        walk_rules(i, &format!("{path}[*]"), f);
    }
    if let Some(structural::Additional::Schema(a)) = &s.additional {
        walk_rules(a, &format!("{path}[*]"), f);
    }
}

#[cfg(test)]
mod tests;
