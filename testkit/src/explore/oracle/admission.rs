//! The API server's admission of what the upgrade creates, in the order kube-apiserver v1.36.1
//! runs it for a Pod: pod defaulting (requests from limits, `pkg/apis/core/v1/defaults.go`
//! `SetDefaults_Pod`), LimitRanger's defaults and its min/max (`plugin/pkg/admission/limitranger/
//! admission.go` L216-L261, L309-L357), Pod Security at the namespace's `enforce` level
//! (`k8s.io/pod-security-admission` v0.36.1 `policy/check_*.go`), then ResourceQuota
//! (`pkg/quota/v1/evaluator/core/pods.go` L129-L170: a Pod without a request or limit for a
//! compute resource the quota tracks is refused, `must specify …`; every counted resource must
//! stay within `hard`). What gets created: the target's objects not in the base manifest, the
//! release record Helm writes as a Secret in the release namespace before it applies anything
//! (Helm v4.2.3 `pkg/action/upgrade.go` `Releases.Create`, `pkg/storage/driver/secrets.go`), a
//! ReplicaSet and a surge Pod per Deployment whose Pod template changes (apps/v1 defaults:
//! RollingUpdate, maxSurge 25% rounded up, `pkg/controller/deployment/rolling.go`), each hook Job
//! and its Pod (hooks run one at a time, after the rollouts for post hooks: Helm waits), and,
//! when a controller before 2.3 is replaced by a 2.3 one, a `<trainjob>-runtime-snapshot`
//! ConfigMap per TrainJob it reconciles in that TrainJob's namespace (Trainer v2.3.0
//! `pkg/controller/trainjob_controller.go` L89-L107 and L246-L252: every TrainJob not managed
//! elsewhere, not Complete and not Failed with reason DeadlineExceeded;
//! `pkg/runtime/core/clustertrainingruntime.go` L59-L76).

use crate::explore::charts::makes_runtime_snapshots;
use std::collections::BTreeMap;

use serde_json::Value as Json;
use trainer_audit::objects::str_at;

use super::situation::{NewPod, Phase};
use super::{Failure, Situation};
use crate::explore::state::{Install, JobState};

/// A quantity in base units (cores, bytes, objects).
pub fn quantity(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let n: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0_f64.powi(4),
        _ => return None,
    };
    Some(n * factor)
}

fn json_quantity(v: &Json) -> Option<f64> {
    match v {
        Json::String(s) => quantity(s),
        Json::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// A container's requests and limits as the API server holds them after pod defaulting and the
/// namespace's LimitRange defaults.
#[derive(Debug, Clone, Default)]
struct Resources {
    requests: BTreeMap<String, f64>,
    limits: BTreeMap<String, f64>,
}

fn containers(spec: &Json) -> Vec<&Json> {
    ["initContainers", "containers"].iter().flat_map(|k| spec[*k].as_array().into_iter().flatten()).collect()
}

fn resources(container: &Json, limit_ranges: &[&Json]) -> Resources {
    let read = |key: &str| -> BTreeMap<String, f64> {
        container["resources"][key]
            .as_object()
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), json_quantity(v)?))).collect())
            .unwrap_or_default()
    };
    let mut r = Resources { requests: read("requests"), limits: read("limits") };
    // SetDefaults_Pod: a limit without a request sets the request.
    for (k, v) in r.limits.clone() {
        r.requests.entry(k).or_insert(v);
    }
    for lr in limit_ranges {
        for item in lr.pointer("/spec/limits").and_then(Json::as_array).into_iter().flatten().filter(|i| i["type"] == "Container") {
            for (field, into_limits) in [("default", true), ("defaultRequest", false)] {
                for (k, v) in item[field].as_object().into_iter().flatten() {
                    let Some(q) = json_quantity(v) else { continue };
                    let map = if into_limits { &mut r.limits } else { &mut r.requests };
                    map.entry(k.clone()).or_insert(q);
                }
            }
        }
    }
    r
}

