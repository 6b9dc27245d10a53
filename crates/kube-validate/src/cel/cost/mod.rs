//! The static CEL cost of a CRD's rules as the API server computes it when the CRD is written
//! (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`): each rule's
//! worst-case cost by cel-go's estimator with Kubernetes' estimators ([`coster`]), over the
//! rule node's CEL declaration ([`decl`]) and types ([`check`]), times how often the node can
//! occur (`MaxCardinality`), against `StaticEstimatedCostLimit` per rule and
//! `StaticEstimatedCRDCostLimit` for the CRD; the runtime limits are those of
//! k8s.io/apiserver `pkg/apis/cel/config.go`. The limits are the same in every Kubernetes
//! version from 1.25 to 1.38; what moves with the version is the estimator ([`Model`]).
//!
//! A rule the type table cannot follow (a function it does not know) gets an estimate marked
//! inexact, which the findings say.

pub mod check;
pub mod coster;
pub mod decl;

use std::rc::Rc;

use cel::common::ast::IdedExpr;

use crate::structural::Schema;
use kube_version::KubeVersion;

/// `celconfig.PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// `celconfig.RuntimeCELCostBudget`.
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// `validation.StaticEstimatedCostLimit`: one rule, its cardinality included.
pub const STATIC_RULE_LIMIT: u64 = 10_000_000;
/// `validation.StaticEstimatedCRDCostLimit`: all rules (and message expressions) of a CRD version.
pub const STATIC_CRD_LIMIT: u64 = 100_000_000;

/// What changes in the estimate from one Kubernetes version to the next (the server binary's
/// version: its cel-go and its libraries).
#[derive(Debug, Clone, Copy)]
pub struct Model {
    pub decl: decl::DeclOptions,
    /// cel-go v0.27+ (Kubernetes 1.37+) costs the global `matches(s, re)` as the member form;
    /// before, it cost 1 plus its arguments.
    pub global_matches_cost: bool,
    /// ext.Lists v3 and its estimators are in the environment (Kubernetes 1.34+).
    pub lists_v3: bool,
}

impl Model {
    pub fn for_version(v: &KubeVersion) -> Model {
        Model { decl: decl::DeclOptions::for_version(v), global_matches_cost: v.at_least(1, 37), lists_v3: v.at_least(1, 34) }
    }
}

/// One rule's estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct RuleCost {
    /// cel-go's `MaxCost` of one evaluation.
    pub max_cost: u64,
    /// How many times the node can occur in one object (`MaxCardinality`).
    pub cardinality: u64,
    /// `max_cost × cardinality`: what counts against the per-rule limit and the CRD total.
    pub cost: u64,
    /// The message expression's cost, which counts toward the CRD total (not multiplied by the
    /// cardinality: the validation observes `MessageExpressionMaxCost` as it is).
    pub message_cost: u64,
    /// Every call was in the type table: the figure is cel-go's, not a bound of it.
    pub exact: bool,
}

/// `multiplyWithOverflowGuard`.
pub fn times(cost: u64, cardinality: u64) -> u64 {
    cost.saturating_mul(cardinality)
}

/// The cost of `rule` (and its `message_expression`) at `node`. `bounded` is the node's
/// cardinality when every list and map above it has `maxItems`/`maxProperties` (the product of
/// them); otherwise the request size over the node's smallest JSON decides it.
pub fn estimate(
    rule: &IdedExpr,
    message: Option<&IdedExpr>,
    node: &Schema,
    resource_root: bool,
    optional_old_self: bool,
    bounded: Option<u64>,
    model: Model,
) -> RuleCost {
    let Some(root) = decl::decl_of(node, resource_root, model.decl) else {
        return RuleCost { exact: false, ..RuleCost::default() };
    };
    let cardinality = bounded.unwrap_or_else(|| (decl::MAX_REQUEST_SIZE_BYTES / (root.min_serialized_size + 1)) as u64);
    let (max_cost, mut exact) = one(rule, &root, optional_old_self, model);
    let message_cost = match message {
        Some(m) => {
            let (c, e) = one(m, &root, optional_old_self, model);
            exact &= e;
            c
        }
        None => 0,
    };
    RuleCost { max_cost, cardinality, cost: times(max_cost, cardinality), message_cost, exact }
}

fn one(e: &IdedExpr, root: &Rc<decl::Decl>, optional_old_self: bool, model: Model) -> (u64, bool) {
    let checked = check::check(e, &check::Ty::of_decl(root), optional_old_self);
    let range = coster::cost(e, &checked, root, model);
    (range.max, checked.unknown.is_empty())
}

/// How many elements a list or map node lets each of its children occur
/// (`extractMaxElements`): `None` when unbounded.
pub fn max_elements(s: &Schema) -> Option<u64> {
    match s.ty.as_str() {
        "object" if s.additional.is_some() => s.max_properties.map(|m| m.max(0) as u64),
        "array" => s.max_items.map(|m| m.max(0) as u64),
        _ => Some(1),
    }
}
