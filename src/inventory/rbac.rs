//! RBAC in a render: the rules of each Role and ClusterRole, and which rules reach a service
//! account through the bindings rendered beside it.

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::{str_at, Object};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
}

impl Rule {
    /// `verb resource.group` pairs, one per combination, for diffs and evidence.
    pub fn grants(&self) -> Vec<String> {
        let mut out = Vec::new();
        for group in if self.api_groups.is_empty() { vec![String::new()] } else { self.api_groups.clone() } {
            for resource in &self.resources {
                for verb in &self.verbs {
                    let target = if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
                    out.push(format!("{verb} {target}"));
                }
            }
        }
        out
    }

    /// Verbs that remove or replace objects.
    pub fn destructive_verbs(&self) -> Vec<&str> {
        self.verbs.iter().map(String::as_str).filter(|v| matches!(*v, "delete" | "deletecollection" | "*")).collect()
    }
}

/// A Role or ClusterRole with its rules.
#[derive(Debug, Clone, Serialize)]
pub struct Role {
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    pub rules: Vec<Rule>,
}

fn strings(v: Option<&Json>) -> Vec<String> {
    v.and_then(Json::as_array).map(|a| a.iter().filter_map(Json::as_str).map(str::to_string).collect()).unwrap_or_default()
}

pub fn roles(objects: &[&Object]) -> Vec<Role> {
    objects
        .iter()
        .filter(|o| matches!(o.identity.kind.as_str(), "Role" | "ClusterRole"))
        .map(|o| Role {
            kind: o.identity.kind.clone(),
            namespace: o.identity.namespace.clone(),
            name: o.identity.name.clone(),
            rules: o
                .body
                .get("rules")
                .and_then(Json::as_array)
                .map(|rules| {
                    rules
                        .iter()
                        .map(|r| Rule {
                            api_groups: strings(r.get("apiGroups")),
                            resources: strings(r.get("resources")),
                            verbs: strings(r.get("verbs")),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// A rule granted to a service account, with the role it comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Grant {
    /// `ClusterRole/name` or `Role/namespace/name`.
    pub role: String,
    pub rule: Rule,
}

/// Rules bound to `namespace/account` by the bindings in `objects`.
pub fn grants_for(objects: &[&Object], roles: &[Role], namespace: &str, account: &str) -> Vec<Grant> {
    let mut out = Vec::new();
    for binding in objects.iter().filter(|o| matches!(o.identity.kind.as_str(), "RoleBinding" | "ClusterRoleBinding")) {
        let binds = binding.body.get("subjects").and_then(Json::as_array).is_some_and(|subjects| {
            subjects.iter().any(|s| {
                let ns = match str_at(s, &["namespace"]) {
                    "" => binding.identity.namespace.as_str(),
                    ns => ns,
                };
                str_at(s, &["kind"]) == "ServiceAccount" && str_at(s, &["name"]) == account && ns == namespace
            })
        });
        if !binds {
            continue;
        }
        let (ref_kind, ref_name) = (str_at(&binding.body, &["roleRef", "kind"]), str_at(&binding.body, &["roleRef", "name"]));
        for role in roles
            .iter()
            .filter(|r| r.kind == ref_kind && r.name == ref_name && (r.kind == "ClusterRole" || r.namespace == binding.identity.namespace))
        {
            let label = if role.kind == "ClusterRole" {
                format!("ClusterRole/{}", role.name)
            } else {
                format!("Role/{}/{}", role.namespace, role.name)
            };
            out.extend(role.rules.iter().map(|rule| Grant { role: label.clone(), rule: rule.clone() }));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `grants` allow `verb` on `resource` of API `group` (`*` matches any group, resource
/// or verb, as the RBAC authorizer reads it).
pub fn allows(grants: &[Grant], group: &str, resource: &str, verb: &str) -> bool {
    let has = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
    grants.iter().any(|g| has(&g.rule.api_groups, group) && has(&g.rule.resources, resource) && has(&g.rule.verbs, verb))
}

/// The namespace and ServiceAccount of the Deployment running Trainer's controller manager image
/// among `objects` (`default` when it names none).
pub fn manager_account(objects: &[&Object]) -> Option<(String, String)> {
    let manager = objects.iter().find(|o| {
        o.identity.kind == "Deployment"
            && o.body
                .pointer("/spec/template/spec/containers")
                .and_then(Json::as_array)
                .is_some_and(|cs| cs.iter().any(|c| str_at(c, &["image"]).contains("trainer-controller-manager")))
    })?;
    let account = match str_at(&manager.body, &["spec", "template", "spec", "serviceAccountName"]) {
        "" => "default",
        a => a,
    };
    Some((manager.identity.namespace.clone(), account.to_string()))
}

/// Whether `grants` let a client list and watch PriorityClasses: what an informer needs, and so
/// what the manager's cached lookup of one needs.
pub fn reads_priority_classes(grants: &[Grant]) -> bool {
    ["list", "watch"].iter().all(|verb| allows(grants, "scheduling.k8s.io", "priorityclasses", verb))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{objects_in, Origin};

    const RENDER: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m, namespace: ns}\nspec:\n  template:\n    spec:\n      serviceAccountName: mgr\n      containers: [{name: manager, image: ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules:\n- {apiGroups: [scheduling.volcano.sh], resources: [podgroups], verbs: [get, list, watch]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}\nsubjects: [{kind: ServiceAccount, name: mgr, namespace: ns}]\n";

    fn reads(extra_rule: &str) -> bool {
        let text = RENDER.replace("verbs: [get, list, watch]}\n", &format!("verbs: [get, list, watch]}}\n{extra_rule}"));
        let objects = objects_in(&text, "t", Origin::Template, "ns");
        let refs: Vec<&Object> = objects.iter().collect();
        let (ns, sa) = manager_account(&refs).unwrap();
        assert_eq!((ns.as_str(), sa.as_str()), ("ns", "mgr"));
        reads_priority_classes(&grants_for(&refs, &roles(&refs), &ns, &sa))
    }

    #[test]
    fn the_manager_reads_priority_classes_only_with_list_and_watch() {
        assert!(!reads(""), "podgroups of Volcano's group are not PriorityClasses");
        assert!(reads("- {apiGroups: [scheduling.k8s.io], resources: [priorityclasses], verbs: [get, list, watch]}\n"));
        assert!(
            !reads("- {apiGroups: [scheduling.k8s.io], resources: [priorityclasses], verbs: [get]}\n"),
            "get alone: the informer cannot list"
        );
        assert!(reads("- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n"));
    }
}