fn limit_range_refusal(pod: &NewPod, lr: &Json, all: &[&Json]) -> Option<String> {
    for item in lr.pointer("/spec/limits").and_then(Json::as_array).into_iter().flatten().filter(|i| i["type"] == "Container") {
        for c in containers(&pod.spec) {
            let r = resources(c, all);
            let name = str_at(c, &["name"]);
            for (resource, min) in item["min"].as_object().into_iter().flatten() {
                let Some(min) = json_quantity(min) else { continue };
                match r.requests.get(resource) {
                    None => return Some(format!("minimum {resource} usage per Container is {min}.  No request is specified ({name})")),
                    Some(req) if *req < min => {
                        return Some(format!("minimum {resource} usage per Container: request {req} below {min} ({name})"))
                    }
                    _ => {}
                }
            }
            for (resource, max) in item["max"].as_object().into_iter().flatten() {
                let Some(max) = json_quantity(max) else { continue };
                match r.limits.get(resource) {
                    None => return Some(format!("maximum {resource} usage per Container is {max}.  No limit is specified ({name})")),
                    Some(lim) if *lim > max => {
                        return Some(format!("maximum {resource} usage per Container: limit {lim} above {max} ({name})"))
                    }
                    _ => {}
                }
            }
        }
    }
    None
}

/// Pod Security at `level` (`baseline` or `restricted`): the first check the Pod fails.
pub fn pod_security(spec: &Json, level: &str) -> Option<String> {
    let restricted = level == "restricted";
    if level != "baseline" && !restricted {
        return None;
    }
    let pod_sc = &spec["securityContext"];
    for ns in ["hostNetwork", "hostPID", "hostIPC"] {
        if spec[ns] == true {
            return Some(format!("host namespaces ({ns}=true)"));
        }
    }
    let baseline_caps = [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ];
    for v in spec["volumes"].as_array().into_iter().flatten() {
        if v.get("hostPath").is_some() {
            return Some("hostPath volumes".into());
        }
        if restricted {
            let allowed =
                ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"];
            if !v.as_object().is_some_and(|m| m.keys().any(|k| allowed.contains(&k.as_str()))) {
                return Some("restricted volume types".into());
            }
        }
    }
    if pod_sc.pointer("/seccompProfile/type").and_then(Json::as_str) == Some("Unconfined") {
        return Some("seccompProfile Unconfined".into());
    }
    let pod_non_root = pod_sc["runAsNonRoot"] == true;
    let pod_seccomp = matches!(pod_sc.pointer("/seccompProfile/type").and_then(Json::as_str), Some("RuntimeDefault" | "Localhost"));
    if restricted && pod_sc["runAsUser"] == 0 {
        return Some("runAsUser=0".into());
    }
    for c in containers(spec) {
        let sc = &c["securityContext"];
        let name = str_at(c, &["name"]);
        if sc["privileged"] == true {
            return Some(format!("privileged ({name})"));
        }
        if c["ports"].as_array().into_iter().flatten().any(|p| p["hostPort"].as_i64().is_some_and(|h| h != 0)) {
            return Some(format!("hostPort ({name})"));
        }
        let added: Vec<&str> =
            sc.pointer("/capabilities/add").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).collect();
        if let Some(cap) = added.iter().find(|c| !baseline_caps.contains(c)) {
            return Some(format!("non-default capabilities ({name}: {cap})"));
        }
        if sc.pointer("/seccompProfile/type").and_then(Json::as_str) == Some("Unconfined") {
            return Some(format!("seccompProfile Unconfined ({name})"));
        }
        if !restricted {
            continue;
        }
        if sc["allowPrivilegeEscalation"] != false {
            return Some(format!(
                "allowPrivilegeEscalation != false (container \"{name}\" must set securityContext.allowPrivilegeEscalation=false)"
            ));
        }
        let non_root = match sc["runAsNonRoot"].as_bool() {
            Some(v) => v,
            None => pod_non_root,
        };
        if !non_root {
            return Some(format!("runAsNonRoot != true (pod or container \"{name}\" must set securityContext.runAsNonRoot=true)"));
        }
        if sc["runAsUser"] == 0 {
            return Some(format!("runAsUser=0 ({name})"));
        }
        let seccomp = match sc.pointer("/seccompProfile/type").and_then(Json::as_str) {
            Some(t) => matches!(t, "RuntimeDefault" | "Localhost"),
            None => pod_seccomp,
        };
        if !seccomp {
            return Some(format!("seccompProfile (pod or container \"{name}\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"));
        }
        let drops_all = sc.pointer("/capabilities/drop").and_then(Json::as_array).into_iter().flatten().any(|d| d == "ALL");
        if !drops_all {
            return Some(format!("unrestricted capabilities (container \"{name}\" must set securityContext.capabilities.drop=[\"ALL\"])"));
        }
        if added.iter().any(|c| *c != "NET_BIND_SERVICE") {
            return Some(format!("unrestricted capabilities ({name})"));
        }
    }
    None
}

