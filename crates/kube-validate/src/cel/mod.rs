//! `x-kubernetes-validations`: each rule is parsed and statically checked once per schema node
//! (functions we implement, fields the cluster's CEL type system would resolve, libraries the
//! cluster's version offers, estimated cost), then evaluated with the `cel` crate on every object
//! the way apiextensions-apiserver's `schema/cel/validation.go` does: `self`/`oldSelf`, transition
//! rules only on update with a correlated old value, `optionalOldSelf`, `message`,
//! `messageExpression`, `fieldPath`, `reason`, and ratcheting of unchanged values. A rule we cannot
//! evaluate is reported as unevaluated with its text, never as passing.

mod compat;
mod convert;
pub mod cost;
mod lib;
mod lib_types;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::fielderr::{BadValue, ErrorKind, FieldError};
use super::openapi::Seg;
use super::structural::{Additional, RuleSpec, Schema};
use kube_version::KubeVersion;

pub use compat::CompatIssue;
/// Kubernetes quantities in nano-units (`resource.ParseQuantity`), for quota arithmetic too.
pub use lib_types::parse_quantity;

/// One rule, compiled for evaluation and checked against the cluster.
#[derive(Debug)]
pub struct CompiledRule {
    pub spec: RuleSpec,
    program: Option<cel::Program>,
    message_program: Option<cel::Program>,
    pub uses_old_self: bool,
    /// The rule is `self == oldSelf` (either way round, without `optionalOldSelf`): it holds
    /// whenever the value is unchanged, so an update that changes nothing it sees passes it.
    pub reflexive: bool,
    /// The fields of `self` the rule reads when it only reads `self.<field>…`; `None` = all.
    self_fields: Option<BTreeSet<String>>,
    /// Why this rule cannot be evaluated here (it is then reported, never passed).
    pub unevaluated: Option<String>,
    /// `fieldPath` normalised to a `field.Path` suffix.
    field_path: Option<String>,
    /// What the cluster's API server would say about this rule when the CRD is applied.
    pub issues: Vec<CompatIssue>,
    /// The static cost the API server estimates for the rule when the CRD is written.
    pub cost: cost::RuleCost,
}

impl CompiledRule {
    /// The fields of `self` the rule reads, when it reads only `self.<field>…` (`None`: all).
    pub fn self_fields(&self) -> Option<&BTreeSet<String>> {
        self.self_fields.as_ref()
    }
}

fn env() -> &'static Arc<cel::Env> {
    static ENV: OnceLock<Arc<cel::Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = cel::Env::stdlib();
        let _ = env.add_extension(cel::extensions::lists);
        Arc::new(env)
    })
}

/// The root context with the Kubernetes libraries, built once per validator.
pub fn root_context() -> cel::Context<'static, 'static> {
    let mut ctx = cel::Context::with_env(Arc::clone(env()));
    lib::register(&mut ctx);
    ctx
}

/// Compiles every rule in the tree (in place). `card` is how many times the node can occur in
/// one object when every list and map above it is bounded (`None` when one is not), as the
/// CRD validation's `CELSchemaContext.MaxCardinality` carries it down.
/// Whether a compiled rule runs (it compiled, and uses nothing trainer-audit lacks).
fn runnable(r: &CompiledRule) -> bool {
    r.unevaluated.is_none() && r.program.is_some()
}

pub fn compile_tree(s: &mut Schema, version: &KubeVersion, resource_root: bool, card: Option<u64>) {
    let compiled: Vec<Arc<CompiledRule>> = s.rules.iter().cloned().map(|r| Arc::new(compile(r, s, version, resource_root, card))).collect();
    s.compiled = compiled;
    s.compiled_fields = s.compiled.iter().filter(|r| runnable(r)).try_fold(BTreeSet::new(), |mut acc, r| {
        acc.extend(r.self_fields.as_ref()?.iter().cloned());
        Some(acc)
    });
    if !s.has_rules_below {
        return;
    }
    let child = card.zip(cost::max_elements(s)).map(|(c, m)| cost::times(c, m));
    if let Some(items) = s.items.as_deref_mut() {
        compile_tree(items, version, items.embedded_resource, child);
    }
    if let Some(Additional::Schema(a)) = &mut s.additional {
        let emb = a.embedded_resource;
        compile_tree(a, version, emb, child);
    }
    for p in s.properties.values_mut() {
        let emb = p.embedded_resource;
        compile_tree(p, version, emb, child);
    }
}

