//! The Pod Security Standards as the API server's PodSecurity admission enforces them
//! (`k8s.io/pod-security-admission` v0.36.1, kubernetes v1.36.1
//! `staging/src/k8s.io/pod-security-admission`): the namespace's policy from its labels
//! (`api/helpers.go` `PolicyToEvaluate`: `enforce` defaults to privileged, a level it cannot
//! parse is `restricted`, the version is `latest` unless `enforce-version` says `v1.x`), and
//! the `baseline` and `restricted` checks (`policy/check_*.go`), each from the version it
//! applies at. The one place trainer-audit decides whether a Pod (template) is admitted.

use serde_json::Value as Json;

use super::hook_security_context::PodSecurityLevel;

pub const ENFORCE: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION: &str = "pod-security.kubernetes.io/enforce-version";

/// A namespace's enforced policy: its level and the policy version (None: `latest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforced {
    pub level: PodSecurityLevel,
    /// The minor of `v1.x`; None for `latest` (or a version label it cannot parse).
    pub minor: Option<u32>,
    /// The labels as written (`restricted`, `restricted:v1.24`), for messages.
    pub shown: String,
    /// The `enforce` label as written ("" when unset).
    pub label: String,
}

impl Enforced {
    /// The enforced policy of a Namespace object; None when it admits everything (no label,
    /// or `privileged`).
    pub fn of(namespace: &Json) -> Option<Enforced> {
        let labels = namespace.pointer("/metadata/labels");
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Json::as_str);
        let written = label(ENFORCE)?;
        let level = match written {
            "privileged" => return None,
            "baseline" => PodSecurityLevel::Baseline,
            // `ParseLevel`: anything else is evaluated as restricted.
            _ => PodSecurityLevel::Restricted,
        };
        let version = label(ENFORCE_VERSION).unwrap_or("latest");
        let minor = minor_of(version);
        Some(Enforced {
            level,
            minor,
            shown: format!("{}:{}", level.as_str(), if minor.is_some() { version } else { "latest" }),
            label: written.to_string(),
        })
    }

    /// Whether a check that applies from `v1.<minor>` applies under this policy.
    fn from(&self, minor: u32) -> bool {
        self.minor.is_none_or(|m| m >= minor)
    }

    fn restricted(&self) -> bool {
        self.level == PodSecurityLevel::Restricted
    }
}

/// The minor of a policy version `v1.x` as `ParseVersion` reads it (`api/helpers.go`
/// L118-L135: `^v1\.([0-9]|[1-9][0-9]*)$`); None for `latest`, and for anything else, which the
/// API server evaluates as `latest` too.
fn minor_of(version: &str) -> Option<u32> {
    let digits = version.strip_prefix("v1.")?;
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    plain.then(|| digits.parse().ok()).flatten()
}

/// One failed check: its reason as the API server words it and the field to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `allowPrivilegeEscalation != false`.
    pub reason: &'static str,
    /// `container "manager" must set securityContext.allowPrivilegeEscalation=false`.
    pub detail: String,
    /// One of `restricted`'s own checks (`baseline` admits it).
    pub restricted: bool,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.detail)
    }
}

/// Every container of a Pod spec: init, regular and ephemeral (`policy/visitor.go`).
fn containers(spec: &Json) -> Vec<&Json> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| spec.get(*k).and_then(Json::as_array).into_iter().flatten())
        .collect()
}

fn name(c: &Json) -> &str {
    c.get("name").and_then(Json::as_str).unwrap_or("")
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}

fn strings(v: Option<&Json>) -> Vec<&str> {
    v.and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).collect()
}

