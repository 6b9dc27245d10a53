//! What an API server says about a CRD's own rules when the CRD is written to it — a create, an
//! unchanged re-apply (what `helm upgrade` sends for a CRD it renders unchanged) or a changed
//! one — as apiextensions-apiserver's CRD validation decides it
//! (`pkg/apis/apiextensions/validation/validation.go` at v0.37.2): every version's rules are
//! compiled, with the environment of the server's compatibility version for new rules and the
//! stored-expressions environment (every library the binary has) for rules the old CRD already
//! had; each rule's estimated cost (× cardinality) is held to `StaticEstimatedCostLimit` unless
//! the version's schema is unchanged, and the version's total always to
//! `StaticEstimatedCRDCostLimit`. Messages are the server's.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cel::cost::{self, STATIC_CRD_LIMIT, STATIC_RULE_LIMIT};
use super::cel::CompiledRule;
use super::structural::{Additional, Schema};
use super::{walk_rules, ValidateError, Validator};
use kube_version::KubeVersion;

/// How the CRD reaches the server.
#[derive(Debug, Clone, Copy)]
pub enum CrdWrite<'a> {
    /// A create (an apply of a CRD the cluster does not have).
    Create,
    /// An update of this stored CRD (an apply of a CRD the cluster has).
    Update(&'a Value),
}

/// What kind of refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IssueKind {
    /// The rule does not compile in the environment the write uses.
    Compile,
    /// An estimated cost over a static limit.
    Cost,
}

/// One reason the server refuses the CRD write.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CrdIssue {
    pub kind: IssueKind,
    /// The CRD version whose schema it is in.
    pub version: String,
    /// The schema path of the rule (`spec.template[*]`), `<root>` for the top.
    pub path: String,
    pub rule: Option<String>,
    pub message: String,
    /// The first Kubernetes version whose API server accepts the rule as written in a new rule,
    /// when one does (compile issues).
    pub accepted_from: Option<KubeVersion>,
    /// The figure is cel-go's own (every function of the rules is in trainer-audit's cost
    /// table); `false` marks a bound.
    pub exact: bool,
}

/// The server's `getCostErrorMessage`.
pub fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// Rule and message-expression texts anywhere in a CRD (`findPreexistingExpressions`).
fn expressions(crd: &Value) -> BTreeSet<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                    for r in rules {
                        for key in ["rule", "messageExpression"] {
                            if let Some(t) = r.get(key).and_then(Value::as_str) {
                                out.insert(t.to_string());
                            }
                        }
                    }
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    if let Some(spec) = crd.get("spec") {
        walk(spec, &mut out);
    }
    out
}

fn version_schema<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    let versions = crd.pointer("/spec/versions")?.as_array()?;
    let v = versions.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(version))?;
    v.pointer("/schema/openAPIV3Schema").or_else(|| crd.pointer("/spec/validation/openAPIV3Schema"))
}

/// What a Kubernetes `kube` API server says about writing `crd` as `write`, every version.
pub fn issues(crd: &Value, kube: &KubeVersion, write: CrdWrite) -> Result<Vec<CrdIssue>, ValidateError> {
    let names: Vec<String> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string)).collect())
        .unwrap_or_default();
    let preexisting = match write {
        CrdWrite::Create => BTreeSet::new(),
        CrdWrite::Update(old) => expressions(old),
    };
    let mut out = Vec::new();
    for name in &names {
        let v = Validator::from_crd(crd, Some(name), kube.minor_version())?;
        let unchanged = match write {
            CrdWrite::Create => false,
            CrdWrite::Update(old) => version_schema(old, name).is_some() && version_schema(old, name) == version_schema(crd, name),
        };
        version_issues(&v, kube, &preexisting, unchanged, &mut out);
    }
    Ok(out)
}

fn version_issues(v: &Validator, kube: &KubeVersion, preexisting: &BTreeSet<String>, unchanged: bool, out: &mut Vec<CrdIssue>) {
    let mut total: u64 = 0;
    let mut exact = true;
    let mut expensive: Vec<(u64, String, String)> = Vec::new();
    let issue = |kind, path: &str, rule: &str, message: String, accepted_from: Option<KubeVersion>, exact: bool| CrdIssue {
        kind,
        version: v.version.clone(),
        path: path.to_string(),
        rule: Some(rule.to_string()),
        message,
        accepted_from,
        exact,
    };
    walk_correlated(v.schema(), "", None, &mut |path, r, uncorrelatable| {
        let stored = preexisting.contains(&r.spec.rule);
        if let (true, Some(within)) = (r.uses_old_self, uncorrelatable) {
            let m = format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}");
            out.push(issue(IssueKind::Compile, path, &r.spec.rule, m, None, true));
        }
        for i in &r.issues {
            // A rule the old CRD had compiles with every library the binary has: one minor
            // earlier than a new rule (whose environment is the compatibility version's).
            let refused = match (&i.accepted_from, stored) {
                (Some(from), true) => *kube < from.minors_before(1),
                _ => true,
            };
            if refused {
                out.push(issue(IssueKind::Compile, path, &r.spec.rule, i.message.clone(), i.accepted_from.clone(), true));
            }
        }
        exact &= r.cost.exact;
        if !unchanged && r.cost.cost > STATIC_RULE_LIMIT {
            out.push(issue(
                IssueKind::Cost,
                path,
                &r.spec.rule,
                cost_message("estimated rule cost", r.cost.cost, STATIC_RULE_LIMIT),
                None,
                r.cost.exact,
            ));
        }
        if !unchanged && r.cost.message_cost > STATIC_RULE_LIMIT {
            let m = cost_message("estimated messageExpression cost", r.cost.message_cost, STATIC_RULE_LIMIT);
            out.push(issue(IssueKind::Cost, path, &r.spec.rule, m, None, r.cost.exact));
        }
        for c in [r.cost.cost, r.cost.message_cost] {
            total = total.saturating_add(c);
            if c >= STATIC_CRD_LIMIT / 100 {
                expensive.push((c, path.to_string(), r.spec.rule.clone()));
            }
        }
    });
    if total > STATIC_CRD_LIMIT {
        expensive.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (_, path, rule) in expensive.iter().take(4) {
            let m = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".to_string();
            out.push(issue(IssueKind::Cost, path, rule, m, None, exact));
        }
        out.push(CrdIssue {
            kind: IssueKind::Cost,
            version: v.version.clone(),
            path: "<root>".into(),
            rule: None,
            message: cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total,
                STATIC_CRD_LIMIT,
            ),
            accepted_from: None,
            exact,
        });
    }
}