fn compile(spec: RuleSpec, node: &Schema, version: &KubeVersion, resource_root: bool, card: Option<u64>) -> CompiledRule {
    let mut out = CompiledRule {
        program: None,
        message_program: None,
        uses_old_self: false,
        reflexive: false,
        self_fields: None,
        unevaluated: None,
        field_path: None,
        issues: Vec::new(),
        cost: cost::RuleCost::default(),
        spec,
    };
    if let Some(fp) = &out.spec.field_path {
        match normalize_field_path(fp) {
            Some(p) => out.field_path = Some(p),
            None => out.issues.push(CompatIssue::invalid_field_path(fp)),
        }
    }
    let program = match env().compile(&out.spec.rule) {
        Ok(p) => p,
        Err(e) => {
            out.unevaluated = Some(format!("the cel crate cannot parse it: {}", e.to_string().lines().next().unwrap_or("")));
            return out;
        }
    };
    let facts = compat::analyse(program.expression(), node, resource_root, version);
    out.uses_old_self = facts.uses_old_self;
    let bare: String = out.spec.rule.chars().filter(|c| !c.is_whitespace()).collect();
    out.reflexive = facts.uses_old_self && !out.spec.optional_old_self && matches!(bare.as_str(), "self==oldSelf" | "oldSelf==self");
    out.self_fields = facts.self_fields;
    out.issues.extend(facts.issues);
    let message = out.spec.message_expression.as_deref().and_then(|m| env().compile(m).ok());
    out.cost = cost::estimate(
        program.expression(),
        message.as_ref().map(cel::Program::expression),
        node,
        resource_root,
        out.spec.optional_old_self,
        card,
        cost::Model::for_version(version),
    );
    if out.spec.optional_old_self && !out.uses_old_self {
        // apiextensions rejects optionalOldSelf on a rule that does not read oldSelf.
        out.issues.push(CompatIssue::optional_old_self_unused());
    }
    if let Some(f) = facts.unsupported.first() {
        out.unevaluated = Some(format!("uses {f}, which trainer-audit does not implement"));
        return out;
    }
    if let Some(me) = &out.spec.message_expression {
        if let Ok(p) = env().compile(me) {
            let mf = compat::analyse(p.expression(), node, resource_root, version);
            if mf.unsupported.is_empty() {
                out.message_program = Some(p);
            }
        }
    }
    out.program = Some(program);
    out
}

/// `ValidFieldPath` shapes: `.a.b`, `.a['b.c']`, `.a[0]`; rendered as `field.Path` renders them.
fn normalize_field_path(fp: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = fp;
    if !rest.starts_with(['.', '[']) {
        return None;
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push_str(&format!("[{}]", &r[..end]));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            r[..end].parse::<usize>().ok()?;
            out.push_str(&format!("[{}]", &r[..end]));
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// A rule that was not evaluated for one object.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unevaluated {
    pub path: String,
    pub rule: String,
    pub reason: String,
}

/// A CEL error and the schema node it belongs to (for ratcheting).
#[derive(Debug, Clone)]
pub struct RuleError {
    pub error: FieldError,
    pub node: Vec<Seg>,
    pub uses_old_self: bool,
}

/// Per-object CEL walk state.
pub struct Eval<'c> {
    ctx: &'c cel::Context<'static, 'static>,
    pub errors: Vec<RuleError>,
    pub unevaluated: Vec<Unevaluated>,
    path: Vec<Seg>,
    /// When set, transition rules can run (this is an update).
    update: bool,
    /// When set, values may not match their schema's type (ratcheting forgave a type error), so
    /// each node is checked for data cel-go would refuse to read.
    pub invalid_data: bool,
}

impl<'c> Eval<'c> {
    pub fn new(ctx: &'c cel::Context<'static, 'static>, update: bool) -> Self {
        Eval { ctx, errors: Vec::new(), unevaluated: Vec::new(), path: Vec::new(), update, invalid_data: false }
    }

