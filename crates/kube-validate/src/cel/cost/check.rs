//! The part of cel-go's type checker the cost estimator reads: each expression's type and, for
//! each call, the overloads it may resolve to (cel-go keeps every candidate when an argument is
//! `dyn`, and the estimator takes the widest). Types come from the rule node's declaration
//! ([`super::decl`]) and from the signatures of the functions Kubernetes' CEL environment
//! declares. A call this table does not know is typed `Unknown` and marks the estimate inexact.

use std::collections::HashMap;
use std::rc::Rc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::decl::{Decl, DeclKind};

/// A CEL type, as far as costs depend on it.
#[derive(Debug, Clone)]
pub enum Ty {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A schema object: a CEL message (struct) type.
    Object(Rc<Decl>),
    Dyn,
    Type,
    Optional(Box<Ty>),
    /// A Kubernetes library type by its CEL name; `true` for the struct-like ones
    /// (`kubernetes.Quantity`, `kubernetes.URL`, `kubernetes.Semver`, `kubernetes.NamedFormat`),
    /// `false` for the opaque ones (`net.IP`, `net.CIDR`).
    Lib(&'static str, bool),
    /// A type cel-go has but this table does not.
    Unknown,
}

/// cel-go's `types.Kind`, as the estimator distinguishes kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    List,
    Map,
    Struct,
    Dyn,
    Type,
    Opaque,
    Unknown,
}

impl Ty {
    pub fn kind(&self) -> Kind {
        match self {
            Ty::Bool => Kind::Bool,
            Ty::Int => Kind::Int,
            Ty::Uint => Kind::Uint,
            Ty::Double => Kind::Double,
            Ty::String => Kind::String,
            Ty::Bytes => Kind::Bytes,
            Ty::Null => Kind::Null,
            Ty::Duration => Kind::Duration,
            Ty::Timestamp => Kind::Timestamp,
            Ty::List(_) => Kind::List,
            Ty::Map(..) => Kind::Map,
            Ty::Object(_) => Kind::Struct,
            Ty::Dyn => Kind::Dyn,
            Ty::Type => Kind::Type,
            Ty::Optional(_) => Kind::Opaque,
            Ty::Lib(_, true) => Kind::Struct,
            Ty::Lib(_, false) => Kind::Opaque,
            Ty::Unknown => Kind::Unknown,
        }
    }

    /// `checker.isScalar`: a type whose size is constant.
    pub fn is_scalar(&self) -> bool {
        match self {
            Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp | Ty::Uint => true,
            Ty::Optional(t) => t.is_scalar(),
            _ => false,
        }
    }

    /// The element type of a list (`Type().Parameters()[0]`).
    pub fn list_elem(&self) -> Option<&Ty> {
        match self {
            Ty::List(e) => Some(e),
            _ => None,
        }
    }

    /// The CEL type of a declaration.
    pub fn of_decl(d: &Rc<Decl>) -> Ty {
        match d.kind {
            DeclKind::List => Ty::List(Box::new(d.elem.as_ref().map_or(Ty::Dyn, Ty::of_decl))),
            DeclKind::Map => Ty::Map(Box::new(Ty::String), Box::new(d.elem.as_ref().map_or(Ty::Dyn, Ty::of_decl))),
            DeclKind::Object => Ty::Object(Rc::clone(d)),
            DeclKind::String => Ty::String,
            DeclKind::Bytes => Ty::Bytes,
            DeclKind::Duration => Ty::Duration,
            DeclKind::Timestamp => Ty::Timestamp,
            DeclKind::Bool => Ty::Bool,
            DeclKind::Int => Ty::Int,
            DeclKind::Double => Ty::Double,
            DeclKind::Dyn => Ty::Dyn,
        }
    }

