//! ResourceQuota and LimitRange as kube-apiserver 1.36.1 applies them when an object is created:
//! what a create is charged (object counts under every name a quota may use, a Pod's `pods` and
//! its requests and limits), which quotas match it (scopes), which resources a Pod must set when
//! a quota tracks CPU or memory, and LimitRange's defaults and bounds on a Pod. The kinds that
//! check an upgrade's creations against a namespace's quotas (`namespace-quota`, and the runtime
//! snapshots of `configmap-quota`) build on this.
//!
//! Sources, Kubernetes v1.36.1:
//! - object counts: `staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go` L126-L131
//!   (`count/<resource>[.<group>]`), L145-L169 (a scoped quota matches no object but a Pod);
//!   `pkg/quota/v1/evaluator/core/registry.go` L37-L42 (the legacy names `configmaps`, `secrets`,
//!   `resourcequotas`, `replicationcontrollers`), `services.go` (`services`,
//!   `services.loadbalancers`, `services.nodeports`);
//! - Pods: `pkg/quota/v1/evaluator/core/pods.go` L50-L63 (what a Pod is charged), L98-L110 and
//!   L129-L171 (a quota on cpu or memory requires each container to set it: `must specify`),
//!   L294-L332 (the names requests and limits are charged under), L350-L437 (scopes);
//! - admission: `staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`
//!   L403-L478 (`failed quota: `, usage from `status.hard`), L598-L626 (`exceeded quota: `);
//! - LimitRange: `plugin/pkg/admission/limitranger/admission.go` L216-L293 (defaults), L309-L383
//!   and L486-L572 (bounds); `pkg/apis/core/v1/defaults.go` L360-L390 (a LimitRange's own
//!   defaults) and L166-L192 (a container's requests default to its limits).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::objects::str_at;

/// A quantity in nano-units, as `resource.Quantity` keeps it.
pub type Amount = i128;

/// One unit (a count of 1, one CPU) in nano-units.
pub const NANO_PER_UNIT: Amount = 1_000_000_000;
const NANO: Amount = NANO_PER_UNIT;

/// A quantity from a string (`500m`, `1Gi`) or a number; None when it is not one.
pub fn quantity(v: &Json) -> Option<Amount> {
    match v {
        Json::String(s) => kube_validate::cel::parse_quantity(s.trim()),
        Json::Number(n) => n.as_i64().map(|i| i as Amount * NANO).or_else(|| n.as_f64().map(|f| (f * NANO as f64).ceil() as Amount)),
        _ => None,
    }
}

/// A quantity as people write it: whole (`3`), in milli-units (`500m`), or binary for memory
/// sizes that are whole mebibytes (`128Mi`).
pub fn show(resource: &str, nano: Amount) -> String {
    let is_bytes = resource.ends_with("memory") || resource.ends_with("storage");
    let whole = nano / NANO;
    if nano % NANO == 0 {
        if is_bytes && whole != 0 {
            for (unit, shift) in [("Gi", 30), ("Mi", 20), ("Ki", 10)] {
                if whole % (1 << shift) == 0 {
                    return format!("{}{unit}", whole >> shift);
                }
            }
        }
        return whole.to_string();
    }
    if nano % 1_000_000 == 0 {
        return format!("{}m", nano / 1_000_000);
    }
    format!("{}n", nano)
}

/// Resources a quota on which makes every container of a Pod set them (pods.go L98-L110).
const VALIDATED: &[&str] = &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// The resource a kind is listed as (`configmaps`, `networkpolicies`): kubectl's and the API
/// machinery's guess from the kind (apimachinery `meta.UnsafeGuessKindToResource`), right for
/// every kind a chart of this field renders.
pub fn resource_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") || lower.ends_with("sh") || lower.ends_with('z') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u'])) {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// What creating one non-Pod object is charged: its object count under `count/…` and, for the
/// kinds with one, the legacy name; Services also by type.
pub fn object_usage(group: &str, kind: &str, body: &Json) -> BTreeMap<String, Amount> {
    let resource = resource_of(kind);
    let mut usage = BTreeMap::new();
    let count = if group.is_empty() { format!("count/{resource}") } else { format!("count/{resource}.{group}") };
    usage.insert(count, NANO);
    if group.is_empty()
        && matches!(
            resource.as_str(),
            "configmaps" | "secrets" | "resourcequotas" | "replicationcontrollers" | "services" | "persistentvolumeclaims"
        )
    {
        usage.insert(resource.clone(), NANO);
    }
    if group.is_empty() && kind == "Service" {
        let kind = str_at(body, &["spec", "type"]);
        if kind == "LoadBalancer" {
            usage.insert("services.loadbalancers".into(), NANO);
        }
        if matches!(kind, "LoadBalancer" | "NodePort") {
            let ports = body.pointer("/spec/ports").and_then(Json::as_array).map(Vec::len).unwrap_or(0);
            usage.insert("services.nodeports".into(), ports as Amount * NANO);
        }
    }
    usage
}