    /// `Validator.validate` for one node and below.
    pub fn validate(&mut self, s: &Schema, v: &Value, old: Option<&Value>, resource_root: bool) {
        if !s.has_rules_below || v.is_null() {
            return;
        }
        if !s.compiled.is_empty() {
            self.expressions(s, v, old, resource_root);
        }
        match v {
            Value::Array(items) => {
                if let Some(is) = s.items.as_deref().filter(|i| i.has_rules_below) {
                    let olds = old.and_then(Value::as_array);
                    for (i, item) in items.iter().enumerate() {
                        let o = olds.and_then(|olds| super::ratchet::map_list_match(s, item, olds));
                        self.path.push(Seg::Index(i));
                        self.validate(is, item, o, is.embedded_resource);
                        self.path.pop();
                    }
                }
            }
            Value::Object(m) => {
                let oldm = old.and_then(Value::as_object);
                if let Some(Additional::Schema(a)) = &s.additional {
                    if a.has_rules_below {
                        for (k, child) in m {
                            self.path.push(Seg::Key(format!("[{k}]")));
                            self.validate(a, child, oldm.and_then(|o| o.get(k)), a.embedded_resource);
                            self.path.pop();
                        }
                    }
                }
                for (k, child) in m {
                    if let Some(p) = s.properties.get(k).filter(|p| p.has_rules_below) {
                        self.path.push(Seg::Key(k.clone()));
                        self.validate(p, child, oldm.and_then(|o| o.get(k)), p.embedded_resource);
                        self.path.pop();
                    }
                }
            }
            _ => {}
        }
    }

    /// The rules of the root node alone, on an object as stored (a create's view).
    pub fn root_rules(&mut self, s: &Schema, v: &Value) {
        if !s.compiled.is_empty() {
            self.expressions(s, v, None, true);
        }
    }

    fn expressions(&mut self, s: &Schema, v: &Value, old: Option<&Value>, resource_root: bool) {
        // The node's path and type name are made only for a rule that fails or cannot run.
        let here_text = std::cell::OnceCell::new();
        let here = || here_text.get_or_init(|| path_text(&self.path)).as_str();
        let type_value = || BadValue::Str(s.type_name().to_string());
        // `self` and `oldSelf` are converted once per node and shared by its rules (CEL values
        // are reference-counted), limited to the fields the node's rules read between them.
        let fields = &s.compiled_fields;
        let old_now = old.filter(|_| self.update);
        let self_val = OnceLock::new();
        let old_val = OnceLock::new();
        let invalid: Vec<(Option<String>, String)> = if self.invalid_data {
            let mut found = convert::invalid_data(v, s, resource_root);
            if let Some(o) = old_now {
                found.extend(convert::invalid_data(o, s, resource_root));
            }
            found
        } else {
            Vec::new()
        };
        for rule in &s.compiled {
            if let Some(reason) = &rule.unevaluated {
                self.unevaluated.push(Unevaluated { path: field_or_nil(here()), rule: rule.spec.rule.clone(), reason: reason.clone() });
                continue;
            }
            let Some(program) = &rule.program else { continue };
            if rule.uses_old_self && (old.is_none() || !self.update) && !rule.spec.optional_old_self {
                continue;
            }
            let reads = |k: &Option<String>| match (k, &rule.self_fields) {
                (None, _) | (_, None) => true,
                (Some(k), Some(f)) => f.contains(k),
            };
            if let Some((_, msg)) = invalid.iter().find(|(k, _)| reads(k)) {
                let text = format!("{msg} evaluating rule: {}", rule_error_string(&rule.spec));
                self.errors.push(RuleError {
                    error: FieldError::invalid(field_or_nil(here()), type_value(), text),
                    node: self.path.clone(),
                    uses_old_self: rule.uses_old_self,
                });
                continue;
            }
            let mut scope = self.ctx.new_inner_scope();
            scope.add_variable_from_value("self", self_val.get_or_init(|| convert::to_cel(v, s, fields.as_ref(), resource_root)).clone());
            if rule.uses_old_self {
                let old_val = old_now.map(|o| old_val.get_or_init(|| convert::to_cel(o, s, fields.as_ref(), resource_root)).clone());
                if rule.spec.optional_old_self {
                    let opt = match old_val {
                        Some(o) => cel::objects::OptionalValue::of(o),
                        None => cel::objects::OptionalValue::none(),
                    };
                    scope.add_variable_from_value("oldSelf", cel::Value::Opaque(Arc::new(opt)));
                } else if let Some(o) = old_val {
                    scope.add_variable_from_value("oldSelf", o);
                }
            }
            let result = program.execute(&scope);
            let detail = match result {
                Ok(cel::Value::Bool(true)) => continue,
                Ok(cel::Value::Bool(false)) => self.message(rule, &scope),
                Ok(other) => {
                    self.unevaluated.push(Unevaluated {
                        path: field_or_nil(here()),
                        rule: rule.spec.rule.clone(),
                        reason: format!("evaluated to {other:?}, not a bool"),
                    });
                    continue;
                }
                Err(e) if is_gap(&e) => {
                    self.unevaluated.push(Unevaluated {
                        path: field_or_nil(here()),
                        rule: rule.spec.rule.clone(),
                        reason: format!("the cel crate could not evaluate it: {e}"),
                    });
                    continue;
                }
                Err(e) => {
                    let text = format!("{} evaluating rule: {}", go_cel_error(&e), rule_error_string(&rule.spec));
                    self.errors.push(RuleError {
                        error: FieldError::invalid(field_or_nil(here()), type_value(), text),
                        node: self.path.clone(),
                        uses_old_self: rule.uses_old_self,
                    });
                    continue;
                }
            };
            let err_path = match &rule.field_path {
                Some(fp) if here().is_empty() => fp.clone(),
                Some(fp) if fp.starts_with('[') => format!("{}{fp}", here()),
                Some(fp) => format!("{}.{fp}", here()),
                None => field_or_nil(here()),
            };
            let value = if s.ty == "object" || s.ty == "array" { BadValue::Omit } else { BadValue::of_json(v) };
            let error = match rule.spec.reason.as_deref() {
                Some("FieldValueForbidden") => FieldError::new(ErrorKind::Forbidden, err_path, BadValue::Omit, detail),
                Some("FieldValueRequired") => FieldError::required(err_path, detail),
                Some("FieldValueDuplicate") => FieldError::new(ErrorKind::Duplicate, err_path, value, ""),
                _ => FieldError::invalid(err_path, value, detail),
            };
            self.errors.push(RuleError { error, node: self.path.clone(), uses_old_self: rule.uses_old_self });
        }
    }

