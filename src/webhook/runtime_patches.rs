//! The JobSet plugin's checks of a TrainJob's `runtimePatches` (kubeflow/trainer v2.3.0
//! `pkg/runtime/framework/plugins/jobset/jobset.go` L175-L209): each patch's `manager` must be a
//! domain-prefixed path (`IsDomainPrefixedPath`, k8s.io/apimachinery
//! `pkg/util/validation/validation.go`), and a patched container named `dataset-initializer`,
//! `model-initializer` or `node` must set no `env`. The checks that a patched replicatedJob or
//! container exists in the runtime read the template *after* the patches are merged into it
//! (`pkg/runtime/core/trainingruntime.go` L141-L165, `mergeRuntimePatches` L251-L290: a strategic
//! merge patch, keyed by name), so a patch naming a new job or container adds it and is not
//! refused; they are modelled the same way.

use serde_json::Value;

use super::{items, Container, Job, Template};

const RESERVED_ENV_CONTAINERS: [&str; 3] = ["dataset-initializer", "model-initializer", "node"];

/// The runtime's replicatedJobs with the TrainJob's patches merged in by name.
pub fn merged_containers(runtime: &Value, job: &Value) -> Template {
    let mut t = Template::default();
    let pod = ["template", "spec", "template", "spec"];
    let add = |t: &mut Template, rjob: &Value| {
        let name = rjob.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let at = match t.jobs.iter().position(|j| j.name == name) {
            Some(i) => i,
            None => {
                t.jobs.push(Job { name, ..Job::default() });
                t.jobs.len() - 1
            }
        };
        let j = &mut t.jobs[at];
        for c in items(rjob, &[pod.as_slice(), &["containers"]].concat()) {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let mounts: Vec<String> =
                items(c, &["volumeMounts"]).filter_map(|m| m.get("name").and_then(Value::as_str)).map(String::from).collect();
            match j.containers.iter_mut().find(|x| x.name == name) {
                Some(x) => x.volume_mounts.extend(mounts),
                None => j.containers.push(Container { name, volume_mounts: mounts }),
            }
        }
        for c in items(rjob, &[pod.as_slice(), &["initContainers"]].concat()) {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            if !j.init_containers.contains(&name) {
                j.init_containers.push(name);
            }
        }
    };
    for rjob in items(runtime, &["spec", "template", "spec", "replicatedJobs"]) {
        add(&mut t, rjob);
    }
    for patch in items(job, &["spec", "runtimePatches"]) {
        for rjob in items(patch, &["trainingRuntimeSpec", "template", "spec", "replicatedJobs"]) {
            add(&mut t, rjob);
        }
    }
    t
}

pub fn refusals(template: &Template, job: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for patch in items(job, &["spec", "runtimePatches"]) {
        let manager = patch.get("manager").and_then(Value::as_str).unwrap_or_default();
        out.extend(domain_prefixed_path(manager).map(|d| ("spec.runtimePatches.manager".to_string(), d)));
        for rjob in items(patch, &["trainingRuntimeSpec", "template", "spec", "replicatedJobs"]) {
            let name = rjob.get("name").and_then(Value::as_str).unwrap_or_default();
            let Some(have) = template.job(name) else {
                out.push((
                    "spec.runtimePatches".into(),
                    "must not have replicated job that doesn't exist in the runtime job template".into(),
                ));
                continue;
            };
            let pod = ["template", "spec", "template", "spec"];
            for c in items(rjob, &[pod.as_slice(), &["initContainers"]].concat()) {
                if !have.has_container(c.get("name").and_then(Value::as_str).unwrap_or_default()) {
                    out.push((
                        "spec.runtimePatches".into(),
                        format!("must not have initContainer that doesn't exist in the runtime job {name}"),
                    ));
                }
            }
            for c in items(rjob, &[pod.as_slice(), &["containers"]].concat()) {
                let cname = c.get("name").and_then(Value::as_str).unwrap_or_default();
                if !have.has_container(cname) {
                    out.push((
                        "spec.runtimePatches".into(),
                        format!("must not have container that doesn't exist in the runtime job {name}"),
                    ));
                } else if items(c, &["env"]).next().is_some() && RESERVED_ENV_CONTAINERS.contains(&cname) {
                    out.push((
                        "spec.runtimePatches".into(),
                        "must not have envs for the dataset-initializer, model-initializer, node containers".into(),
                    ));
                }
            }
        }
    }
    out
}

/// `IsDomainPrefixedPath`: `host/path` with `host` a DNS-1123 subdomain and `path` matching
/// `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`. The detail of the first error, if any.
fn domain_prefixed_path(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("Required value".into());
    }
    let Some((host, path)) = value.split_once('/').filter(|(h, p)| !h.is_empty() && !p.is_empty()) else {
        return Some("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    };
    if !dns1123_subdomain(host) {
        return Some("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".into());
    }
    if !path.chars().all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c)) {
        return Some("Invalid path".into());
    }
    None
}

fn dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

/// On an update: `checkRuntimePatchesImmutability` (jobset.go L214-L250) refuses a change of
/// `runtimePatches` unless the TrainJob is suspended before or after it. The patches are compared
/// without their `time`, which the defaulting webhook copies from the old patch of the same
/// manager when nothing else changed (trainjob_webhook.go L73-L90). The second refusal there,
/// while the TrainJob's JobSet still has active replicated jobs, needs the JobSet's status and is
/// not modelled.
pub fn update_refusals(old: &Value, new: &Value) -> Vec<(String, String)> {
    let without_time = |v: &Value| -> Vec<Value> {
        items(v, &["spec", "runtimePatches"])
            .map(|p| {
                let mut p = p.clone();
                if let Some(m) = p.as_object_mut() {
                    m.remove("time");
                }
                p
            })
            .collect()
    };
    let suspended = |v: &Value| v.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    if without_time(old) != without_time(new) && !suspended(old) && !suspended(new) {
        return vec![(
            "spec.runtimePatches".into(),
            "Forbidden: RuntimePatches can only be modified when the TrainJob is suspended before or after the update".into(),
        )];
    }
    Vec::new()
}
