//! What the audit reads, three ways and with least privilege: `status` and `check` live, from a
//! `trainer-audit snapshot` read back, and from a `kubectl get … -o yaml` snapshot whose type
//! list is built from the ClusterRole `trainer-audit rbac` prints (that role is the catalog of
//! what the tool reads); then `check` as a ServiceAccount bound to exactly that role (no 403
//! warning), and with each rule of the role removed in turn (the warning names exactly the
//! permissions of that rule).

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::lab::{Lab, NAMESPACE};
use crate::printed;

/// The objects `trainer-audit rbac` prints (as JSON, through kubectl's client-side parse).
pub fn rbac(lab: &Lab) -> (String, Vec<Json>) {
    let printed = lab.audit_offline(&["rbac"]);
    assert!(printed.ok(), "{printed}");
    let parsed = lab.shell_ok(&format!("kubectl create --dry-run=client -o json -f - <<'EOF'\n{}EOF", printed.stdout));
    // One JSON object per document, one after another.
    let items = serde_json::Deserializer::from_str(&parsed.stdout).into_iter::<Json>().collect::<Result<Vec<_>, _>>().unwrap();
    (printed.stdout, items)
}

pub fn role(items: &[Json]) -> Json {
    items.iter().find(|i| i["kind"] == "ClusterRole").cloned().expect("rbac prints a ClusterRole")
}

/// `plural.group` (or `plural` for the core group) of every resource a rule grants.
pub fn resources(rule: &Json) -> Vec<String> {
    let groups: Vec<&str> = rule["apiGroups"].as_array().into_iter().flatten().filter_map(|g| g.as_str()).collect();
    let plurals: Vec<&str> = rule["resources"].as_array().into_iter().flatten().filter_map(|r| r.as_str()).collect();
    groups.iter().flat_map(|g| plurals.iter().map(move |p| if g.is_empty() { p.to_string() } else { format!("{p}.{g}") })).collect()
}

/// The resource types this API server serves (`kubectl api-resources -o name`).
pub fn served(lab: &Lab) -> BTreeSet<String> {
    lab.shell_ok("kubectl api-resources -o name").stdout.lines().map(String::from).collect()
}

/// The permissions the read warnings name: `forbidden: cannot list deployments.apps …`.
pub fn named(warnings: &[String]) -> BTreeSet<String> {
    warnings
        .iter()
        .filter_map(|w| w.strip_prefix("forbidden: cannot list "))
        .filter_map(|rest| rest.split([' ', '(']).next())
        .map(String::from)
        .collect()
}

pub fn warnings(check: &printed::Check) -> Vec<String> {
    check.report["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str().map(String::from)).collect()
}

/// A read as the ServiceAccount, repeated briefly until `until` holds (an RBAC change reaches
/// the authorizer's cache within a moment).
pub fn check_as(lab: &Lab, kubeconfig: &std::path::Path, to: &str, until: &dyn Fn(&printed::Check) -> bool) -> printed::Check {
    let mut last = None;
    for _ in 0..20 {
        let c = printed::check_with(lab, kubeconfig, to);
        if until(&c) {
            return c;
        }
        last = Some(c);
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    last.unwrap()
}

/// `kubectl apply` of a ClusterRole holding `rules`.
pub fn apply_role(lab: &Lab, role: &Json, rules: Vec<Json>) {
    let mut role = role.clone();
    role["rules"] = Json::Array(rules);
    lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{role}\nEOF"));
}

/// The namespace the ServiceAccount of `trainer-audit rbac` lives in by default.
pub const SA_NAMESPACE: &str = NAMESPACE;