    fn message(&self, rule: &CompiledRule, scope: &cel::Context<'_, '_>) -> String {
        if let Some(p) = &rule.message_program {
            if let Ok(cel::Value::String(s)) = p.execute(scope) {
                if !s.trim().is_empty() && !s.contains('\n') && s.len() <= 5 * 1024 {
                    return s.to_string();
                }
            }
        }
        match &rule.spec.message {
            Some(m) => m.trim().to_string(),
            None => format!("failed rule: {}", rule_error_string(&rule.spec)),
        }
    }
}

/// A path's text as field errors print it (`spec.list[0].name`).
fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn field_or_nil(p: &str) -> String {
    if p.is_empty() {
        "<nil>".into()
    } else {
        p.into()
    }
}

fn rule_error_string(r: &RuleSpec) -> String {
    match &r.message {
        Some(m) => m.trim().to_string(),
        None => r.rule.trim().to_string(),
    }
}

/// Errors that mean our evaluator lacks something (cel-go would have type-checked the rule, so
/// these cannot happen on the API server for a CRD it accepted).
fn is_gap(e: &cel::ExecutionError) -> bool {
    use cel::ExecutionError as E;
    matches!(
        e,
        E::NoSuchOverload(_)
            | E::UndeclaredReference(_)
            | E::NotSupportedAsMethod { .. }
            | E::UnsupportedTargetType { .. }
            | E::UnexpectedType { .. }
            | E::InvalidArgumentCount { .. }
            | E::MissingArgumentOrTarget
            | E::UnsupportedBinaryOperator(..)
            | E::ValuesNotComparable(..)
            | E::InternalError(_)
    )
}

/// cel-go's wording for the runtime errors both engines share.
fn go_cel_error(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        E::DivisionByZero(_) => "division by zero".into(),
        E::RemainderByZero(_) => "modulus by zero".into(),
        E::IndexOutOfBounds(v) => format!("index out of range: {v:?}"),
        E::Overflow(..) => "integer overflow".into(),
        E::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