/// The capabilities `baseline` admits in `capabilities.add` (`check_capabilities_baseline.go`).
const BASELINE_CAPABILITIES: &[&str] = &[
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

/// The volume sources `restricted` admits (`check_restrictedVolumes.go`).
const RESTRICTED_VOLUMES: &[&str] =
    &["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"];

/// The safe sysctls `baseline` admits (`check_sysctls.go`, as of v1.32).
const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

/// The checks a Pod spec fails under `policy` (empty: admitted), in the API server's order of
/// reasons (baseline's, then restricted's).
pub fn violations(spec: &Json, policy: &Enforced) -> Vec<Violation> {
    let mut out = Vec::new();
    let pod_sc = spec.get("securityContext").cloned().unwrap_or(Json::Null);
    let all = containers(spec);
    let sc = |c: &Json| c.get("securityContext").cloned().unwrap_or(Json::Null);
    let mut restricted = false;
    macro_rules! push {
        ($reason:expr, $detail:expr $(,)?) => {
            out.push(Violation { reason: $reason, detail: $detail, restricted })
        };
    }
    // baseline
    let host: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|k| spec.get(**k) == Some(&Json::Bool(true)))
        .map(|k| format!("{k}=true"))
        .collect();
    if !host.is_empty() {
        push!("host namespaces", host.join(", "));
    }
    let privileged: Vec<&str> = all.iter().filter(|c| sc(c)["privileged"] == true).map(|c| name(c)).collect();
    if !privileged.is_empty() {
        push!("privileged", format!("containers {} must not set securityContext.privileged=true", quoted(&privileged)));
    }
    let added: Vec<String> = all
        .iter()
        .flat_map(|c| strings(sc(c).pointer("/capabilities/add")).into_iter().map(str::to_string).collect::<Vec<_>>())
        .filter(|cap| !BASELINE_CAPABILITIES.contains(&cap.as_str()))
        .collect();
    if !added.is_empty() {
        push!(
            "non-default capabilities",
            format!(
                "containers must not include {} in securityContext.capabilities.add",
                quoted(&added.iter().map(String::as_str).collect::<Vec<_>>())
            )
        );
    }
    let volumes: Vec<&Json> = spec.get("volumes").and_then(Json::as_array).into_iter().flatten().collect();
    let host_paths: Vec<&str> = volumes.iter().filter(|v| v.get("hostPath").is_some()).map(|v| name(v)).collect();
    if !host_paths.is_empty() {
        push!("hostPath volumes", format!("volumes {}", quoted(&host_paths)));
    }
    // A Pod on the host's network gets each port of its (init) containers as a host port when it
    // is created (k8s v1.36.1 `pkg/apis/core/v1/defaults.go` L206-L208 `defaultHostNetworkPorts`,
    // for Pods only, not their templates): what its controller creates is checked with them.
    let host_network = spec.get("hostNetwork") == Some(&Json::Bool(true));
    let (mut using, mut ports) = (Vec::new(), std::collections::BTreeSet::new());
    for (kind, c) in ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| spec.get(*k).and_then(Json::as_array).into_iter().flatten().map(move |c| (*k, c)))
    {
        let defaulted = host_network && kind != "ephemeralContainers";
        let used: Vec<i64> = c
            .get("ports")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| match p.get("hostPort").and_then(Json::as_i64).unwrap_or(0) {
                0 if defaulted => p.get("containerPort").and_then(Json::as_i64),
                h => Some(h),
            })
            .filter(|h| *h != 0)
            .collect();
        if !used.is_empty() {
            using.push(name(c));
            // `sets.NewString(…).List()`: sorted as text.
            ports.extend(used.iter().map(i64::to_string));
        }
    }
    if !using.is_empty() {
        let ports: Vec<String> = ports.into_iter().collect();
        let (one, many) = (using.len() == 1, ports.len() == 1);
        push!(
            "hostPort",
            format!(
                "{} {} {} {} {}",
                if one { "container" } else { "containers" },
                quoted(&using),
                if one { "uses" } else { "use" },
                if many { "hostPort" } else { "hostPorts" },
                ports.join(", ")
            )
        );
    }
    let seccomp = |v: &Json| v.pointer("/seccompProfile/type").and_then(Json::as_str).map(str::to_string);
    if seccomp(&pod_sc).as_deref() == Some("Unconfined") || all.iter().any(|c| seccomp(&sc(c)).as_deref() == Some("Unconfined")) {
        push!("seccompProfile", "pod or containers must not set securityContext.seccompProfile.type to \"Unconfined\"".into());
    }
    let apparmor = |v: &Json| v.pointer("/appArmorProfile/type").and_then(Json::as_str) == Some("Unconfined");
    if apparmor(&pod_sc) || all.iter().any(|c| apparmor(&sc(c))) {
        push!("forbidden AppArmor profile", "pod or containers must not set appArmorProfile.type to \"Unconfined\"".into());
    }
    let selinux_bad = |v: &Json| {
        let o = v.get("seLinuxOptions");
        let t = o.and_then(|o| o.get("type")).and_then(Json::as_str).unwrap_or("");
        let user_role = ["user", "role"].iter().any(|k| o.and_then(|o| o.get(*k)).and_then(Json::as_str).is_some_and(|s| !s.is_empty()));
        let types: &[&str] = if policy.from(31) {
            &["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]
        } else {
            &["", "container_t", "container_init_t", "container_kvm_t"]
        };
        user_role || !types.contains(&t)
    };
    if selinux_bad(&pod_sc) || all.iter().any(|c| selinux_bad(&sc(c))) {
        push!("seLinuxOptions", "pod or containers set a forbidden securityContext.seLinuxOptions type, user or role".into());
    }
    if all.iter().any(|c| sc(c).get("procMount").and_then(Json::as_str).is_some_and(|p| p != "Default")) {
        push!("procMount", "containers must not set securityContext.procMount to \"Unmasked\"".into());
    }
    let sysctls: Vec<&str> = pod_sc
        .get("sysctls")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("name").and_then(Json::as_str))
        .filter(|s| !SAFE_SYSCTLS.contains(s))
        .collect();
    if !sysctls.is_empty() {
        push!("forbidden sysctls", sysctls.join(", "));
    }
    if policy.from(34) {
        let host_probe = |c: &Json| {
            ["livenessProbe", "readinessProbe", "startupProbe"]
                .iter()
                .filter_map(|p| c.get(*p))
                .chain(["postStart", "preStop"].iter().filter_map(|h| c.pointer(&format!("/lifecycle/{h}"))))
                .any(|h| {
                    ["httpGet", "tcpSocket"]
                        .iter()
                        .any(|k| h.pointer(&format!("/{k}/host")).and_then(Json::as_str).is_some_and(|s| !s.is_empty()))
                })
        };
        let probing: Vec<&str> = all.iter().filter(|c| host_probe(c)).map(|c| name(c)).collect();
        if !probing.is_empty() {
            push!("probe or lifecycle host", format!("containers {} must not set .host in probes or lifecycle handlers", quoted(&probing)));
        }
    }
    if !policy.restricted() {
        return out;
    }
    // restricted
    restricted = true;
    let windows = policy.from(25) && spec.pointer("/os/name").and_then(Json::as_str) == Some("windows");
    let user_namespace = policy.from(35) && spec.get("hostUsers") == Some(&Json::Bool(false));
    let bad_volumes: Vec<&str> = volumes
        .iter()
        .filter(|v| !v.as_object().is_some_and(|m| m.keys().any(|k| RESTRICTED_VOLUMES.contains(&k.as_str()))))
        .map(|v| name(v))
        .collect();
    if !bad_volumes.is_empty() {
        push!(
            "restricted volume types",
            format!(
                "volumes {} must use only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected or secret",
                quoted(&bad_volumes)
            )
        );
    }
    if policy.from(8) && !windows {
        let escalating: Vec<&str> = all.iter().filter(|c| sc(c)["allowPrivilegeEscalation"] != false).map(|c| name(c)).collect();
        if !escalating.is_empty() {
            push!(
                "allowPrivilegeEscalation != false",
                format!("{} {} must set securityContext.allowPrivilegeEscalation=false", plural(&escalating), quoted(&escalating)),
            );
        }
    }
    if policy.from(22) && !windows {
        let no_drop: Vec<&str> =
            all.iter().filter(|c| !strings(sc(c).pointer("/capabilities/drop")).contains(&"ALL")).map(|c| name(c)).collect();
        let adds: Vec<&str> = all
            .iter()
            .filter(|c| strings(sc(c).pointer("/capabilities/add")).iter().any(|a| *a != "NET_BIND_SERVICE"))
            .map(|c| name(c))
            .collect();
        let mut parts = Vec::new();
        if !no_drop.is_empty() {
            parts.push(format!("{} {} must set securityContext.capabilities.drop=[\"ALL\"]", plural(&no_drop), quoted(&no_drop)));
        }
        if !adds.is_empty() {
            parts.push(format!(
                "{} {} must not include capabilities other than \"NET_BIND_SERVICE\" in securityContext.capabilities.add",
                plural(&adds),
                quoted(&adds)
            ));
        }
        if !parts.is_empty() {
            push!("unrestricted capabilities", parts.join("; "));
        }
    }
    if !user_namespace {
        let pod_non_root = pod_sc.get("runAsNonRoot").and_then(Json::as_bool);
        let explicit: Vec<&str> = all.iter().filter(|c| sc(c)["runAsNonRoot"] == false).map(|c| name(c)).collect();
        let implicit: Vec<&str> =
            all.iter().filter(|c| sc(c).get("runAsNonRoot").is_none() && pod_non_root != Some(true)).map(|c| name(c)).collect();
        if pod_non_root == Some(false) || !explicit.is_empty() {
            push!("runAsNonRoot != true", "pod or containers must not set securityContext.runAsNonRoot=false".into());
        } else if !implicit.is_empty() {
            push!(
                "runAsNonRoot != true",
                format!("pod or {} {} must set securityContext.runAsNonRoot=true", plural(&implicit), quoted(&implicit)),
            );
        }
        if policy.from(23) && (pod_sc["runAsUser"] == 0 || all.iter().any(|c| sc(c)["runAsUser"] == 0)) {
            push!("runAsUser=0", "pod or containers must not set runAsUser=0".into());
        }
    }
    if policy.from(19) && !windows {
        let pod_ok = matches!(seccomp(&pod_sc).as_deref(), Some("RuntimeDefault" | "Localhost"));
        let unset: Vec<&str> = all
            .iter()
            .filter(|c| match seccomp(&sc(c)).as_deref() {
                Some(t) => !matches!(t, "RuntimeDefault" | "Localhost"),
                None => !pod_ok,
            })
            .map(|c| name(c))
            .collect();
        if !unset.is_empty() {
            push!(
                "seccompProfile",
                format!(
                    "pod or {} {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                    plural(&unset),
                    quoted(&unset)
                ),
            );
        }
    }
    out
}