    /// Type equality as `Type.Equal` decides it for the estimator's `_==_` on library types.
    pub fn same(&self, other: &Ty) -> bool {
        match (self, other) {
            (Ty::Lib(a, _), Ty::Lib(b, _)) => a == b,
            (Ty::List(a), Ty::List(b)) | (Ty::Optional(a), Ty::Optional(b)) => a.same(b),
            (Ty::Map(ak, av), Ty::Map(bk, bv)) => ak.same(bk) && av.same(bv),
            (Ty::Object(a), Ty::Object(b)) => Rc::ptr_eq(a, b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

pub const QUANTITY: Ty = Ty::Lib("kubernetes.Quantity", true);
pub const URL: Ty = Ty::Lib("kubernetes.URL", true);
pub const SEMVER: Ty = Ty::Lib("kubernetes.Semver", true);
pub const FORMAT: Ty = Ty::Lib("kubernetes.NamedFormat", true);
pub const IP: Ty = Ty::Lib("net.IP", false);
pub const CIDR: Ty = Ty::Lib("net.CIDR", false);

/// What the checker found: types and overloads by expression id, and the calls it could not type.
#[derive(Default)]
pub struct Checked {
    pub types: HashMap<u64, Ty>,
    pub overloads: HashMap<u64, Vec<&'static str>>,
    /// The global name of a call whose target is a namespace (`sets.contains`, `optional.of`).
    pub qualified: HashMap<u64, String>,
    pub unknown: Vec<String>,
}

impl Checked {
    pub fn ty(&self, id: u64) -> &Ty {
        self.types.get(&id).unwrap_or(&Ty::Unknown)
    }
}

/// Names a call target may be a namespace of, when no variable has the name.
const NAMESPACES: &[&str] = &["sets", "optional", "lists", "format", "strings", "math", "ip", "cel"];

/// Types `e` with `self` (and `oldSelf`, optional when `optional_old_self`) of type `root`.
pub fn check(e: &IdedExpr, root: &Ty, optional_old_self: bool) -> Checked {
    let mut c = Checker { out: Checked::default(), scopes: vec![HashMap::new()] };
    c.scopes[0].insert("self".to_string(), root.clone());
    let old = if optional_old_self { Ty::Optional(Box::new(root.clone())) } else { root.clone() };
    c.scopes[0].insert("oldSelf".to_string(), old);
    c.expr(e);
    c.out
}

struct Checker {
    out: Checked,
    scopes: Vec<HashMap<String, Ty>>,
}

impl Checker {
    fn lookup(&self, name: &str) -> Option<&Ty> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn set(&mut self, e: &IdedExpr, t: Ty) -> Ty {
        self.out.types.insert(e.id, t.clone());
        t
    }

    fn expr(&mut self, e: &IdedExpr) -> Ty {
        let t = match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) => match self.lookup(name) {
                Some(t) => t.clone(),
                None => match name.as_str() {
                    "int" | "uint" | "double" | "string" | "bytes" | "bool" | "list" | "map" | "null_type" | "type" => Ty::Type,
                    _ => {
                        self.out.unknown.push(format!("identifier '{name}'"));
                        Ty::Unknown
                    }
                },
            },
            Expr::Select(sel) => {
                let operand = self.expr(&sel.operand);
                let field = select(&operand, &sel.field);
                if sel.test {
                    Ty::Bool
                } else {
                    field
                }
            }
            Expr::Call(call) => {
                let qualified = match call.target.as_deref() {
                    Some(IdedExpr { expr: Expr::Ident(ns), .. }) if NAMESPACES.contains(&ns.as_str()) && self.lookup(ns).is_none() => {
                        Some(format!("{ns}.{}", call.func_name))
                    }
                    _ => None,
                };
                let target = match (&qualified, call.target.as_deref()) {
                    (None, Some(t)) => Some(self.expr(t)),
                    _ => None,
                };
                let args: Vec<Ty> = call.args.iter().map(|a| self.expr(a)).collect();
                let name = qualified.clone().unwrap_or_else(|| call.func_name.clone());
                let (overloads, result) = resolve(&name, target.as_ref(), &args, &call.args);
                if matches!(result, Ty::Unknown) && overloads.is_empty() {
                    self.out.unknown.push(format!("function '{name}'"));
                }
                self.out.overloads.insert(e.id, overloads);
                if let Some(q) = qualified {
                    self.out.qualified.insert(e.id, q);
                }
                result
            }
            Expr::List(l) => {
                let elems: Vec<Ty> = l.elements.iter().map(|x| self.expr(x)).collect();
                Ty::List(Box::new(common(&elems)))
            }
            Expr::Map(m) => {
                let mut keys = Vec::new();
                let mut vals = Vec::new();
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        keys.push(self.expr(&me.key));
                        vals.push(self.expr(&me.value));
                    }
                }
                Ty::Map(Box::new(common(&keys)), Box::new(common(&vals)))
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.expr(&f.value);
                    }
                }
                Ty::Unknown
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                let accu = self.expr(&c.accu_init);
                let mut scope = HashMap::new();
                match &c.iter_var2 {
                    None => {
                        let elem = match &range {
                            Ty::List(e) => (**e).clone(),
                            Ty::Map(k, _) => (**k).clone(),
                            _ => Ty::Dyn,
                        };
                        scope.insert(c.iter_var.clone(), elem);
                    }
                    Some(v2) => {
                        let (first, second) = match &range {
                            Ty::List(e) => (Ty::Int, (**e).clone()),
                            Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                            _ => (Ty::Dyn, Ty::Dyn),
                        };
                        scope.insert(c.iter_var.clone(), first);
                        scope.insert(v2.clone(), second);
                    }
                }
                scope.insert(c.accu_var.clone(), accu);
                self.scopes.push(scope);
                self.expr(&c.loop_cond);
                let step = self.expr(&c.loop_step);
                // The accumulator takes the step's type (a `[]` start becomes the list the step builds).
                if let Some(s) = self.scopes.last_mut() {
                    if !matches!(step, Ty::Unknown) {
                        s.insert(c.accu_var.clone(), step);
                    }
                }
                let result = self.expr(&c.result);
                self.scopes.pop();
                result
            }
            Expr::Unspecified => Ty::Unknown,
        };
        self.set(e, t)
    }
}

