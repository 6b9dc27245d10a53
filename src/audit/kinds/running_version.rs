//! `running-version`: the Helm release records one version while the controller Deployment runs
//! another (a hand `kubectl set image`, a post-renderer, an image override), or its rollout has
//! not finished, so Pods of an earlier template still serve. The installed version every check
//! compares charts from is the record's (the revision the upgrade starts from); the checks of the
//! live Deployment read what runs. A hit names both and says which each used; variant `rollout`
//! for an unfinished rollout; variant `unknown` (info) when the running image tells no version
//! (digest only, `latest`) and no label does: the record's version is then the only word.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::install::{image_version, image_version_unknown};
use crate::cluster::neighbours::is_trainer_manager;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Why a Deployment's rollout has not finished, from its status: not complete as the deployment
/// controller judges it (kubernetes v1.36.1 `pkg/controller/deployment/util/deployment_util.go`
/// L744-L749 `DeploymentComplete`), and `ProgressDeadlineExceeded` (L86) when it gave up.
pub fn rollout_unfinished(d: &Json) -> Option<String> {
    let n = |p: &str| d.pointer(p).and_then(Json::as_i64);
    d.get("status")?;
    let generation = n("/metadata/generation").unwrap_or(0);
    let observed = n("/status/observedGeneration").unwrap_or(0);
    let replicas = n("/spec/replicas").unwrap_or(1);
    let updated = n("/status/updatedReplicas").unwrap_or(0);
    let total = n("/status/replicas").unwrap_or(0);
    let available = n("/status/availableReplicas").unwrap_or(0);
    let stalled = d
        .pointer("/status/conditions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .find(|c| str_at(c, &["type"]) == "Progressing" && str_at(c, &["status"]) == "False");
    if let Some(c) = stalled {
        return Some(format!("Progressing is False, {}: {}", str_at(c, &["reason"]), str_at(c, &["message"]).trim_end_matches('.')));
    }
    if observed < generation {
        return Some(format!("the deployment controller has not observed generation {generation} yet"));
    }
    if updated != replicas || total != replicas || available != replicas {
        return Some(format!("{updated} of {replicas} replicas run the current template, {available} available, {total} Pods in all"));
    }
    None
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(release) = input.release else { return Vec::new() };
        let base = release.base();
        let recorded = base.chart_version.trim_start_matches('v');
        let mut hits = Vec::new();
        for d in
            input.state.of_kind("Deployment").filter(|d| is_trainer_manager(d) && str_at(d, &["metadata", "namespace"]) == input.namespace)
        {
            let at = format!("Deployment/{}/{}", input.namespace, str_at(d, &["metadata", "name"]));
            let record = format!(
                "Helm release {}/{} revision {} (chart {}-{})",
                base.namespace, base.name, base.revision, base.chart_name, base.chart_version
            );
            let base_hit = |message: String| {
                Hit::new(at.clone(), message)
                    .var("deployment", format!("deployment/{}", str_at(d, &["metadata", "name"])))
                    .var("recorded", recorded)
                    .var("release", base.name.clone())
                    .var("revision", base.revision.to_string())
                    .evidence(record.clone())
            };
            if let Some(why) = rollout_unfinished(d) {
                hits.push(
                    base_hit(format!(
                        "the rollout of {at} has not finished ({why}): Pods of an earlier template may still run, whatever the release records ({recorded}); every check used the record's {recorded}, the live-Deployment checks read its current template"
                    ))
                    .variant("rollout"),
                );
            }
            match image_version(d) {
                Some((running, from)) if helm_render::version::parse_lenient(&running) != helm_render::version::parse_lenient(recorded) => hits.push(
                    base_hit(format!(
                        "the release records {recorded} while {at} runs {running} ({from}): the installed version every check compared charts from is the record's {recorded} (the installed chart rendered, the version gates, the release objects); the checks of the live Deployment (its flags, selector and configuration) read what runs, {running}"
                    ))
                    .var("running", running.clone())
                    .evidence(format!("{at} {from}")),
                ),
                Some(_) => {}
                None => {
                    let why = image_version_unknown(d).unwrap_or_default();
                    hits.push(
                        base_hit(format!(
                            "what {at} runs cannot be compared with the release's {recorded}: {why}; every check used the record's {recorded}"
                        ))
                        .variant("unknown"),
                    );
                }
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unfinished_rollout_is_told_by_the_deployment_status() {
        let d = |status: Json| json!({"metadata": {"generation": 3}, "spec": {"replicas": 1}, "status": status});
        let done = json!({"observedGeneration": 3, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1});
        assert_eq!(rollout_unfinished(&d(done.clone())), None);
        let mut old = done.clone();
        old["observedGeneration"] = json!(2);
        assert!(rollout_unfinished(&d(old)).unwrap().contains("generation 3"));
        assert!(rollout_unfinished(&d(json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 1})))
            .unwrap()
            .contains("2 Pods in all"));
        let stuck = d(json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 1,
            "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet \"m-2\" has timed out progressing."}]}));
        assert!(rollout_unfinished(&stuck).unwrap().contains("ProgressDeadlineExceeded"));
        assert_eq!(rollout_unfinished(&json!({"spec": {}})), None, "no status read: nothing to say");
    }
}
