//! Helm hooks with what a reviewer needs: when Helm runs them (events, weight, delete
//! policies), what they run (containers, images, commands), as whom (service account and the
//! RBAC rules bound to it in the same render), and how they are bounded (securityContext,
//! backoffLimit, activeDeadlineSeconds).

use serde::Serialize;
use serde_json::Value as Json;

use super::rbac::{grants_for, Grant, Role};
use crate::objects::workload::{containers, pod_spec, Container};
use crate::objects::{str_at, Identity, Object};
use helm_render::manifest::Hook;

#[derive(Debug, Clone, Serialize)]
pub struct HookInfo {
    pub identity: Identity,
    pub source: String,
    pub events: Vec<String>,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub containers: Vec<Container>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub service_account: String,
    pub grants: Vec<Grant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_security_context: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// ConfigMaps mounted as volumes (the installer reads its runtimes from one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_maps: Vec<String>,
    /// The hook object as rendered (what a namespace's quota and LimitRanges admit).
    #[serde(skip)]
    pub body: Json,
}

impl HookInfo {
    pub fn build(hook: &Hook, object: &Object, release_objects: &[&Object], roles: &[Role]) -> HookInfo {
        let kind = object.identity.kind.as_str();
        let spec = pod_spec(kind, &object.body);
        let service_account = spec
            .map(|s| match str_at(s, &["serviceAccountName"]) {
                "" => str_at(s, &["serviceAccount"]),
                name => name,
            })
            .unwrap_or("")
            .to_string();
        let account_for_grants = if service_account.is_empty() && spec.is_some() { "default" } else { service_account.as_str() };
        let grants = if account_for_grants.is_empty() {
            Vec::new()
        } else {
            grants_for(release_objects, roles, &object.identity.namespace, account_for_grants)
        };
        let job_spec = match kind {
            "Job" => object.body.get("spec"),
            "CronJob" => object.body.pointer("/spec/jobTemplate/spec"),
            _ => None,
        };
        let int = |v: Option<&Json>, key: &str| v.and_then(|s| s.get(key)).and_then(Json::as_i64);
        let config_maps = spec
            .and_then(|s| s.get("volumes"))
            .and_then(Json::as_array)
            .map(|vols| vols.iter().filter_map(|v| v.pointer("/configMap/name").and_then(Json::as_str)).map(str::to_string).collect())
            .unwrap_or_default();
        HookInfo {
            identity: object.identity.clone(),
            source: hook.path.clone(),
            events: hook.events.clone(),
            weight: hook.weight,
            delete_policies: hook.delete_policies.clone(),
            containers: containers(&object.body),
            service_account,
            grants,
            pod_security_context: spec.and_then(|s| s.get("securityContext")).filter(|s| !s.is_null()).cloned(),
            backoff_limit: int(job_spec, "backoffLimit"),
            active_deadline_seconds: int(job_spec, "activeDeadlineSeconds").or(int(spec, "activeDeadlineSeconds")),
            config_maps,
            body: object.body.clone(),
        }
    }

    /// Whether the pod declares it runs as non-root (pod or every container).
    pub fn runs_as_non_root(&self) -> bool {
        let pod = self.pod_security_context.as_ref().and_then(|s| s.get("runAsNonRoot")).and_then(Json::as_bool).unwrap_or(false);
        let uid = self.pod_security_context.as_ref().and_then(|s| s.get("runAsUser")).and_then(Json::as_i64).is_some_and(|u| u > 0);
        pod || uid
            || (!self.containers.is_empty()
                && self.containers.iter().all(|c| {
                    c.security_context.as_ref().is_some_and(|s| {
                        s.get("runAsNonRoot").and_then(Json::as_bool).unwrap_or(false)
                            || s.get("runAsUser").and_then(Json::as_i64).is_some_and(|u| u > 0)
                    })
                }))
    }

    pub fn has_security_context(&self) -> bool {
        self.pod_security_context.is_some() || self.containers.iter().any(|c| c.security_context.is_some())
    }

    /// Each container's command line (command then args, space-joined; shell scripts keep
    /// their own lines), one container per line. An image whose entrypoint is kubectl gets
    /// `kubectl` in front of bare args, so `args: [delete, …]` reads as the command it is.
    pub fn script(&self) -> String {
        self.containers
            .iter()
            .map(|c| {
                let mut argv: Vec<String> = c.command.iter().chain(c.args.iter()).cloned().collect();
                let repository = crate::objects::workload::ImageRef::parse(&c.image).repository;
                if c.command.is_empty() && repository.rsplit('/').next().is_some_and(|n| n.contains("kubectl")) {
                    argv.insert(0, "kubectl".into());
                }
                // A shell's `-c` script starts on a line of its own, so its first line reads as
                // one (`for … in $(kubectl get …)` there is a loop like any other).
                match argv.iter().position(|a| a == "-c") {
                    Some(i) if i + 1 < argv.len() => format!("{}\n{}", argv[..=i].join(" "), argv[i + 1..].join(" ")),
                    _ => argv.join(" "),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Identity;

    fn hook(command: &[&str], args: &[&str]) -> HookInfo {
        HookInfo {
            identity: Identity { group: "batch".into(), kind: "Job".into(), namespace: "ns".into(), name: "h".into() },
            source: String::new(),
            events: vec!["post-upgrade".into()],
            weight: 0,
            delete_policies: Vec::new(),
            containers: vec![Container {
                name: "c".into(),
                image: "alpine:3.21".into(),
                command: command.iter().map(|s| s.to_string()).collect(),
                args: args.iter().map(|s| s.to_string()).collect(),
                security_context: None,
            }],
            service_account: String::new(),
            grants: Vec::new(),
            pod_security_context: None,
            backoff_limit: None,
            active_deadline_seconds: None,
            config_maps: Vec::new(),
            body: Json::Null,
        }
    }

    /// A shell's `-c` script starts on a line of its own, so its first line is read like the rest
    /// (a `for … in $(kubectl get …)` loop there is a loop); a plain command stays one line.
    #[test]
    fn a_shell_script_starts_on_its_own_line() {
        let script = hook(&["/bin/sh", "-c", "for r in $(kubectl get x -o name); do\n  kubectl delete $r\ndone"], &[]).script();
        assert_eq!(script.lines().next(), Some("/bin/sh -c"));
        assert_eq!(script.lines().nth(1), Some("for r in $(kubectl get x -o name); do"));
        assert_eq!(hook(&["/bin/sh"], &["-c", "set -e"]).script(), "/bin/sh -c\nset -e");
        assert_eq!(hook(&["kubectl", "delete", "x"], &[]).script(), "kubectl delete x");
    }
}
