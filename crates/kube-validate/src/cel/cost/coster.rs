//! cel-go's static cost estimator (`checker/cost.go`, `coster`), with the estimators Kubernetes
//! adds (`k8s.io/apiserver/pkg/cel/library/cost.go` `CostEstimator.EstimateCallCost`, and the
//! CRD size estimator of apiextensions-apiserver `schema/cel/compilation.go`) and the
//! per-overload ones of the cel-go extensions Kubernetes enables (sets, lists v3). Ported
//! function for function so the numbers are cel-go's: worst-case sizes travel as field paths
//! (`self`, `spec`, `@items`…) looked up in the rule node's declaration, costs as min/max ranges
//! with saturating arithmetic, and a call's cost is the widest over its candidate overloads.

use std::collections::HashMap;
use std::rc::Rc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::check::{Checked, Kind, Ty};
use super::decl::Decl;
use super::Model;

const SELECT_AND_IDENT_COST: u64 = 1;
const CONST_COST: u64 = 0;
const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: u64 = 30;
const STRUCT_CREATE_BASE_COST: u64 = 40;
const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
/// `cel.MaxNameFormatRegexSize`, `cel.MaxFormatSize`.
const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;
const MAX_FORMAT_SIZE: u64 = 64;

/// `SizeEstimate` and `CostEstimate`: a range with saturating arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

impl Range {
    pub const fn fixed(v: u64) -> Range {
        Range { min: v, max: v }
    }
    const UNKNOWN: Range = Range { min: 0, max: u64::MAX };

    fn add(self, o: Range) -> Range {
        Range { min: self.min.saturating_add(o.min), max: self.max.saturating_add(o.max) }
    }
    fn multiply(self, o: Range) -> Range {
        Range { min: mul(self.min, o.min), max: mul(self.max, o.max) }
    }
    fn factor(self, f: f64) -> Range {
        Range { min: by_factor(self.min, f), max: by_factor(self.max, f) }
    }
    fn union(self, o: Range) -> Range {
        Range { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
}

fn mul(x: u64, y: u64) -> u64 {
    if y != 0 && x > u64::MAX / y {
        u64::MAX
    } else {
        x * y
    }
}

/// `multiplyByCostFactor`: rounded up, saturating.
fn by_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

/// `entrySizeEstimate`.
#[derive(Debug, Clone, Copy)]
struct EntrySize {
    container: Kind,
    key: Range,
    val: Range,
}

fn entry_union(a: Option<EntrySize>, b: Option<EntrySize>) -> Option<EntrySize> {
    let (a, b) = (a?, b?);
    Some(EntrySize { container: a.container, key: a.key.union(b.key), val: a.val.union(b.val) })
}

#[derive(Clone)]
struct LocalVar {
    path: Vec<String>,
    size: Option<Range>,
    entry: Option<EntrySize>,
}

/// An `AstNode`: what an estimator sees of an argument.
#[derive(Clone)]
struct Node<'e> {
    path: Vec<String>,
    ty: Ty,
    expr: Option<&'e IdedExpr>,
    computed: Option<Range>,
}

pub struct Coster<'a> {
    checked: &'a Checked,
    root: &'a Rc<Decl>,
    model: Model,
    paths: HashMap<u64, Vec<String>>,
    locals: HashMap<String, Vec<LocalVar>>,
    sizes: HashMap<u64, Range>,
    entries: HashMap<u64, EntrySize>,
    /// `PresenceTestHasCost(false)`: Kubernetes charges nothing for `has()`.
    presence_test_cost: Range,
}

/// The estimated cost of a checked rule (`checker.Cost`).
pub fn cost(e: &IdedExpr, checked: &Checked, root: &Rc<Decl>, model: Model) -> Range {
    let mut c = Coster {
        checked,
        root,
        model,
        paths: HashMap::new(),
        locals: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        presence_test_cost: Range::fixed(0),
    };
    c.cost(e)
}

fn literal_size(e: &IdedExpr) -> Option<Range> {
    let v = match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => s.chars().count() as u64,
        Expr::Literal(LiteralValue::Bytes(b)) => b.len() as u64,
        Expr::Literal(_) => 1,
        Expr::List(l) => l.elements.len() as u64,
        Expr::Map(m) => m.entries.len() as u64,
        _ => return None,
    };
    Some(Range::fixed(v))
}