/// One container's requests and limits (cpu, memory, ephemeral-storage).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    pub requests: BTreeMap<String, Amount>,
    pub limits: BTreeMap<String, Amount>,
}

const COMPUTE: &[&str] = &["cpu", "memory", "ephemeral-storage"];

fn list(v: Option<&Json>) -> BTreeMap<String, Amount> {
    v.and_then(Json::as_object)
        .map(|m| m.iter().filter(|(k, _)| COMPUTE.contains(&k.as_str())).filter_map(|(k, v)| Some((k.clone(), quantity(v)?))).collect())
        .unwrap_or_default()
}

/// A Pod as admission sees it: its containers' resources after the Pod's own defaulting and
/// the namespace's LimitRanges, and what its scopes read.
#[derive(Debug, Clone, Default)]
pub struct Pod {
    /// What creates it (`hook Job kubeflow-system/x`, `Deployment kubeflow-system/y (rollout)`).
    pub owner: String,
    pub containers: Vec<(String, Resources)>,
    pub init_containers: Vec<(String, Resources)>,
    pub active_deadline: bool,
    pub priority_class: String,
    pub cross_namespace_affinity: bool,
    /// What the LimitRanges set on it (`cpu request for container x`).
    pub defaulted: Vec<String>,
}

impl Pod {
    /// The Pod a pod template makes (`spec` of a template), with the Pod's own defaulting: a
    /// container's missing requests take its limits.
    pub fn from_spec(owner: String, spec: &Json) -> Pod {
        let read = |key: &str| -> Vec<(String, Resources)> {
            spec.get(key)
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    let limits = list(c.pointer("/resources/limits"));
                    let mut requests = list(c.pointer("/resources/requests"));
                    for (k, v) in &limits {
                        requests.entry(k.clone()).or_insert(*v);
                    }
                    (str_at(c, &["name"]).to_string(), Resources { requests, limits })
                })
                .collect()
        };
        let affinity = |path: &str| {
            spec.pointer(path).and_then(Json::as_array).into_iter().flatten().any(|t| {
                let term = t.get("podAffinityTerm").unwrap_or(t);
                term.get("namespaceSelector").is_some() || term.get("namespaces").and_then(Json::as_array).is_some_and(|n| !n.is_empty())
            })
        };
        Pod {
            owner,
            containers: read("containers"),
            init_containers: read("initContainers"),
            active_deadline: spec.get("activeDeadlineSeconds").and_then(Json::as_i64).is_some_and(|s| s >= 0),
            priority_class: str_at(spec, &["priorityClassName"]).to_string(),
            cross_namespace_affinity: [
                "/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution",
                "/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution",
                "/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution",
                "/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution",
            ]
            .iter()
            .any(|p| affinity(p)),
            defaulted: Vec::new(),
        }
    }

    fn all(&self) -> impl Iterator<Item = &(String, Resources)> {
        self.containers.iter().chain(&self.init_containers)
    }

    /// QoS BestEffort: no container sets a cpu or memory request or limit.
    pub fn best_effort(&self) -> bool {
        self.all().all(|(_, r)| ["cpu", "memory"].iter().all(|k| !r.requests.contains_key(*k) && !r.limits.contains_key(*k)))
    }

    /// The Pod's requests or limits: its containers' sum, or an init container's when larger.
    fn total(&self, limits: bool) -> BTreeMap<String, Amount> {
        let pick = |r: &Resources| if limits { r.limits.clone() } else { r.requests.clone() };
        let mut sum: BTreeMap<String, Amount> = BTreeMap::new();
        for (_, r) in &self.containers {
            for (k, v) in pick(r) {
                *sum.entry(k).or_default() += v;
            }
        }
        for (_, r) in &self.init_containers {
            for (k, v) in pick(r) {
                let e = sum.entry(k).or_default();
                *e = (*e).max(v);
            }
        }
        sum
    }

    /// What creating it is charged (pods.go `PodUsageFunc` for a Pod that is not terminal).
    pub fn usage(&self) -> BTreeMap<String, Amount> {
        let mut usage = BTreeMap::from([("pods".to_string(), NANO), ("count/pods".to_string(), NANO)]);
        for (k, v) in self.total(false) {
            usage.insert(format!("requests.{k}"), v);
            usage.insert(k, v);
        }
        for (k, v) in self.total(true) {
            usage.insert(format!("limits.{k}"), v);
        }
        usage
    }

    /// The resources `required` (a quota's hard names) that some container does not set, each
    /// with those containers (pods.go `Constraints`): `requests.cpu` → [`apply-runtimes`].
    pub fn missing(&self, required: &[&str]) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, r) in self.all() {
            for want in required.iter().filter(|w| VALIDATED.contains(w)) {
                let has = match want.split_once('.') {
                    Some(("limits", k)) => r.limits.contains_key(k),
                    Some((_, k)) => r.requests.contains_key(k),
                    None => r.requests.contains_key(*want),
                };
                if !has {
                    out.entry(want.to_string()).or_default().push(name.clone());
                }
            }
        }
        out
    }
}

