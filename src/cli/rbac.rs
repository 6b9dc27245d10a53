//! `trainer-audit rbac`: the least-privilege ClusterRole and binding the tool needs (get and
//! list on exactly what it reads).

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Args;

use super::CliError;
use crate::cluster::catalog::RESOURCES;

#[derive(Debug, Args)]
pub struct RbacArgs {
    /// ServiceAccount the binding names
    #[arg(long, default_value = "trainer-audit")]
    pub service_account: String,
    /// Namespace of that ServiceAccount
    #[arg(long, short = 'n', default_value = "kubeflow-system")]
    pub namespace: String,
}

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

pub fn run(args: RbacArgs) -> Result<ExitCode, CliError> {
    print!("{}", manifest(&args.service_account, &args.namespace));
    Ok(ExitCode::SUCCESS)
}