/// Object-count quota keys and the kind each counts.
fn counted_kind(resource: &str) -> Option<&'static str> {
    Some(match resource {
        "count/configmaps" | "configmaps" => "ConfigMap",
        "count/secrets" | "secrets" => "Secret",
        "count/services" | "services" => "Service",
        "count/serviceaccounts" => "ServiceAccount",
        "count/jobs.batch" => "Job",
        "count/deployments.apps" => "Deployment",
        "count/replicasets.apps" => "ReplicaSet",
        "count/roles.rbac.authorization.k8s.io" => "Role",
        "count/rolebindings.rbac.authorization.k8s.io" => "RoleBinding",
        "pods" | "count/pods" => "Pod",
        _ => return None,
    })
}

/// What one namespace must hold while the upgrade runs: objects by kind, and the peak of each
/// compute resource over the phases (the surge Pods side by side, then one hook Pod at a time).
fn demand(s: &Situation, ns: &str, pods: &[NewPod], limit_ranges: &[&Json]) -> BTreeMap<String, f64> {
    let mut need: BTreeMap<String, f64> = BTreeMap::new();
    let mut add = |k: &str, n: f64| *need.entry(k.to_string()).or_default() += n;
    if ns == s.state.namespace {
        // Objects it creates; an install over objects another tool applied updates those.
        for o in s.created().into_iter().filter(|o| !s.live.contains_key(&super::situation::key(o))) {
            add(str_at(o, &["kind"]), 1.0);
        }
        if matches!(s.state.install, Install::Helm(_)) || s.command.is_some() {
            // The new revision's record (Helm's default storage driver: Secrets).
            add("Secret", 1.0);
        }
        for p in pods {
            match p.phase {
                Phase::Rollout => add("ReplicaSet", 1.0),
                Phase::PreHook | Phase::PostHook => add("Job", 1.0),
            }
        }
        // Pods and their compute resources: the peak of the phases.
        let mut peak: BTreeMap<String, f64> = BTreeMap::new();
        let rollout: Vec<&NewPod> = pods.iter().filter(|p| p.phase == Phase::Rollout).collect();
        let mut phases: Vec<Vec<&NewPod>> = vec![rollout];
        phases.extend(pods.iter().filter(|p| p.phase != Phase::Rollout).map(|p| vec![p]));
        for phase in phases {
            let mut sum: BTreeMap<String, f64> = BTreeMap::new();
            *sum.entry("Pod".into()).or_default() += phase.len() as f64;
            for p in phase {
                for c in containers(&p.spec) {
                    let r = resources(c, limit_ranges);
                    for (k, v) in &r.requests {
                        *sum.entry(format!("requests.{k}")).or_default() += v;
                    }
                    for (k, v) in &r.limits {
                        *sum.entry(format!("limits.{k}")).or_default() += v;
                    }
                }
            }
            for (k, v) in sum {
                let e = peak.entry(k).or_default();
                *e = e.max(v);
            }
        }
        for (k, v) in peak {
            add(&k, v);
        }
    }
    // The runtime snapshots, when a controller that makes them replaces one that does not.
    let makes = |v: Option<&str>| v.and_then(|v| semver::Version::parse(v).ok()).map(makes_runtime_snapshots);
    let (before, after) = (makes(s.from_version().or(s.built.running.as_deref())), makes(s.target_version.as_deref()));
    if before == Some(false) && after == Some(true) {
        let snapshots = s
            .built
            .trainjobs
            .iter()
            .filter(|t| t.namespace == ns && t.managed_by.is_none())
            .filter(|t| !matches!(&t.state, JobState::Complete) && !matches!(&t.state, JobState::Failed(r) if r == "DeadlineExceeded"))
            .count();
        add("ConfigMap", snapshots as f64);
    }
    need
}