fn plural(names: &[&str]) -> &'static str {
    if names.len() == 1 {
        "container"
    } else {
        "containers"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ns(labels: Json) -> Option<Enforced> {
        Enforced::of(&json!({"metadata": {"labels": labels}}))
    }

    #[test]
    fn the_namespace_labels_decide_the_policy() {
        assert_eq!(ns(json!({})), None);
        assert_eq!(ns(json!({ENFORCE: "privileged"})), None);
        assert_eq!(ns(json!({ENFORCE: "baseline"})).unwrap().shown, "baseline:latest");
        let typo = ns(json!({ENFORCE: "restrictd"})).unwrap();
        assert_eq!((typo.level, typo.shown.as_str()), (PodSecurityLevel::Restricted, "restricted:latest"));
        assert_eq!(ns(json!({ENFORCE: "restricted", ENFORCE_VERSION: "v1.22"})).unwrap().minor, Some(22));
        assert_eq!(ns(json!({ENFORCE: "restricted", ENFORCE_VERSION: "1.22"})).unwrap().minor, None);
        // `ParseVersion`'s pattern: no sign, no leading zero, nothing after the digits.
        for latest in ["v1.+22", "v1.022", "v1.22.0", "v1.", "v2.1", "v1.22 "] {
            let p = ns(json!({ENFORCE: "restricted", ENFORCE_VERSION: latest})).unwrap();
            assert_eq!((p.minor, p.shown.as_str()), (None, "restricted:latest"), "{latest}");
        }
        assert_eq!(ns(json!({ENFORCE: "baseline", ENFORCE_VERSION: "v1.0"})).unwrap().minor, Some(0));
    }

    #[test]
    fn restricted_refuses_a_bare_pod_and_baseline_admits_it() {
        let bare = json!({"containers": [{"name": "manager", "image": "x"}]});
        let restricted = ns(json!({ENFORCE: "restricted"})).unwrap();
        let reasons: Vec<&str> = violations(&bare, &restricted).iter().map(|v| v.reason).collect();
        assert_eq!(reasons, ["allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"]);
        assert!(violations(&bare, &ns(json!({ENFORCE: "baseline"})).unwrap()).is_empty());
        // At v1.18 neither seccomp (1.19) nor capabilities (1.22) are checked.
        let old = ns(json!({ENFORCE: "restricted", ENFORCE_VERSION: "v1.18"})).unwrap();
        let reasons: Vec<&str> = violations(&bare, &old).iter().map(|v| v.reason).collect();
        assert_eq!(reasons, ["allowPrivilegeEscalation != false", "runAsNonRoot != true"]);
    }

    #[test]
    fn restricted_admits_the_2_3_manager() {
        let good = json!({"containers": [{"name": "manager", "securityContext": {
            "allowPrivilegeEscalation": false, "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}}]});
        assert!(violations(&good, &ns(json!({ENFORCE: "restricted"})).unwrap()).is_empty());
    }

    #[test]
    fn baseline_refuses_host_access() {
        let baseline = ns(json!({ENFORCE: "baseline"})).unwrap();
        let host = json!({"hostNetwork": true, "volumes": [{"name": "data", "hostPath": {"path": "/"}}],
            "containers": [{"name": "c", "securityContext": {"privileged": true, "capabilities": {"add": ["SYS_ADMIN"]}}, "ports": [{"hostPort": 80}]}]});
        let reasons: Vec<&str> = violations(&host, &baseline).iter().map(|v| v.reason).collect();
        assert_eq!(reasons, ["host namespaces", "privileged", "non-default capabilities", "hostPath volumes", "hostPort"]);
    }

    #[test]
    fn a_pod_on_the_host_network_uses_its_container_ports_as_host_ports() {
        // Live explorer state (docs/rehearsals.md, TA-NS-002): the JobSet controller with
        // hostNetwork under baseline, refused with `host namespaces (hostNetwork=true), hostPort
        // (container "controller" uses hostPorts 8081, 8443, 9443)`.
        let baseline = ns(json!({ENFORCE: "baseline"})).unwrap();
        let ports = |ps: &[i64]| ps.iter().map(|p| json!({"containerPort": p})).collect::<Vec<_>>();
        let pod = json!({"hostNetwork": true, "containers": [{"name": "controller", "ports": ports(&[9443, 8443, 8081])}]});
        let found = violations(&pod, &baseline);
        let got: Vec<(&str, &str)> = found.iter().map(|v| (v.reason, v.detail.as_str())).collect();
        assert_eq!(
            got,
            [("host namespaces", "hostNetwork=true"), ("hostPort", "container \"controller\" uses hostPorts 8081, 8443, 9443")]
        );
        // Off the host network a container port is only a container port.
        let pod = json!({"containers": [{"name": "controller", "ports": ports(&[8081])}]});
        assert!(violations(&pod, &baseline).is_empty());
    }
}