/// One `spec.scopes` entry or `scopeSelector` expression.
#[derive(Debug, Clone, PartialEq)]
struct Selector {
    scope: String,
    operator: String,
    values: Vec<String>,
}

/// One ResourceQuota as admission reads it.
#[derive(Debug, Clone)]
pub struct Quota<'a> {
    pub object: &'a Json,
    pub name: &'a str,
    pub namespace: &'a str,
    /// `status.hard` (what admission compares with), else `spec.hard`.
    pub hard: BTreeMap<String, Amount>,
    pub used: BTreeMap<String, Amount>,
    /// The quota controller has computed its usage (`status.hard` is set).
    pub synced: bool,
    selectors: Vec<Selector>,
}

impl<'a> Quota<'a> {
    pub fn read(o: &'a Json) -> Quota<'a> {
        let amounts = |path: &str| -> BTreeMap<String, Amount> {
            o.pointer(path)
                .and_then(Json::as_object)
                .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), quantity(v)?))).collect())
                .unwrap_or_default()
        };
        let status_hard = amounts("/status/hard");
        let synced = !status_hard.is_empty();
        let mut selectors: Vec<Selector> = o
            .pointer("/spec/scopes")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(|s| Selector { scope: s.to_string(), operator: "Exists".into(), values: Vec::new() })
            .collect();
        selectors.extend(o.pointer("/spec/scopeSelector/matchExpressions").and_then(Json::as_array).into_iter().flatten().map(|e| {
            Selector {
                scope: str_at(e, &["scopeName"]).to_string(),
                operator: str_at(e, &["operator"]).to_string(),
                values: e.get("values").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).map(String::from).collect(),
            }
        }));
        Quota {
            object: o,
            name: str_at(o, &["metadata", "name"]),
            namespace: str_at(o, &["metadata", "namespace"]),
            hard: if synced { status_hard } else { amounts("/spec/hard") },
            used: amounts("/status/used"),
            synced,
            selectors,
        }
    }

    /// Whether it applies to a non-Pod object: a scoped quota never does.
    pub fn matches_object(&self) -> bool {
        self.selectors.is_empty()
    }

    /// Whether it applies to this Pod: every scope matches.
    pub fn matches_pod(&self, pod: &Pod) -> bool {
        self.selectors.iter().all(|s| match s.scope.as_str() {
            "Terminating" => pod.active_deadline,
            "NotTerminating" => !pod.active_deadline,
            "BestEffort" => pod.best_effort(),
            "NotBestEffort" => !pod.best_effort(),
            "CrossNamespacePodAffinity" => pod.cross_namespace_affinity,
            // A label selector over {PriorityClass: <name>} (no key when the Pod names none).
            "PriorityClass" => {
                let has = !pod.priority_class.is_empty();
                let inside = has && s.values.contains(&pod.priority_class);
                match s.operator.as_str() {
                    "In" => inside,
                    "NotIn" => !inside,
                    "Exists" => has,
                    "DoesNotExist" => !has,
                    _ => false,
                }
            }
            _ => false,
        })
    }

    /// The names it tracks, as `&str`.
    pub fn tracks(&self) -> Vec<&str> {
        self.hard.keys().map(String::as_str).collect()
    }
}