pub fn failures(s: &Situation) -> Vec<Failure> {
    if !s.upgrade_runs || s.target.is_none() {
        return Vec::new();
    }
    let pods = s.new_pods();
    let mut out = Vec::new();
    let in_ns = |kind: &str, ns: &str| -> Vec<&Json> {
        s.live.values().copied().filter(|o| o["kind"] == kind && str_at(o, &["metadata", "namespace"]) == ns).collect()
    };
    let release_ns = s.state.namespace.as_str();
    let limit_ranges = in_ns("LimitRange", release_ns);
    // LimitRange: every new Pod of the release namespace.
    for lr in &limit_ranges {
        for p in &pods {
            if let Some(why) = limit_range_refusal(p, lr, &limit_ranges) {
                let name = format!("LimitRange/{release_ns}/{}", str_at(lr, &["metadata", "name"]));
                out.push(Failure {
                    class: "limitrange",
                    area: "world §3",
                    what: format!("{name} refuses the Pod of {}: {why}", p.owner),
                    named_by: vec![name, format!("LimitRange {}", str_at(lr, &["metadata", "name"]))],
                });
                break;
            }
        }
    }
    // Pod Security at the release namespace's enforce level.
    let level = s.state.psa.as_deref().unwrap_or("privileged");
    for p in &pods {
        if let Some(why) = pod_security(&p.spec, level) {
            out.push(Failure {
                class: "pod-security",
                area: "other",
                what: format!("the Pod of {} violates PodSecurity \"{level}:latest\": {why}", p.owner),
                named_by: vec![p.owner_ref.clone()],
            });
        }
    }
    // ResourceQuota in every namespace the upgrade writes into.
    for quota in s.live.values().filter(|o| o["kind"] == "ResourceQuota") {
        let ns = str_at(quota, &["metadata", "namespace"]);
        let ns_pods: Vec<NewPod> = if ns == release_ns { pods.clone() } else { Vec::new() };
        let ranges = in_ns("LimitRange", ns);
        let need = demand(s, ns, &ns_pods, &ranges);
        let name = format!("ResourceQuota/{ns}/{}", str_at(quota, &["metadata", "name"]));
        let named_by = vec![name.clone(), format!("ResourceQuota {ns}/{}", str_at(quota, &["metadata", "name"]))];
        for (resource, hard) in quota.pointer("/spec/hard").and_then(Json::as_object).into_iter().flatten() {
            let Some(hard) = json_quantity(hard) else { continue };
            let used = quota.pointer("/status/used").and_then(|u| u.get(resource)).and_then(json_quantity).unwrap_or(0.0);
            // `cpu`/`memory` are `requests.*`.
            let compute = match resource.as_str() {
                "cpu" | "memory" => Some(format!("requests.{resource}")),
                r if r.starts_with("requests.") || r.starts_with("limits.") => Some(r.to_string()),
                _ => None,
            };
            if let Some(compute) = &compute {
                let short = compute.split_once('.').map(|(_, r)| r).unwrap_or_default();
                let missing = ns_pods.iter().find(|p| {
                    containers(&p.spec).iter().any(|c| {
                        let r = resources(c, &ranges);
                        if compute.starts_with("limits.") {
                            !r.limits.contains_key(short)
                        } else {
                            !r.requests.contains_key(short)
                        }
                    })
                });
                if let Some(p) = missing {
                    out.push(Failure {
                        class: "quota",
                        area: "world §3",
                        what: format!(
                            "{name} tracks {resource}: the Pod of {} sets none, so the API server refuses it (must specify {compute})",
                            p.owner
                        ),
                        named_by: named_by.clone(),
                    });
                    continue;
                }
            }
            let wanted = match (&compute, counted_kind(resource)) {
                (Some(c), _) => need.get(c).copied().unwrap_or(0.0),
                (None, Some(kind)) => need.get(kind).copied().unwrap_or(0.0),
                _ => continue,
            };
            if wanted > 0.0 && used + wanted > hard + 1e-9 {
                out.push(Failure {
                    class: "quota",
                    area: "world §3",
                    what: format!("{name}: {resource} used {used} of {hard}, and the upgrade needs {wanted} more (exceeded quota)"),
                    named_by: named_by.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_2_3_pre_releases_make_runtime_snapshots_as_2_3_does() {
        let v = |t: &str| semver::Version::parse(t).unwrap();
        for (version, want) in
            [("2.2.1", false), ("2.2.0-rc.1", false), ("2.3.0-rc.0", true), ("2.3.0-rc.3", true), ("2.3.0", true), ("2.4.0", true)]
        {
            assert_eq!(makes_runtime_snapshots(v(version)), want, "{version}");
        }
    }

    #[test]
    fn quantities_read_as_the_api_server_reads_them() {
        assert_eq!(quantity("500m"), Some(0.5));
        assert_eq!(quantity("2"), Some(2.0));
        assert_eq!(quantity("128Mi"), Some(134217728.0));
        assert_eq!(quantity("1G"), Some(1e9));
        assert_eq!(quantity("x"), None);
    }

    #[test]
    fn pod_security_restricted_refuses_a_pod_without_a_security_context() {
        let bare = json!({"containers": [{"name": "apply-runtimes", "image": "alpine"}]});
        assert!(pod_security(&bare, "restricted").unwrap().contains("allowPrivilegeEscalation"));
        assert_eq!(pod_security(&bare, "baseline"), None);
        let good = json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "m", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]});
        assert_eq!(pod_security(&good, "restricted"), None);
        let host = json!({"hostNetwork": true, "containers": []});
        assert!(pod_security(&host, "baseline").is_some());
    }
}
