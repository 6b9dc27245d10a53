//! An estimate of each rule's CEL cost in the spirit of cel-go's static estimator as
//! apiextensions-apiserver applies it: worst-case sizes from `maxLength`/`maxItems`/
//! `maxProperties`, else from the 3 MiB request limit divided by an item's smallest encoding;
//! comprehensions cost their range size times their body; string functions cost a tenth of the
//! string length. It is an approximation (cel-go's per-function cost table is not reproduced), so
//! findings near a limit are stated as estimates. Limits: `PerCallLimit` 1,000,000 and
//! `RuntimeCELCostBudget` 10,000,000 (k8s.io/apiserver/pkg/apis/cel/config.go),
//! `StaticEstimatedCostLimit` 10,000,000 per rule and `StaticEstimatedCRDCostLimit` 100,000,000
//! per CRD (apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go), all v0.36.1.

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::structural::Schema;

pub const PER_CALL_LIMIT: u64 = 1_000_000;
pub const RUNTIME_BUDGET: u64 = 10_000_000;
pub const STATIC_RULE_LIMIT: u64 = 10_000_000;
pub const STATIC_CRD_LIMIT: u64 = 100_000_000;
const MAX_REQUEST: f64 = 3.0 * 1024.0 * 1024.0;

pub struct Estimate {
    pub rule: u64,
}

fn min_size(s: &Schema) -> f64 {
    match s.ty.as_str() {
        "boolean" => 4.0,
        "integer" | "number" => 1.0,
        _ => 2.0,
    }
}

/// Items an unbounded list can hold in one request.
pub fn unbounded_items(s: &Schema) -> f64 {
    let item = s.items.as_deref().map_or(1.0, min_size);
    ((MAX_REQUEST - 2.0) / (item + 1.0)).floor()
}

/// Entries an unbounded map can hold in one request (`"":x,` is at least 4 bytes).
pub fn unbounded_props() -> f64 {
    ((MAX_REQUEST - 2.0) / 5.0).floor()
}

#[derive(Clone, Copy)]
struct Sized_<'a> {
    schema: Option<&'a Schema>,
}

fn str_len(s: Option<&Schema>) -> f64 {
    s.and_then(|s| s.max_length).map_or(MAX_REQUEST, |m| m as f64)
}

fn list_len(s: Option<&Schema>) -> f64 {
    match s {
        Some(s) if s.ty == "array" => s.max_items.map_or_else(|| unbounded_items(s), |m| m as f64),
        Some(s) if s.ty == "object" && s.properties.is_empty() => s.max_properties.map_or_else(unbounded_props, |m| m as f64),
        _ => 1.0,
    }
}

/// Estimated cost of one evaluation of a rule at `node`.
pub fn estimate(e: &IdedExpr, node: &Schema) -> Estimate {
    let (c, _) = walk(e, node, &mut Vec::new());
    Estimate { rule: c.min(u64::MAX as f64) as u64 }
}

/// Total over a CRD: each rule's cost times the number of times its node can occur.
pub fn weighted(rule: u64, card: f64) -> f64 {
    rule as f64 * card
}

fn walk<'a>(e: &IdedExpr, node: &'a Schema, vars: &mut Vec<(String, Sized_<'a>)>) -> (f64, Sized_<'a>) {
    let none = Sized_ { schema: None };
    match &e.expr {
        Expr::Ident(n) if n == "self" || n == "oldSelf" => (1.0, Sized_ { schema: Some(node) }),
        Expr::Ident(n) => (1.0, vars.iter().rev().find(|(v, _)| v == n).map_or(none, |(_, s)| *s)),
        Expr::Literal(LiteralValue::String(_)) | Expr::Literal(_) => (0.0, none),
        Expr::Select(sel) => {
            let (c, t) = walk(&sel.operand, node, vars);
            let child = t.schema.and_then(|s| s.schema_for_property(&sel.field));
            (c + 1.0, Sized_ { schema: child })
        }
        Expr::Call(call) => {
            let mut cost = 1.0;
            let mut sizes = Vec::new();
            if let Some(t) = &call.target {
                let (c, s) = walk(t, node, vars);
                cost += c;
                sizes.push(s);
            }
            for a in &call.args {
                let (c, s) = walk(a, node, vars);
                cost += c;
                sizes.push(s);
            }
            let biggest = sizes.iter().map(|s| match s.schema {
                Some(x) if x.ty == "string" => str_len(Some(x)),
                Some(x) if x.ty == "array" || x.ty == "object" => list_len(Some(x)),
                _ => 1.0,
            });
            let n = biggest.fold(1.0, f64::max);
            cost += match call.func_name.as_str() {
                "matches" | "find" | "findAll" | "contains" | "startsWith" | "endsWith" | "lowerAscii" | "upperAscii" | "replace"
                | "split" | "trim" | "substring" | "indexOf" | "lastIndexOf" | "_==_" | "_!=_" | "_+_" | "@in" | "url" | "isURL"
                | "quantity" | "isQuantity" | "ip" | "isIP" | "cidr" | "isCIDR" => (0.1 * n).ceil(),
                "isSorted" | "sum" | "min" | "max" | "join" | "distinct" | "sort" | "flatten" | "reverse" => n,
                _ => 0.0,
            };
            let result = match call.func_name.as_str() {
                "_[_]" => Sized_ { schema: sizes.first().and_then(|s| s.schema).and_then(|s| s.items.as_deref()) },
                _ => none,
            };
            (cost, result)
        }
        Expr::Comprehension(c) => {
            let (rc, range) = walk(&c.iter_range, node, vars);
            let n = list_len(range.schema);
            let elem = Sized_ { schema: range.schema.and_then(|s| s.items.as_deref()) };
            vars.push((c.iter_var.clone(), elem));
            let (ic, _) = walk(&c.accu_init, node, vars);
            let (cc, _) = walk(&c.loop_cond, node, vars);
            let (sc, _) = walk(&c.loop_step, node, vars);
            let (res, _) = walk(&c.result, node, vars);
            vars.pop();
            (rc + ic + n * (cc + sc) + res, none)
        }
        Expr::List(l) => (l.elements.iter().map(|x| walk(x, node, vars).0).sum::<f64>() + 1.0, none),
        _ => (1.0, none),
    }
}