/// The type a field selection gives (`FindStructFieldType`, reserved words also as `__w__`).
pub fn select(operand: &Ty, field: &str) -> Ty {
    match operand {
        Ty::Object(d) => {
            let f = d
                .fields
                .get(field)
                .or_else(|| super::decl::RESERVED.contains(&field).then(|| d.fields.get(&format!("__{field}__"))).flatten());
            f.map_or(Ty::Unknown, Ty::of_decl)
        }
        Ty::Map(_, v) => (**v).clone(),
        Ty::Optional(inner) => select(inner, field),
        Ty::Lib("kubernetes.URL", _) => Ty::Unknown,
        _ => Ty::Dyn,
    }
}

/// The common type of literal elements: the first one's (cel-go requires homogeneous literals).
fn common(tys: &[Ty]) -> Ty {
    match tys.first() {
        Some(t) if tys.iter().all(|x| x.same(t)) => t.clone(),
        Some(_) => Ty::Dyn,
        None => Ty::Dyn,
    }
}

fn is_dyn(t: &Ty) -> bool {
    matches!(t, Ty::Dyn | Ty::Unknown)
}

/// The overloads a call resolves to and its result type.
fn resolve(name: &str, target: Option<&Ty>, args: &[Ty], arg_exprs: &[IdedExpr]) -> (Vec<&'static str>, Ty) {
    let a0 = args.first();
    let a1 = args.get(1);
    let one = |id: &'static str, t: Ty| (vec![id], t);
    match (name, target) {
        ("_&&_", None) => one("logical_and", Ty::Bool),
        ("_||_", None) => one("logical_or", Ty::Bool),
        ("!_", None) => one("logical_not", Ty::Bool),
        ("@not_strictly_false", None) => one("not_strictly_false", Ty::Bool),
        ("_==_", None) => one("equals", Ty::Bool),
        ("_!=_", None) => one("not_equals", Ty::Bool),
        ("_?_:_", None) => one("conditional", a1.cloned().unwrap_or(Ty::Dyn)),
        ("_<_" | "_<=_" | "_>_" | "_>=_", None) => {
            let base = match name {
                "_<_" => "less",
                "_<=_" => "less_equals",
                "_>_" => "greater",
                _ => "greater_equals",
            };
            (compare_overloads(base, a0, a1), Ty::Bool)
        }
        ("_+_", None) => add(a0, a1),
        ("_-_", None) => match (a0, a1) {
            (Some(Ty::Timestamp), Some(Ty::Timestamp)) => one("subtract_timestamp_timestamp", Ty::Duration),
            (Some(Ty::Timestamp), _) => one("subtract_timestamp_duration", Ty::Timestamp),
            (Some(t), _) if !is_dyn(t) => one("subtract", t.clone()),
            _ => one("subtract", Ty::Dyn),
        },
        ("_*_" | "_/_" | "_%_", None) => one("arith", a0.filter(|t| !is_dyn(t)).cloned().unwrap_or(Ty::Dyn)),
        ("-_", None) => one("negate", a0.cloned().unwrap_or(Ty::Dyn)),
        ("@in", None) => match a1 {
            Some(Ty::List(_)) => one("in_list", Ty::Bool),
            Some(Ty::Map(..)) => one("in_map", Ty::Bool),
            _ => (vec!["in_list", "in_map"], Ty::Bool),
        },
        ("_[_]", None) => match a0 {
            Some(Ty::List(e)) => one("index_list", (**e).clone()),
            Some(Ty::Map(_, v)) => one("index_map", (**v).clone()),
            _ => (vec!["index_list", "index_map"], Ty::Dyn),
        },
        ("_[?_]", None) => match a0 {
            Some(Ty::List(e)) => one("optional_list_index_int", Ty::Optional(e.clone())),
            Some(Ty::Map(_, v)) => one("optional_map_index_value", Ty::Optional(v.clone())),
            Some(Ty::Optional(inner)) => match &**inner {
                Ty::List(e) => one("optional_list_index_int", Ty::Optional(e.clone())),
                Ty::Map(_, v) => one("optional_map_index_value", Ty::Optional(v.clone())),
                _ => one("optional_index", Ty::Optional(Box::new(Ty::Dyn))),
            },
            _ => one("optional_index", Ty::Optional(Box::new(Ty::Dyn))),
        },
        ("_?._", None) => {
            let field = match arg_exprs.get(1).map(|e| &e.expr) {
                Some(Expr::Literal(LiteralValue::String(s))) => s.inner().to_string(),
                _ => String::new(),
            };
            let base = match a0 {
                Some(Ty::Optional(inner)) => (**inner).clone(),
                Some(t) => t.clone(),
                None => Ty::Dyn,
            };
            one("select_optional_field", Ty::Optional(Box::new(select(&base, &field))))
        }
        ("size", None) | ("size", Some(_)) => {
            let on = target.or(a0);
            let id = match on {
                Some(Ty::String) => "size_string",
                Some(Ty::Bytes) => "size_bytes",
                Some(Ty::List(_)) => "size_list",
                Some(Ty::Map(..)) => "size_map",
                _ => "size",
            };
            one(id, Ty::Int)
        }
        ("matches", None) => one("matches", Ty::Bool),
        ("matches", Some(_)) => one("matches_string", Ty::Bool),
        ("contains", Some(_)) => one("contains_string", Ty::Bool),
        ("startsWith", Some(_)) => one("starts_with_string", Ty::Bool),
        ("endsWith", Some(_)) => one("ends_with_string", Ty::Bool),
        ("int", None) => one("to_int", Ty::Int),
        ("uint", None) => one("to_uint", Ty::Uint),
        ("double", None) => one("to_double", Ty::Double),
        ("bool", None) => one("to_bool", Ty::Bool),
        ("string", None) => match a0 {
            Some(Ty::Bytes) => one("bytes_to_string", Ty::String),
            Some(t) if is_dyn(t) => (vec!["bytes_to_string", "to_string"], Ty::String),
            _ => one("to_string", Ty::String),
        },
        ("bytes", None) => match a0 {
            Some(Ty::String) => one("string_to_bytes", Ty::Bytes),
            Some(t) if is_dyn(t) => (vec!["string_to_bytes", "to_bytes"], Ty::Bytes),
            _ => one("to_bytes", Ty::Bytes),
        },
        ("duration", None) => one("to_duration", Ty::Duration),
        ("timestamp", None) => one("to_timestamp", Ty::Timestamp),
        ("dyn", None) => one("to_dyn", Ty::Dyn),
        ("type", None) => one("type", Ty::Type),
        (
            "getFullYear" | "getMonth" | "getDayOfYear" | "getDate" | "getDayOfMonth" | "getDayOfWeek" | "getHours" | "getMinutes"
            | "getSeconds" | "getMilliseconds",
            Some(_),
        ) => one("time_accessor", Ty::Int),
        // Strings extension (ext.Strings v2).
        ("charAt", Some(_)) => one("string_char_at_int", Ty::String),
        ("indexOf" | "lastIndexOf", Some(Ty::String)) => one("string_index_of", Ty::Int),
        ("lowerAscii" | "upperAscii" | "trim" | "substring" | "replace" | "format" | "reverse", Some(Ty::String)) => {
            let id = match name {
                "format" => "string_format",
                _ => "string_transform",
            };
            one(id, Ty::String)
        }
        ("split", Some(_)) => one("string_split", Ty::List(Box::new(Ty::String))),
        ("join", Some(_)) => one("list_join", Ty::String),
        ("strings.quote", None) => one("strings_quote", Ty::String),
        // Kubernetes lists library and ext.Lists.
        ("isSorted", Some(_)) => one("list_is_sorted", Ty::Bool),
        ("sum" | "min" | "max", Some(t)) => one("list_fold", t.list_elem().cloned().unwrap_or(Ty::Dyn)),
        ("indexOf" | "lastIndexOf", Some(_)) => one("list_index_of", Ty::Int),
        ("includes", Some(_)) => one("list_includes", Ty::Bool),
        ("distinct", Some(t)) => one("list_distinct", t.clone()),
        ("reverse", Some(t)) => one("list_reverse", t.clone()),
        ("slice", Some(t)) => one("list_slice", t.clone()),
        ("flatten", Some(t)) => {
            let inner = t.list_elem().and_then(Ty::list_elem).cloned().unwrap_or(Ty::Dyn);
            one(if args.is_empty() { "list_flatten" } else { "list_flatten_int" }, Ty::List(Box::new(inner)))
        }
        ("sort", Some(t)) => one("list_sort", t.clone()),
        ("@sortByAssociatedKeys", Some(t)) => one("list_sort_by", t.clone()),
        ("lists.range", None) => one("lists_range", Ty::List(Box::new(Ty::Int))),
        // Regex.
        ("find", Some(_)) => one("string_find", Ty::String),
        ("findAll", Some(_)) => one("string_find_all", Ty::List(Box::new(Ty::String))),
        // URLs.
        ("url", None) => one("string_to_url", URL),
        ("isURL", None) => one("is_url_string", Ty::Bool),
        ("getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath", Some(_)) => one("url_accessor", Ty::String),
        ("getQuery", Some(_)) => one("url_query", Ty::Map(Box::new(Ty::String), Box::new(Ty::List(Box::new(Ty::String))))),
        // Quantity.
        ("quantity", None) => one("string_to_quantity", QUANTITY),
        ("isQuantity", None) => one("is_quantity_string", Ty::Bool),
        ("sign" | "asInteger" | "compareTo", Some(_)) => one("quantity_int", Ty::Int),
        ("isInteger" | "isGreaterThan" | "isLessThan", Some(_)) => one("quantity_bool", Ty::Bool),
        ("asApproximateFloat", Some(_)) => one("quantity_float", Ty::Double),
        ("add" | "sub", Some(_)) => one("quantity_arith", QUANTITY),
        // IP and CIDR.
        ("ip", None) => one("string_to_ip", IP),
        ("ip", Some(_)) => one("cidr_ip", IP),
        ("cidr", None) => one("string_to_cidr", CIDR),
        ("isIP" | "isCIDR", None) => one("is_ip_string", Ty::Bool),
        ("ip.isCanonical", None) => one("ip_is_canonical", Ty::Bool),
        ("family" | "prefixLength", Some(_)) => one("net_int", Ty::Int),
        ("isUnspecified" | "isLoopback" | "isLinkLocalMulticast" | "isLinkLocalUnicast" | "isGlobalUnicast" | "isMask", Some(_)) => {
            one("net_bool", Ty::Bool)
        }
        ("containsIP", Some(_)) => match a0 {
            Some(Ty::String) => one("cidr_contains_ip_string", Ty::Bool),
            _ => one("cidr_contains_ip_ip", Ty::Bool),
        },
        ("containsCIDR", Some(_)) => match a0 {
            Some(Ty::String) => one("cidr_contains_cidr_string", Ty::Bool),
            _ => one("cidr_contains_cidr", Ty::Bool),
        },
        ("masked", Some(_)) => one("cidr_masked", CIDR),
        // Semver.
        ("semver", None) => one("string_to_semver", SEMVER),
        ("isSemver", None) => one("is_semver", Ty::Bool),
        ("major" | "minor" | "patch", Some(_)) => one("semver_int", Ty::Int),
        // Format.
        ("format.named", None) => one("format_named", Ty::Optional(Box::new(FORMAT))),
        (n, None) if n.starts_with("format.") => one("format", FORMAT),
        ("validate", Some(_)) => one("format_validate", Ty::Optional(Box::new(Ty::List(Box::new(Ty::String))))),
        // Sets.
        ("sets.contains", None) => one("list_sets_contains_list", Ty::Bool),
        ("sets.intersects", None) => one("list_sets_intersects_list", Ty::Bool),
        ("sets.equivalent", None) => one("list_sets_equivalent_list", Ty::Bool),
        // Optionals.
        ("optional.of" | "optional.ofNonZeroValue", None) => one("optional_of", Ty::Optional(Box::new(a0.cloned().unwrap_or(Ty::Dyn)))),
        ("optional.none", None) => one("optional_none", Ty::Optional(Box::new(Ty::Dyn))),
        ("hasValue", Some(_)) => one("optional_has_value", Ty::Bool),
        ("value", Some(Ty::Optional(t))) => one("optional_value", (**t).clone()),
        ("orValue", Some(Ty::Optional(t))) => one("optional_or_value", (**t).clone()),
        ("or", Some(t)) => one("optional_or_optional", t.clone()),
        _ => (Vec::new(), Ty::Unknown),
    }
}