fn is_accumulator(name: &str) -> bool {
    name == "@result" || name == "__result__"
}

impl<'a> Coster<'a> {
    fn ty(&self, e: &IdedExpr) -> Ty {
        self.checked.ty(e.id).clone()
    }

    fn cost(&mut self, e: &IdedExpr) -> Range {
        match &e.expr {
            Expr::Literal(_) => Range::fixed(CONST_COST),
            Expr::Ident(name) => {
                let path = match self.locals.get(name).and_then(|v| v.last()) {
                    Some(v) => v.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                Range::fixed(SELECT_AND_IDENT_COST)
            }
            Expr::Select(sel) => {
                if sel.test {
                    return self.presence_test_cost.add(self.cost(&sel.operand));
                }
                let mut sum = self.cost(&sel.operand);
                if matches!(self.ty(&sel.operand).kind(), Kind::Map | Kind::Struct) {
                    sum = sum.add(Range::fixed(SELECT_AND_IDENT_COST));
                }
                let mut path = self.path(&sel.operand);
                path.push(sel.field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Expr::Call(_) => self.cost_call(e),
            Expr::List(l) => {
                let mut sum = Range::fixed(0);
                let mut item = Range { min: if l.elements.is_empty() { 0 } else { u64::MAX }, max: 0 };
                for x in &l.elements {
                    sum = sum.add(self.cost(x));
                    item = item.union(self.size_or_unknown_expr(x));
                }
                self.entries.insert(e.id, EntrySize { container: Kind::List, key: Range::fixed(1), val: item });
                sum.add(Range::fixed(LIST_CREATE_BASE_COST))
            }
            Expr::Map(m) => {
                let mut sum = Range::fixed(0);
                let empty = m.entries.is_empty();
                let mut key = Range { min: if empty { 0 } else { u64::MAX }, max: 0 };
                let mut val = key;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        sum = sum.add(self.cost(&me.key)).add(self.cost(&me.value));
                        key = key.union(self.size_or_unknown_expr(&me.key));
                        val = val.union(self.size_or_unknown_expr(&me.value));
                    }
                }
                self.entries.insert(e.id, EntrySize { container: Kind::Map, key, val });
                sum.add(Range::fixed(MAP_CREATE_BASE_COST))
            }
            Expr::Struct(s) => {
                let mut sum = Range::fixed(0);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum.add(Range::fixed(STRUCT_CREATE_BASE_COST))
            }
            Expr::Comprehension(c) => self.cost_comprehension(e, c),
            Expr::Unspecified => Range::fixed(0),
        }
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(name) = &e.expr {
            if let Some(v) = self.locals.get(name).and_then(|v| v.last()) {
                return v.path.clone();
            }
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    fn node<'e>(&mut self, e: &'e IdedExpr) -> Node<'e> {
        let mut path = self.path(e);
        if path.first().is_some_and(|p| is_accumulator(p)) {
            path.clear();
        }
        let computed = self.compute_size(e);
        Node { path, ty: self.ty(e), expr: Some(e), computed }
    }

    fn push_local(&mut self, name: &str, path: Vec<String>, size: Option<Range>, entry: Option<EntrySize>) {
        self.locals.entry(name.to_string()).or_default().push(LocalVar { path, size, entry });
    }

    fn pop_local(&mut self, name: &str) {
        if let Some(v) = self.locals.get_mut(name) {
            v.pop();
        }
    }

    fn container_of(&self, range: &IdedExpr, entry: Option<EntrySize>) -> Kind {
        match entry.map(|e| e.container) {
            Some(k) if k != Kind::Unknown => k,
            _ => self.ty(range).kind(),
        }
    }

    fn cost_comprehension(&mut self, e: &IdedExpr, c: &cel::common::ast::ComprehensionExpr) -> Range {
        let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
        // pushLocalVar(accuVar, accuInit)
        let accu_path = self.path(&c.accu_init);
        let accu_size = self.compute_size(&c.accu_init);
        let accu_entry = self.entry_size(&c.accu_init);
        self.push_local(&c.accu_var, accu_path, accu_size, accu_entry);
        let entry = self.entry_size(&c.iter_range);
        let container = self.container_of(&c.iter_range, entry);
        let range_path = self.path(&c.iter_range);
        let with = |sub: &str| {
            let mut p = range_path.clone();
            p.push(sub.to_string());
            p
        };
        match &c.iter_var2 {
            Some(v2) => {
                let (key_sub, val_sub) = if container == Kind::List { ("@indices", "@items") } else { ("@keys", "@values") };
                self.push_local(&c.iter_var, with(key_sub), entry.map(|e| e.key), None);
                self.push_local(v2, with(val_sub), entry.map(|e| e.val), None);
            }
            None => {
                let (size, sub) = if container == Kind::List { (entry.map(|e| e.val), "@items") } else { (entry.map(|e| e.key), "@keys") };
                self.push_local(&c.iter_var, with(sub), size, None);
            }
        }
        let loop_cost = self.cost(&c.loop_cond);
        let step_cost = self.cost(&c.loop_step);
        self.pop_local(&c.iter_var);
        if let Some(v2) = &c.iter_var2 {
            self.pop_local(v2);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop_local(&c.accu_var);
        let range_count = self.size_or_unknown_expr(&c.iter_range);
        sum = sum.add(range_count.multiply(step_cost.add(loop_cost)));
        match &c.accu_init.expr {
            Expr::Literal(_) => {
                if let Some(s) = self.compute_size(&c.accu_init) {
                    self.sizes.insert(e.id, s);
                }
            }
            Expr::List(_) | Expr::Map(_) => {
                self.sizes.insert(e.id, range_count);
                if let Some(step_entry) = self.entry_size(&c.loop_step) {
                    self.entries.insert(e.id, step_entry);
                }
            }
            _ => {}
        }
        sum
    }

    fn cost_call(&mut self, e: &IdedExpr) -> Range {
        let Expr::Call(call) = &e.expr else { return Range::fixed(0) };
        let qualified = self.checked.qualified.get(&e.id).cloned();
        let function = qualified.clone().unwrap_or_else(|| call.func_name.clone());
        if function == "dyn" && call.target.is_none() && call.args.len() == 1 {
            let arg = &call.args[0];
            let c = self.cost(arg);
            if let Some(s) = self.compute_size(arg) {
                self.sizes.insert(e.id, s);
            }
            if let Some(en) = self.entry_size(arg) {
                self.entries.insert(e.id, en);
            }
            return Range::fixed(1).add(c);
        }
        let mut arg_costs = Vec::with_capacity(call.args.len());
        let mut arg_nodes = Vec::with_capacity(call.args.len());
        for a in &call.args {
            arg_costs.push(self.cost(a));
            arg_nodes.push(self.node(a));
        }
        let overloads = self.checked.overloads.get(&e.id).cloned().unwrap_or_default();
        if overloads.is_empty() {
            return Range::fixed(0);
        }
        let mut sum = Range::fixed(0);
        let mut target = None;
        if let (Some(t), None) = (call.target.as_deref(), &qualified) {
            sum = sum.add(self.cost(t));
            target = Some(self.node(t));
        }
        let mut fn_cost = Range { min: u64::MAX, max: 0 };
        let mut result_size: Option<Range> = None;
        for overload in &overloads {
            let (c, size) = self.function_cost(e, &function, overload, target.as_ref(), &arg_nodes, &arg_costs);
            fn_cost = fn_cost.union(c);
            if let Some(s) = size {
                result_size = Some(result_size.map_or(s, |r| r.union(s)));
            }
            match *overload {
                "index_list" if !call.args.is_empty() => {
                    result_size = self.entry_size(&call.args[0]).map(|en| en.val);
                    let mut p = self.path(&call.args[0]);
                    p.push("@items".into());
                    self.paths.insert(e.id, p);
                }
                "index_map" if !call.args.is_empty() => {
                    result_size = self.entry_size(&call.args[0]).map(|en| en.val);
                    let mut p = self.path(&call.args[0]);
                    p.push("@values".into());
                    self.paths.insert(e.id, p);
                }
                _ => {}
            }
            if result_size.is_none() {
                result_size = self.compute_size(e);
            }
        }
        if let Some(s) = result_size {
            self.sizes.insert(e.id, s);
        }
        sum.add(fn_cost)
    }

    /// `coster.functionCost`: overload estimators first, then Kubernetes' library estimator,
    /// then cel-go's own table.
    fn function_cost(
        &mut self,
        e: &IdedExpr,
        function: &str,
        overload: &str,
        target: Option<&Node>,
        args: &[Node],
        arg_costs: &[Range],
    ) -> (Range, Option<Range>) {
        let arg_sum = arg_costs.iter().fold(Range::fixed(0), |s, c| s.add(*c));
        if let Some((c, size)) = self.overload_estimate(overload, target, args) {
            return (c.add(arg_sum), size);
        }
        if let Some((c, size)) = self.library_estimate(function, overload, target, args) {
            return (c.add(arg_sum), size);
        }
        let string_factor = STRING_TRAVERSAL_COST_FACTOR;
        match overload {
            "string_format" => {
                if let Some(t) = target {
                    return (self.size_or_unknown(t).factor(string_factor).add(arg_sum), None);
                }
            }
            "string_to_bytes" if args.len() == 1 => {
                let sz = self.size_or_unknown(&args[0]);
                return (sz.factor(string_factor).add(arg_sum), Some(Range { min: sz.min, max: sz.max.wrapping_mul(4) }));
            }
            "bytes_to_string" if args.len() == 1 => {
                let sz = self.size_or_unknown(&args[0]);
                return (sz.factor(string_factor).add(arg_sum), Some(Range { min: sz.min / 4, max: sz.max }));
            }
            "strings_quote" if args.len() == 1 => {
                let sz = self.size_or_unknown(&args[0]);
                return (
                    sz.factor(string_factor).add(arg_sum),
                    Some(Range { min: sz.min.wrapping_add(2), max: sz.max.wrapping_mul(2).wrapping_add(2) }),
                );
            }
            "starts_with_string" | "ends_with_string" if args.len() == 1 => {
                return (self.size_or_unknown(&args[0]).factor(string_factor).add(arg_sum), None);
            }
            "in_list" if args.len() == 2 => {
                return (self.size_or_unknown(&args[1]).factor(1.0).add(arg_sum), None);
            }
            "matches" | "matches_string" => {
                let pair = match (overload, target) {
                    ("matches_string", Some(t)) if args.len() == 1 => Some((t.clone(), args[0].clone())),
                    ("matches", None) if args.len() == 2 && self.model.global_matches_cost => Some((args[0].clone(), args[1].clone())),
                    _ => None,
                };
                if let Some((s, r)) = pair {
                    let str_cost = self.size_or_unknown(&s).add(Range::fixed(1)).factor(string_factor);
                    let regex_cost = self.size_or_unknown(&r).factor(REGEX_STRING_LENGTH_COST_FACTOR);
                    return (str_cost.multiply(regex_cost).add(arg_sum), None);
                }
            }
            "contains_string" => {
                if let (Some(t), 1) = (target, args.len()) {
                    let s = self.size_or_unknown(t).factor(string_factor);
                    let sub = self.size_or_unknown(&args[0]).factor(string_factor);
                    return (s.multiply(sub).add(arg_sum), None);
                }
            }
            "logical_or" | "logical_and" => {
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                return (Range { min: lhs.min, max: lhs.add(rhs).max }, None);
            }
            "conditional" => {
                let size = self.size_or_unknown(&args[1]).union(self.size_or_unknown(&args[2]));
                let a1 = args[1].expr.and_then(|x| self.entry_size(x));
                let a2 = args[2].expr.and_then(|x| self.entry_size(x));
                if let Some(en) = entry_union(a1, a2) {
                    self.entries.insert(e.id, en);
                }
                let c = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (c, Some(size));
            }
            "add_string" | "add_bytes" | "add_list" if args.len() == 2 => {
                let lhs = self.size_or_unknown(&args[0]);
                let rhs = self.size_or_unknown(&args[1]);
                let result = lhs.add(rhs);
                let l = args[0].expr.and_then(|x| self.entry_size(x));
                let r = args[1].expr.and_then(|x| self.entry_size(x));
                if let Some(en) = entry_union(l, r) {
                    self.entries.insert(e.id, en);
                }
                return if overload == "add_list" {
                    (Range::fixed(1).add(arg_sum), Some(result))
                } else {
                    (result.factor(string_factor).add(arg_sum), Some(result))
                };
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals" => {
                let lhs = self.size_or_unknown(&args[0]);
                let rhs = self.size_or_unknown(&args[1]);
                let smallest = lhs.max.min(rhs.max);
                let min = u64::from(smallest > 0);
                return (Range { min, max: smallest }.factor(string_factor).add(arg_sum), None);
            }
            _ => {}
        }
        (Range::fixed(1).add(arg_sum), None)
    }

    /// `checker.OverloadCostEstimate`s of the extensions Kubernetes enables: ext.Sets (always)
    /// and ext.Lists v3 (`ext/lists.go`, from Kubernetes' lists library version 1.34).
    fn overload_estimate(&mut self, overload: &str, target: Option<&Node>, args: &[Node]) -> Option<(Range, Option<Range>)> {
        const CALL: Range = Range::fixed(1);
        match overload {
            "list_sets_contains_list" | "list_sets_intersects_list" | "list_sets_equivalent_list" => {
                if args.len() != 2 {
                    return None;
                }
                let f = if overload == "list_sets_equivalent_list" { 2.0 } else { 1.0 };
                let a = self.size_estimate(&args[0]);
                let b = self.size_estimate(&args[1]);
                Some((a.multiply(b).factor(f).add(CALL), None))
            }
            _ if !self.model.lists_v3 => None,
            "list_slice" => {
                let (t, [a, b]) = (target?, args) else { return None };
                let sz = self.size_estimate(t);
                let (start, end) = (literal_uint(a, 0), literal_uint(b, sz.max));
                Some(list_call(1.0, Range::fixed(end.wrapping_sub(start))))
            }
            "lists_range" => {
                if target.is_some() || args.len() != 1 {
                    return None;
                }
                Some(list_call(1.0, Range::fixed(literal_uint(&args[0], u64::MAX))))
            }
            "list_reverse" => {
                let t = target.filter(|_| args.is_empty())?;
                Some(list_call(1.0, self.size_estimate(t)))
            }
            "list_flatten" | "list_flatten_int" => {
                let t = target.filter(|_| args.len() <= 1)?;
                let depth = args.first().map_or(1, |a| literal_uint(a, u64::MAX));
                Some(list_call(depth as f64, self.size_estimate(t)))
            }
            "list_distinct" => {
                let t = target.filter(|_| args.is_empty())?;
                let sz = self.size_estimate(t);
                Some(list_call(2.0, sz.multiply(sz)))
            }
            "list_sort" | "list_sort_by" => {
                let node = if overload == "list_sort" {
                    target.filter(|_| args.is_empty())?
                } else {
                    args.first().filter(|_| target.is_some() && args.len() == 1)?
                };
                let elem = node.ty.list_elem().map(Ty::kind);
                let sz = self.size_estimate(node);
                let factor = if matches!(elem, Some(Kind::String | Kind::Bytes)) { 2.0 + STRING_TRAVERSAL_COST_FACTOR } else { 2.0 };
                Some(list_call(factor, sz.multiply(sz)))
            }
            _ => None,
        }
    }

    /// Kubernetes' `library.CostEstimator.EstimateCallCost`.
    fn library_estimate(&mut self, function: &str, overload: &str, target: Option<&Node>, args: &[Node]) -> Option<(Range, Option<Range>)> {
        let f = STRING_TRAVERSAL_COST_FACTOR;
        let one = Range::fixed(1);
        match function {
            "check" => Some((Range::fixed(350_000), None)),
            "serviceAccount" | "path" | "group" | "resource" | "subresource" | "namespace" | "name" | "allowed" | "reason" | "error"
            | "errored" => Some((one, None)),
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" | "includes" => {
                let t = target?;
                let mut el = one;
                match self.list_element(t) {
                    Some(elem) => {
                        if matches!(elem.ty.kind(), Kind::String | Kind::Bytes) {
                            el = el.add(self.size_estimate(&elem).factor(f));
                        }
                        Some((self.size_estimate(t).multiply(el), None))
                    }
                    None if function == "includes" => Some((self.size_estimate(t).multiply(el), None)),
                    None => Some((self.size_estimate(t).factor(f), None)),
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = self.size_estimate(&args[0]);
                Some((sz.factor(f), Some(sz)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = self.size_estimate(target?);
                Some((sz.factor(f), Some(sz)))
            }
            "replace" if target.is_some() && args.len() >= 2 => {
                let sz = self.size_estimate(target?);
                let to_replace = self.size_estimate(&args[0]);
                let with = self.size_estimate(&args[1]);
                let (mut count, mut retained) = (Range::fixed(0), Range::fixed(0));
                if to_replace.min == 0 {
                    count.max = if sz.max < u64::MAX { sz.max + 1 } else { sz.max };
                    retained.max = sz.max;
                } else if with.max <= to_replace.min {
                    count.max = 0;
                    retained.max = sz.max;
                } else {
                    count.max = (sz.max as f64 / to_replace.min as f64).ceil() as u64;
                }
                if to_replace.max == 0 {
                    count.min = if sz.min < u64::MAX { sz.min + 1 } else { sz.min };
                    retained.min = sz.min;
                } else if to_replace.max <= with.min {
                    count.min = 0;
                    retained.min = sz.min;
                } else {
                    count.min = (sz.min as f64 / to_replace.max as f64).ceil() as u64;
                }
                let size = count.multiply(with).add(retained);
                Some((sz.factor(2.0 * f), Some(size)))
            }
            "split" => {
                let sz = self.size_estimate(target?);
                let mut max = sz.max;
                if let Some(Expr::Literal(LiteralValue::Int(i))) = args.get(1).and_then(|a| a.expr).map(|x| &x.expr) {
                    max = *i.inner() as u64;
                }
                Some((sz.factor(2.0 * f), Some(Range { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list_size = self.size_estimate(t);
                let mut sz = Range::fixed(0);
                if let Some(elem) = self.list_element(t) {
                    sz = list_size.multiply(self.size_estimate(&elem));
                }
                if let Some(sep) = args.first() {
                    let sep = self.size_estimate(sep);
                    let seps = Range { min: list_size.min.saturating_sub(1), max: list_size.max.saturating_sub(1) };
                    sz = sz.add(sep.multiply(seps));
                }
                Some((sz.factor(f), Some(sz)))
            }
            "find" | "findAll" if target.is_some() && !args.is_empty() => {
                let sz = self.size_estimate(target?);
                let str_cost = sz.add(one).factor(f);
                let regex_cost = self.size_estimate(&args[0]).factor(REGEX_STRING_LENGTH_COST_FACTOR);
                Some((str_cost.multiply(regex_cost), Some(Range { min: 0, max: sz.max })))
            }
            "cidr" | "isIP" | "isCIDR" if !args.is_empty() => Some((self.size_estimate(&args[0]).factor(f), None)),
            "ip" => {
                if overload == "cidr_ip" {
                    return Some((one, None));
                }
                Some((self.size_estimate(args.first()?).factor(f), None))
            }
            "ip.isCanonical" if !args.is_empty() => Some((self.size_estimate(&args[0]).factor(2.0 * f), None)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => Some((one, None)),
            "containsIP" if !args.is_empty() => {
                let sz = Range { min: 4, max: 16 };
                let mut c = sz.add(sz).factor(f);
                if overload == "cidr_contains_ip_string" {
                    c = c.add(self.size_estimate(&args[0]).factor(f));
                }
                Some((c, None))
            }
            "containsCIDR" if !args.is_empty() => {
                let sz = Range { min: 4, max: 16 };
                let mut c = sz.add(sz).factor(f).add(sz.factor(f)).add(one);
                if overload == "cidr_contains_cidr_string" {
                    c = c.add(self.size_estimate(&args[0]).factor(f));
                }
                Some((c, None))
            }
            "quantity" | "isQuantity" | "semver" | "isSemver" if !args.is_empty() => Some((self.size_estimate(&args[0]).factor(f), None)),
            "validate" if !args.is_empty() => {
                let sz = self.size_estimate(&args[0]);
                Some((sz.factor(f).factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR), None))
            }
            "format.named" => Some((one, None)),
            "sign" | "asInteger" | "isInteger" | "asApproximateFloat" | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub"
            | "major" | "minor" | "patch" => Some((one, None)),
            "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => Some((one, None)),
            "_==_" if args.len() == 2 => {
                let (lhs, rhs) = (&args[0].ty, &args[1].ty);
                if !lhs.same(rhs) {
                    return None;
                }
                match lhs {
                    Ty::Lib("net.IP" | "net.CIDR", _) => Some((one, None)),
                    Ty::Lib("kubernetes.Quantity" | "kubernetes.Semver", _) => Some((one, None)),
                    Ty::Lib("kubernetes.NamedFormat", _) => Some((Range { min: 1, max: MAX_FORMAT_SIZE }.factor(f), None)),
                    Ty::Lib("kubernetes.URL", _) => {
                        // As written upstream: both sides' sizes are the right-hand side's.
                        let size = match args[1].computed {
                            Some(r) => r.union(r),
                            None => one,
                        };
                        Some((Range { min: 1, max: size.max }.factor(f), None))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `listElementNode`: the element of a list-typed node, with its path when it has one.
    fn list_element(&self, list: &Node) -> Option<Node<'static>> {
        let elem = list.ty.list_elem()?.clone();
        let path = if list.path.is_empty() {
            Vec::new()
        } else {
            let mut p = list.path.clone();
            p.push("@items".into());
            p
        };
        Some(Node { path, ty: elem, expr: None, computed: None })
    }

    /// `library.CostEstimator.sizeEstimate`.
    fn size_estimate(&self, n: &Node) -> Range {
        if let Some(s) = n.computed {
            return s;
        }
        self.estimate_size(&n.path).unwrap_or(Range::UNKNOWN)
    }

    /// `sizeOrUnknown` on an `AstNode`: only its computed size.
    fn size_or_unknown(&self, n: &Node) -> Range {
        n.computed.unwrap_or(Range::UNKNOWN)
    }

    fn size_or_unknown_expr(&mut self, e: &IdedExpr) -> Range {
        self.compute_size(e).unwrap_or(Range::UNKNOWN)
    }

    /// `coster.computeSize`.
    fn compute_size(&mut self, e: &IdedExpr) -> Option<Range> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        if let Some(s) = literal_size(e) {
            return Some(s);
        }
        let path = self.path(e);
        if let Some(s) = self.estimate_size(&path) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if self.ty(e).is_scalar() {
            return Some(Range::fixed(1));
        }
        if let Expr::Ident(name) = &e.expr {
            if let Some(s) = self.locals.get(name).and_then(|v| v.last()).and_then(|v| v.size) {
                return Some(s);
            }
        }
        None
    }

    fn entry_size(&self, e: &IdedExpr) -> Option<EntrySize> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        if let Expr::Ident(name) = &e.expr {
            return self.locals.get(name).and_then(|v| v.last()).and_then(|v| v.entry);
        }
        None
    }

    /// The CRD's `sizeEstimator.EstimateSize`: the declaration at the path (its first element,
    /// the variable, stands for the rule's node), `{0, MaxElements}`.
    fn estimate_size(&self, path: &[String]) -> Option<Range> {
        if path.is_empty() {
            return None;
        }
        let mut node: &Rc<Decl> = self.root;
        for name in &path[1..] {
            node = match name.as_str() {
                "@items" | "@values" => node.elem.as_ref()?,
                "@keys" => node.key.as_ref()?,
                field => node.fields.get(field)?,
            };
        }
        Some(Range { min: 0, max: node.max_elements.max(0) as u64 })
    }
}

/// `nodeAsUintValue`: an int literal (negative as 0), else the default.
fn literal_uint(n: &Node, default: u64) -> u64 {
    match n.expr.map(|e| &e.expr) {
        Some(Expr::Literal(LiteralValue::Int(i))) => u64::try_from(*i.inner()).unwrap_or(0),
        _ => default,
    }
}

/// `estimateAllocatingListCall`.
fn list_call(factor: f64, size: Range) -> (Range, Option<Range>) {
    (size.factor(factor).add(Range::fixed(1)).add(Range::fixed(LIST_CREATE_BASE_COST)), Some(size))
}
