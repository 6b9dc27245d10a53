//! What the API server's CEL compiler would say about a rule, without running cel-go: which
//! functions it calls (and whether we implement them), which library version introduced them,
//! and whether every field it selects exists in the CEL type the schema declares — including the
//! reserved-word rule that made Trainer 2.3's `t.metadata.namespace` fail on older clusters.
//!
//! Versions: a CRD write compiles new rules with the environment of the server's compatibility
//! version, one minor below its own (`environment.DefaultCompatibilityVersion()` →
//! `MinCompatibilityVersion()`; hard-coded 1.29 in 1.30). Libraries per version are those of
//! `k8s.io/apiserver/pkg/cel/environment/base.go` at v0.36.1; fields named after CEL reserved
//! words resolve only when that version is ≥ 1.31 (`SetRecognizeKeywordAsFieldName`,
//! `environment.go`), so on a 1.30 or 1.31 server.

use std::collections::{BTreeSet, HashMap};

use cel::common::ast::{Expr, IdedExpr};

use crate::structural::{Additional, Schema};
use kube_version::KubeVersion;

/// A reason the cluster would refuse the CRD (or this rule in it).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompatIssue {
    /// The first Kubernetes version whose API server accepts the rule, when one does.
    pub accepted_from: Option<KubeVersion>,
    pub message: String,
}

impl CompatIssue {
    pub fn invalid_field_path(fp: &str) -> Self {
        CompatIssue { accepted_from: None, message: format!("fieldPath {fp:?} is not a valid path") }
    }
    pub fn optional_old_self_unused() -> Self {
        CompatIssue { accepted_from: None, message: "optionalOldSelf is set but the rule does not use oldSelf".into() }
    }
}

/// Facts about one parsed rule.
pub struct Facts {
    pub uses_old_self: bool,
    pub self_fields: Option<BTreeSet<String>>,
    pub issues: Vec<CompatIssue>,
    /// Functions the rule calls that trainer-audit does not evaluate.
    pub unsupported: Vec<String>,
}

/// Functions of the cel crate's standard library and macros that need no version.
const BUILTIN: &[&str] = &[
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "type",
    "dyn",
    "duration",
    "timestamp",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getFullYear",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getSeconds",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
];

/// (function, the Kubernetes version whose server first accepts it in a new rule, implemented).
fn library_version(f: &str) -> Option<(KubeVersion, bool)> {
    let v = |minor: u32| KubeVersion::new(1, minor + 1);
    Some(match f {
        "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" | "find" | "findAll" | "url" | "isURL" | "getScheme" | "getHost"
        | "getHostname" | "getPort" | "getEscapedPath" | "getQuery" | "charAt" | "lowerAscii" | "upperAscii" | "replace" | "split"
        | "substring" | "trim" => (v(0), true),
        "optional.of" | "optional.none" | "optional.ofNonZeroValue" | "hasValue" | "value" | "orValue" | "or" | "_?._" | "_[?_]" => {
            (v(28), true)
        }
        "quantity" | "isQuantity" | "sign" | "isInteger" | "asInteger" | "asApproximateFloat" | "add" | "sub" | "isGreaterThan"
        | "isLessThan" | "compareTo" => (v(28), true),
        "join" | "sets.contains" | "sets.equivalent" | "sets.intersects" => (v(29), true),
        "quote" | "format" => (v(29), false),
        "ip"
        | "isIP"
        | "cidr"
        | "isCIDR"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "containsIP"
        | "containsCIDR"
        | "prefixLength"
        | "masked" => (v(30), true),
        "validate" => (v(31), false),
        f if f.starts_with("format.") => (v(31), false),
        "transformList" | "transformMap" | "transformMapEntry" => (v(32), false),
        "semver" | "isSemver" | "major" | "minor" | "patch" => (v(33), true),
        "distinct" | "flatten" | "lists.range" | "reverse" | "slice" | "sort" | "sortBy" | "@sortByAssociatedKeys" => (v(34), true),
        "authorizer" | "path" | "group" | "resource" | "check" | "allowed" | "reason" | "errored" | "error" | "namespace" | "name"
        | "subresource" | "serviceAccount" | "fieldSelector" | "labelSelector" => (v(27), false),
        _ => return None,
    })
}

#[derive(Clone, Copy)]
enum Ty<'a> {
    /// A schema node; `true` when it is a resource root (WithTypeAndObjectMeta applies).
    Node(&'a Schema, bool),
    /// Metadata of a resource root without a declared `metadata`: only name and generateName.
    RootMeta,
    Unknown,
}

struct Walk<'a> {
    version: &'a KubeVersion,
    scopes: Vec<HashMap<String, Ty<'a>>>,
    uses_old_self: bool,
    self_fields: Option<BTreeSet<String>>,
    self_bare: bool,
    functions: BTreeSet<String>,
    issues: Vec<CompatIssue>,
}