fn compare_overloads(base: &'static str, a0: Option<&Ty>, a1: Option<&Ty>) -> Vec<&'static str> {
    let string = match base {
        "less" => "less_string",
        "less_equals" => "less_equals_string",
        "greater" => "greater_string",
        _ => "greater_equals_string",
    };
    let bytes = match base {
        "less" => "less_bytes",
        "less_equals" => "less_equals_bytes",
        "greater" => "greater_bytes",
        _ => "greater_equals_bytes",
    };
    match (a0, a1) {
        (Some(Ty::String), _) | (_, Some(Ty::String)) => vec![string],
        (Some(Ty::Bytes), _) | (_, Some(Ty::Bytes)) => vec![bytes],
        (Some(a), Some(b)) if is_dyn(a) && is_dyn(b) => vec![string, bytes, "compare"],
        _ => vec!["compare"],
    }
}

fn add(a0: Option<&Ty>, a1: Option<&Ty>) -> (Vec<&'static str>, Ty) {
    let known = [a0, a1].into_iter().flatten().find(|t| !is_dyn(t)).cloned();
    match known {
        Some(Ty::String) => (vec!["add_string"], Ty::String),
        Some(Ty::Bytes) => (vec!["add_bytes"], Ty::Bytes),
        Some(Ty::List(e)) => {
            let elem = [a0, a1].into_iter().flatten().filter_map(Ty::list_elem).find(|t| !is_dyn(t)).cloned().unwrap_or(*e);
            (vec!["add_list"], Ty::List(Box::new(elem)))
        }
        Some(Ty::Duration) => match a1.or(a0) {
            Some(Ty::Timestamp) => (vec!["add_duration_timestamp"], Ty::Timestamp),
            _ => (vec!["add_duration_duration"], Ty::Duration),
        },
        Some(Ty::Timestamp) => (vec!["add_timestamp_duration"], Ty::Timestamp),
        Some(t) => (vec!["add_number"], t),
        None => (
            vec![
                "add_number",
                "add_string",
                "add_bytes",
                "add_list",
                "add_timestamp_duration",
                "add_duration_timestamp",
                "add_duration_duration",
            ],
            Ty::Dyn,
        ),
    }
}