/// What the namespace's LimitRanges do to a Pod: their defaults set what its containers lack
/// (`Container` limits' `default` and `defaultRequest`, after the LimitRange's own defaulting),
/// then their bounds are checked; the refusals are worded as LimitRanger words them.
pub fn limit_ranges(pod: &mut Pod, ranges: &[&Json]) -> Vec<(String, String)> {
    let items = |lr: &Json| -> Vec<Json> { lr.pointer("/spec/limits").and_then(Json::as_array).cloned().unwrap_or_default() };
    for lr in ranges {
        for item in items(lr).iter().filter(|i| str_at(i, &["type"]) == "Container") {
            let (default, default_request) = item_defaults(item);
            for (what, containers) in [("container", &mut pod.containers), ("init container", &mut pod.init_containers)] {
                for (name, r) in containers.iter_mut() {
                    let mut set = Vec::new();
                    for (k, v) in &default {
                        if !r.limits.contains_key(k) {
                            r.limits.insert(k.clone(), *v);
                            set.push(format!("{k} limit"));
                        }
                    }
                    for (k, v) in &default_request {
                        if !r.requests.contains_key(k) {
                            r.requests.insert(k.clone(), *v);
                            set.push(format!("{k} request"));
                        }
                    }
                    if !set.is_empty() {
                        pod.defaulted.push(format!(
                            "{} for {what} {name} (LimitRange {})",
                            set.join(", "),
                            str_at(lr, &["metadata", "name"])
                        ));
                    }
                }
            }
        }
    }
    let mut refusals = Vec::new();
    for lr in ranges {
        let name = str_at(lr, &["metadata", "name"]).to_string();
        for item in items(lr) {
            let bounds = |key: &str| list(item.get(key));
            let check = |kind: &str,
                         requests: &BTreeMap<String, Amount>,
                         limits: &BTreeMap<String, Amount>,
                         out: &mut Vec<(String, String)>| {
                for (k, min) in bounds("min") {
                    let m = show(&k, min);
                    match (requests.get(&k), limits.get(&k)) {
                        (None, _) => out.push((name.clone(), format!("minimum {k} usage per {kind} is {m}.  No request is specified"))),
                        (Some(r), _) if *r < min => {
                            out.push((name.clone(), format!("minimum {k} usage per {kind} is {m}, but request is {}", show(&k, *r))))
                        }
                        (_, Some(l)) if *l < min => {
                            out.push((name.clone(), format!("minimum {k} usage per {kind} is {m}, but limit is {}", show(&k, *l))))
                        }
                        _ => {}
                    }
                }
                for (k, max) in bounds("max") {
                    let m = show(&k, max);
                    match (requests.get(&k), limits.get(&k)) {
                        (_, None) => out.push((name.clone(), format!("maximum {k} usage per {kind} is {m}.  No limit is specified"))),
                        (_, Some(l)) if *l > max => {
                            out.push((name.clone(), format!("maximum {k} usage per {kind} is {m}, but limit is {}", show(&k, *l))))
                        }
                        (Some(r), _) if *r > max => {
                            out.push((name.clone(), format!("maximum {k} usage per {kind} is {m}, but request is {}", show(&k, *r))))
                        }
                        _ => {}
                    }
                }
                for (k, ratio) in bounds("maxLimitRequestRatio") {
                    let m = show("", ratio);
                    match (requests.get(&k).filter(|r| **r != 0), limits.get(&k).filter(|l| **l != 0)) {
                        (None, _) => out.push((
                            name.clone(),
                            format!("{k} max limit to request ratio per {kind} is {m}, but no request is specified or request is 0"),
                        )),
                        (_, None) => out.push((
                            name.clone(),
                            format!("{k} max limit to request ratio per {kind} is {m}, but no limit is specified or limit is 0"),
                        )),
                        (Some(r), Some(l)) if l * NANO > ratio * r => out.push((
                            name.clone(),
                            format!("{k} max limit to request ratio per {kind} is {m}, but provided ratio is {:.6}", *l as f64 / *r as f64),
                        )),
                        _ => {}
                    }
                }
            };
            match str_at(&item, &["type"]) {
                "Container" => {
                    for (_, r) in pod.containers.iter().chain(&pod.init_containers) {
                        check("Container", &r.requests, &r.limits, &mut refusals);
                    }
                }
                "Pod" => check("Pod", &pod.total(false), &pod.total(true), &mut refusals),
                _ => {}
            }
        }
    }
    refusals
}