/// Every rule with its node's path and, when the node is below a list that is not
/// `x-kubernetes-list-type: map` or an object of `x-kubernetes-map-type: atomic`, the path of the
/// highest such node: there the old object cannot be correlated and `oldSelf` is refused
/// (`withForbidOldSelfValidations`).
fn walk_correlated(s: &Schema, path: &str, within: Option<&str>, f: &mut dyn FnMut(&str, &CompiledRule, Option<&str>)) {
    if !s.has_rules_below {
        return;
    }
    for r in &s.compiled {
        f(if path.is_empty() { "<root>" } else { path }, r, within);
    }
    let here = if path.is_empty() { "<root>" } else { path };
    let props_within = within.or((s.map_type.as_deref() == Some("atomic")).then_some(here));
    for (k, p) in &s.properties {
        walk_correlated(p, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, props_within, f);
    }
    if let Some(i) = &s.items {
        let items_within = within.or((s.list_type.as_deref() != Some("map")).then_some(here));
        walk_correlated(i, &format!("{path}[*]"), items_within, f);
    }
    if let Some(Additional::Schema(a)) = &s.additional {
        walk_correlated(a, &format!("{path}[*]"), within, f);
    }
}

/// Each rule's estimated cost at this server, for reports and the differential.
pub fn rule_costs(v: &Validator) -> Vec<(String, String, cost::RuleCost)> {
    let mut out = Vec::new();
    walk_rules(v.schema(), "", &mut |path, r| out.push((path.to_string(), r.spec.rule.clone(), r.cost)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cost_messages_are_the_servers() {
        assert_eq!(
            cost_message("estimated rule cost", 12_582_912, 10_000_000),
            "estimated rule cost exceeds budget by factor of 1.258291x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        );
        assert!(cost_message("x", 181_000_000, 10_000_000).contains("factor of 18.1x"));
        assert!(cost_message("x", 2_000_000_000, 10_000_000).contains("factor of more than 100x"));
    }

    fn crd(rule: &str, max_items: Option<u64>) -> Value {
        let mut list = json!({"type": "array", "items": {"type": "string", "maxLength": 8}, "x-kubernetes-validations": [{"rule": rule}]});
        if let Some(m) = max_items {
            list["maxItems"] = json!(m);
        }
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
                    "properties": {"spec": {"type": "object", "properties": {"names": list}}}}}}]}})
    }

    #[test]
    fn an_unchanged_reapply_skips_the_per_rule_limit_but_not_the_crd_total() {
        let kube = KubeVersion::new(1, 37);
        // Every pair of an unbounded list of strings: far over the per-rule limit.
        let heavy = crd("self.all(x, self.all(y, x == y || x != y))", None);
        let create = issues(&heavy, &kube, CrdWrite::Create).unwrap();
        assert!(
            create.iter().any(|i| i.kind == IssueKind::Cost && i.message.starts_with("estimated rule cost exceeds budget")),
            "{create:?}"
        );
        let reapply = issues(&heavy, &kube, CrdWrite::Update(&heavy)).unwrap();
        assert!(!reapply.iter().any(|i| i.message.starts_with("estimated rule cost")), "{reapply:?}");
        assert!(reapply.iter().any(|i| i.path == "<root>"), "the CRD total is still held: {reapply:?}");
        let mut edited = heavy.clone();
        edited["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = json!("changed");
        let changed = issues(&edited, &kube, CrdWrite::Update(&heavy)).unwrap();
        assert!(changed.iter().any(|i| i.message.starts_with("estimated rule cost exceeds budget")), "{changed:?}");
        // Bounded, it fits.
        assert!(issues(&crd("self.all(x, self.all(y, x == y || x != y))", Some(10)), &kube, CrdWrite::Create).unwrap().is_empty());
    }

    #[test]
    fn a_stored_rule_compiles_one_minor_earlier_than_a_new_one() {
        let rule = "self.all(x, x.size() > 0) && semver('1.0.0').major() == 1";
        let new = crd(rule, Some(3));
        let v133 = KubeVersion::new(1, 33);
        let create = issues(&new, &v133, CrdWrite::Create).unwrap();
        assert!(create.iter().any(|i| i.kind == IssueKind::Compile), "semver is for new rules from 1.34: {create:?}");
        let stored = crd(rule, Some(3));
        let reapply = issues(&new, &v133, CrdWrite::Update(&stored)).unwrap();
        assert!(!reapply.iter().any(|i| i.kind == IssueKind::Compile), "a 1.33 binary has the semver library: {reapply:?}");
    }
}
