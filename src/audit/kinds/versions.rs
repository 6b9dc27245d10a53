//! Version checks: the upgrade gate, the Kubernetes prerequisite, a stuck release.

use super::Hit;
use crate::audit::input::CheckInput;
use crate::audit::rules::Rule;

pub fn upgrade_gate(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let via = rule.param_str("via").unwrap_or("");
    vec![Hit::new(
        format!("release {}/{}", input.namespace, input.release_name),
        format!("{} → {} skips {via}: the chart requires landing on {via} first", input.from, input.to),
    )
    .evidence(format!("installed {}, target {}", input.from, input.to))
    .var("via", via)]
}

pub fn kube_version(rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let min = rule.param_str("min").unwrap_or("");
    let Some(min_minor) = min.split('.').nth(1).and_then(|m| m.parse::<u64>().ok()) else { return Vec::new() };
    match input.state.server_minor() {
        Some(minor) if minor >= min_minor => Vec::new(),
        Some(_) => vec![Hit::new(
            "cluster",
            format!(
                "Kubernetes {} is older than {min}, which {} needs",
                input.state.info.server_version.as_deref().unwrap_or("?"),
                input.to
            ),
        )
        .evidence(format!("server version {}", input.state.info.server_version.as_deref().unwrap_or("?")))
        .var("min", min)],
        None => vec![Hit::new("cluster", format!("the Kubernetes version is unknown; {} needs {min} or later", input.to))
            .evidence("no server version (snapshot without ClusterInfo): pass --kube-version")
            .var("min", min)],
    }
}

pub fn release_stuck(_rule: &Rule, input: &CheckInput) -> Vec<Hit> {
    let Some(r) = input.release else { return Vec::new() };
    if !r.current.is_stuck() {
        return Vec::new();
    }
    let last_good = r
        .history
        .iter()
        .rev()
        .find(|(_, s, _)| s == "deployed" || s == "superseded")
        .map(|(rev, _, _)| rev.to_string())
        .unwrap_or_default();
    vec![Hit::new(
        format!("release {}/{}", r.current.namespace, r.current.name),
        format!("revision {} is {}: Helm refuses another upgrade until it is resolved", r.current.revision, r.current.status),
    )
    .evidence(format!("status {} ({})", r.current.status, r.current.description))
    .var("revision", last_good)]
}