/// A `Container` item's `default` and `defaultRequest` after the API server's defaulting of the
/// LimitRange itself (a default limit from `max`, a default request from the default limit, else
/// from `min`): stored LimitRanges already carry them, a hand-written snapshot may not.
fn item_defaults(item: &Json) -> (BTreeMap<String, Amount>, BTreeMap<String, Amount>) {
    let mut default = list(item.get("default"));
    for (k, v) in list(item.get("max")) {
        default.entry(k).or_insert(v);
    }
    let mut request = list(item.get("defaultRequest"));
    for (k, v) in &default {
        request.entry(k.clone()).or_insert(*v);
    }
    for (k, v) in list(item.get("min")) {
        request.entry(k).or_insert(v);
    }
    (default, request)
}

/// The Pods a Deployment adds while it rolls out to a new template: `maxSurge` of its replicas
/// (25% rounded up by default; none under `Recreate`).
pub fn surge(deployment: &Json) -> u64 {
    if str_at(deployment, &["spec", "strategy", "type"]) == "Recreate" {
        return 0;
    }
    let replicas = deployment.pointer("/spec/replicas").and_then(Json::as_u64).unwrap_or(1);
    match deployment.pointer("/spec/strategy/rollingUpdate/maxSurge") {
        Some(Json::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Json::String(s)) => match s.strip_suffix('%').and_then(|p| p.trim().parse::<u64>().ok()) {
            Some(pct) => (replicas * pct).div_ceil(100),
            None => s.parse().unwrap_or(0),
        },
        _ => (replicas * 25).div_ceil(100),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_are_named_as_the_api_server_lists_them() {
        for (kind, want) in [
            ("ConfigMap", "configmaps"),
            ("NetworkPolicy", "networkpolicies"),
            ("Ingress", "ingresses"),
            ("Gateway", "gateways"),
            ("ServiceAccount", "serviceaccounts"),
            ("Job", "jobs"),
        ] {
            assert_eq!(resource_of(kind), want);
        }
        let cm = object_usage("", "ConfigMap", &json!({}));
        assert_eq!(cm.keys().collect::<Vec<_>>(), ["configmaps", "count/configmaps"]);
        let job = object_usage("batch", "Job", &json!({}));
        assert_eq!(job.keys().collect::<Vec<_>>(), ["count/jobs.batch"]);
        let lb = object_usage("", "Service", &json!({"spec": {"type": "LoadBalancer", "ports": [{}, {}]}}));
        assert_eq!((lb["services.loadbalancers"], lb["services.nodeports"], lb["services"]), (NANO, 2 * NANO, NANO));
    }

    #[test]
    fn a_pod_is_charged_its_requests_and_limits_under_every_name() {
        let spec = json!({"containers": [
            {"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "250m"}}}
        ], "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]});
        let pod = Pod::from_spec("x".into(), &spec);
        let u = pod.usage();
        // requests default to limits; an init container's larger request wins.
        assert_eq!(
            (u["requests.cpu"], u["cpu"], u["limits.cpu"], u["requests.memory"], u["pods"]),
            (2 * NANO, 2 * NANO, NANO, (1 << 30) * NANO, NANO)
        );
        assert_eq!(
            pod.missing(&["limits.cpu", "requests.memory", "pods"]),
            BTreeMap::from([
                ("limits.cpu".to_string(), vec!["b".to_string(), "i".to_string()]),
                ("requests.memory".to_string(), vec!["b".to_string(), "i".to_string()]),
            ])
        );
        assert!(!pod.best_effort());
        assert!(Pod::from_spec("y".into(), &json!({"containers": [{"name": "c"}]})).best_effort());
    }

    #[test]
    fn scopes_select_pods_and_never_other_objects() {
        let q = |spec: Json| json!({"metadata": {"name": "q", "namespace": "n"}, "spec": spec, "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}}});
        let best_effort = Pod::from_spec("x".into(), &json!({"containers": [{"name": "c"}]}));
        let guaranteed = Pod::from_spec(
            "x".into(),
            &json!({"priorityClassName": "high", "activeDeadlineSeconds": 5,
            "containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}),
        );
        let scoped = q(json!({"hard": {"pods": "1"}, "scopes": ["BestEffort"]}));
        let scoped = Quota::read(&scoped);
        assert!(scoped.matches_pod(&best_effort) && !scoped.matches_pod(&guaranteed) && !scoped.matches_object());
        let priority = q(
            json!({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}]}}),
        );
        let priority = Quota::read(&priority);
        assert!(priority.matches_pod(&best_effort) && !priority.matches_pod(&guaranteed), "NotIn matches a Pod naming no class");
        let terminating = q(json!({"hard": {"pods": "1"}, "scopes": ["Terminating"]}));
        assert!(Quota::read(&terminating).matches_pod(&guaranteed) && !Quota::read(&terminating).matches_pod(&best_effort));
        let plain = q(json!({"hard": {"pods": "1"}}));
        assert!(Quota::read(&plain).matches_object() && Quota::read(&plain).synced);
        let unsynced = json!({"metadata": {"name": "q"}, "spec": {"hard": {"count/configmaps": "2"}}});
        let unsynced = Quota::read(&unsynced);
        assert!(!unsynced.synced && unsynced.hard["count/configmaps"] == 2 * NANO);
    }

    #[test]
    fn limit_ranges_default_then_bound_a_pod_as_limitranger_does() {
        let lr = json!({"metadata": {"name": "limits"}, "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "1"}, "defaultRequest": {"memory": "64Mi"}, "min": {"memory": "32Mi"}},
            {"type": "Pod", "max": {"memory": "1Gi"}}
        ]}});
        let mut pod = Pod::from_spec("hook".into(), &json!({"containers": [{"name": "apply"}]}));
        let refusals = limit_ranges(&mut pod, &[&lr]);
        // cpu: limit defaulted from max, request from that limit; memory request from defaultRequest.
        let r = &pod.containers[0].1;
        assert_eq!((r.limits["cpu"], r.requests["cpu"], r.requests["memory"]), (NANO, NANO, (64 << 20) * NANO));
        assert_eq!(refusals, vec![("limits".to_string(), "maximum memory usage per Pod is 1Gi.  No limit is specified".to_string())]);
        let mut big = Pod::from_spec(
            "rollout".into(),
            &json!({"containers": [{"name": "m", "resources": {"limits": {"cpu": "2", "memory": "512Mi"}}}]}),
        );
        let refusals: Vec<String> = limit_ranges(&mut big, &[&lr]).into_iter().map(|(_, m)| m).collect();
        assert_eq!(refusals, ["maximum cpu usage per Container is 1, but limit is 2"]);
        assert!(pod.defaulted[0].contains("cpu limit") && pod.defaulted[0].contains("container apply"), "{:?}", pod.defaulted);
    }

    #[test]
    fn a_rollout_surges_by_max_surge_of_its_replicas() {
        assert_eq!(surge(&json!({"spec": {}})), 1);
        assert_eq!(surge(&json!({"spec": {"replicas": 8}})), 2);
        assert_eq!(surge(&json!({"spec": {"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": 0}}}})), 0);
        assert_eq!(surge(&json!({"spec": {"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": "50%"}}}})), 2);
        assert_eq!(surge(&json!({"spec": {"strategy": {"type": "Recreate"}}})), 0);
        assert_eq!(show("memory", (128i128 << 20) * NANO), "128Mi");
        assert_eq!(show("cpu", 500_000_000), "500m");
        assert_eq!(show("cpu", 3 * NANO), "3");
    }
}