pub fn analyse<'a>(e: &IdedExpr, node: &'a Schema, resource_root: bool, version: &'a KubeVersion) -> Facts {
    let mut root = HashMap::new();
    root.insert("self".to_string(), Ty::Node(node, resource_root));
    root.insert("oldSelf".to_string(), Ty::Node(node, resource_root));
    let mut w = Walk {
        version,
        scopes: vec![root],
        uses_old_self: false,
        self_fields: Some(BTreeSet::new()),
        self_bare: false,
        functions: BTreeSet::new(),
        issues: Vec::new(),
    };
    w.expr(e);
    let mut unsupported = Vec::new();
    for f in &w.functions {
        if f.starts_with('_') || f.starts_with('@') && f != "@sortByAssociatedKeys" || f == "!_" || f == "-_" {
            continue;
        }
        if BUILTIN.contains(&f.as_str()) {
            continue;
        }
        match library_version(f) {
            Some((since, implemented)) => {
                if *version < since {
                    w.issues.push(CompatIssue {
                        accepted_from: Some(since.clone()),
                        message: format!(
                            "undeclared reference to '{f}': the CEL library providing it is available to new rules from Kubernetes {since}"
                        ),
                    });
                }
                if !implemented {
                    unsupported.push(format!("'{f}'"));
                }
            }
            None => unsupported.push(format!("'{f}'")),
        }
    }
    Facts { uses_old_self: w.uses_old_self, self_fields: if w.self_bare { None } else { w.self_fields }, issues: w.issues, unsupported }
}

impl<'a> Walk<'a> {
    fn lookup(&self, name: &str) -> Option<Ty<'a>> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Walks `e` and returns its type when it is a schema node.
    fn expr(&mut self, e: &IdedExpr) -> Ty<'a> {
        match &e.expr {
            Expr::Ident(name) => {
                if name == "oldSelf" {
                    self.uses_old_self = true;
                }
                if name == "self" {
                    self.self_bare = true;
                }
                self.lookup(name).unwrap_or(Ty::Unknown)
            }
            Expr::Select(sel) => {
                let operand_ty = match &sel.operand.expr {
                    Expr::Ident(n) if n == "self" && self.lookup("self").is_some() => {
                        if let Some(f) = self.self_fields.as_mut() {
                            f.insert(sel.field.clone());
                        }
                        self.lookup("self").unwrap_or(Ty::Unknown)
                    }
                    _ => self.expr(&sel.operand),
                };
                self.field(operand_ty, &sel.field)
            }
            Expr::Call(call) => {
                self.functions.insert(call.func_name.clone());
                let t = call.target.as_ref().map(|t| self.expr(t));
                let args: Vec<Ty<'a>> = call.args.iter().map(|a| self.expr(a)).collect();
                match (call.func_name.as_str(), t, args.as_slice()) {
                    ("_[_]", _, [Ty::Node(s, _), _]) => items_of(s),
                    _ => Ty::Unknown,
                }
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                if c.iter_var2.is_some() {
                    self.functions.insert("transformList".into());
                }
                self.expr(&c.accu_init);
                let mut scope = HashMap::new();
                let elem = match range {
                    Ty::Node(s, _) if s.ty == "array" => items_of(s),
                    _ => Ty::Unknown,
                };
                scope.insert(c.iter_var.clone(), elem);
                if let Some(v2) = &c.iter_var2 {
                    scope.insert(v2.clone(), Ty::Unknown);
                }
                scope.insert(c.accu_var.clone(), Ty::Unknown);
                self.scopes.push(scope);
                self.expr(&c.loop_cond);
                self.expr(&c.loop_step);
                self.expr(&c.result);
                self.scopes.pop();
                Ty::Unknown
            }
            Expr::List(l) => {
                for x in &l.elements {
                    self.expr(x);
                }
                Ty::Unknown
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.expr(&me.key);
                        self.expr(&me.value);
                    }
                }
                Ty::Unknown
            }
            _ => Ty::Unknown,
        }
    }

    fn field(&mut self, t: Ty<'a>, name: &str) -> Ty<'a> {
        let s = match t {
            Ty::Node(s, root) => {
                if root && (name == "apiVersion" || name == "kind") && !s.properties.contains_key(name) {
                    return Ty::Unknown;
                }
                if root && name == "metadata" {
                    let declared = s.properties.get("metadata").is_some_and(|m| {
                        m.properties.get("name").is_some_and(|n| n.ty == "string")
                            && m.properties.get("generateName").is_some_and(|n| n.ty == "string")
                    });
                    return if declared { s.properties.get("metadata").map_or(Ty::Unknown, |m| Ty::Node(m, false)) } else { Ty::RootMeta };
                }
                s
            }
            Ty::RootMeta => {
                if name != "name" && name != "generateName" {
                    self.undefined(name, None);
                }
                return Ty::Unknown;
            }
            Ty::Unknown => return Ty::Unknown,
        };
        if s.ty != "object" || s.preserve_unknown && s.properties.is_empty() {
            return Ty::Unknown;
        }
        if let Some(Additional::Schema(a)) = &s.additional {
            return Ty::Node(a, a.embedded_resource);
        }
        match s.properties.get(name) {
            Some(p) => {
                if super::cost::decl::RESERVED.contains(&name) && *self.version < KubeVersion::new(1, 32) {
                    self.undefined(name, Some(KubeVersion::new(1, 32)));
                }
                Ty::Node(p, p.embedded_resource)
            }
            None if s.preserve_unknown => Ty::Unknown,
            None => {
                self.undefined(name, None);
                Ty::Unknown
            }
        }
    }

    fn undefined(&mut self, name: &str, accepted_from: Option<KubeVersion>) {
        let message = match accepted_from {
            Some(ref v) => format!(
                "undefined field '{name}': '{name}' is a CEL reserved word, resolvable as a field name only from Kubernetes {v} (compatibility version 1.31)"
            ),
            None => format!("undefined field '{name}'"),
        };
        let issue = CompatIssue { accepted_from, message };
        if !self.issues.contains(&issue) {
            self.issues.push(issue);
        }
    }
}

fn items_of(s: &Schema) -> Ty<'_> {
    match s.items.as_deref() {
        Some(i) => Ty::Node(i, i.embedded_resource),
        None => Ty::Unknown,
    }
}
