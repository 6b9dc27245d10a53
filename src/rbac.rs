//! The least-privilege RBAC trainer-audit needs to read a cluster: a ServiceAccount, a
//! ClusterRole with get and list on exactly the resources the cluster reader reads (from its
//! catalog, so the two cannot drift), and the binding.

use std::collections::BTreeMap;

use crate::cluster::catalog::RESOURCES;

/// The ServiceAccount, ClusterRole and ClusterRoleBinding as one YAML stream.
pub fn manifest(service_account: &str, namespace: &str) -> String {
    let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in RESOURCES {
        let plurals = by_group.entry(r.group).or_default();
        if !plurals.contains(&r.plural) {
            plurals.push(r.plural);
        }
    }
    let mut rules = String::new();
    for (group, plurals) in by_group {
        rules.push_str(&format!("  - apiGroups: [\"{group}\"]\n    resources: [{}]\n    verbs: [get, list]\n", plurals.join(", ")));
    }
    format!(
        "# Read-only access for trainer-audit: get and list on what it reads, nothing else.\n\
# Secrets are needed for Helm release records (label owner=helm) only; Kubernetes RBAC cannot\n\
# narrow list by label, so bind a Role per release namespace instead if that is too broad.\n\
apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {service_account}\n  namespace: {namespace}\n---\n\
apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: trainer-audit-reader\nrules:\n{rules}---\n\
apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: trainer-audit-reader\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: trainer-audit-reader\nsubjects:\n  - kind: ServiceAccount\n    name: {service_account}\n    namespace: {namespace}\n"
    )
}
