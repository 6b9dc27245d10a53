//! What the output says, held against the state (issue 29 §5, §6): a user value the release
//! stores (Argo CD's and kustomize's are not in the cluster) that the target chart does not know
//! (not in its values.yaml, nor under a subchart's name in that subchart's, nor inside a map the
//! chart leaves free-form) is named by some finding — Helm itself says nothing,
//! no Trainer chart has a values.schema.json; a manager running another image than the release's
//! chart is named (its version) by some finding or note; and a target below 2.3 gets no text
//! about a 2.3 controller.

use serde_json::Value as Json;

use super::{Disagreement, Situation};
use crate::explore::state::{Install, State};

/// Whether `path` lands somewhere the chart's defaults know: every segment a key of a map, or
/// inside a map the chart leaves empty (free-form, like `manager.labels: {}`).
pub fn known(defaults: &Json, path: &str) -> bool {
    let mut at = defaults;
    for key in path.split('.') {
        match at {
            Json::Object(m) if m.is_empty() => return true,
            Json::Object(m) => match m.get(key) {
                Some(v) => at = v,
                None => return false,
            },
            _ => return false,
        }
    }
    true
}

/// Every text of a report: findings (subject, title, message, evidence, fix) and notes.
fn all_text(line: &Json) -> String {
    let report = &line["report"];
    let mut out = String::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        for k in ["subject", "title", "message", "fix"] {
            out.push_str(f[k].as_str().unwrap_or_default());
            out.push('\n');
        }
        for e in f["evidence"].as_array().into_iter().flatten() {
            out.push_str(e.as_str().unwrap_or_default());
            out.push('\n');
        }
    }
    for n in report["notes"].as_array().into_iter().flatten().chain(report["warnings"].as_array().into_iter().flatten()) {
        out.push_str(n.as_str().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The user values the product can read in the state: a Helm release stores them in its
/// records (`config`); Argo CD and kustomize apply objects already rendered, and the cluster
/// holds nothing that says which values rendered them (the explorer passes no `-f`).
pub fn readable_values(state: &State) -> &[(String, Json)] {
    match state.install {
        Install::Helm(_) => &state.values,
        _ => &[],
    }
}

pub fn check(s: &Situation, line: &Json) -> Vec<Disagreement> {
    if line["exit_code"] == 2 {
        return Vec::new();
    }
    let text = all_text(line);
    let mut out = Vec::new();
    if let Some(target) = &s.target_version {
        if let Ok(defaults) = s.charts.render(target, &s.state.release, &s.state.namespace, &Json::Object(Default::default())) {
            for (path, _) in readable_values(s.state) {
                if !known(&defaults.values, path) && !text.contains(path.as_str()) {
                    out.push(Disagreement {
                        class: "unknown-value-unnamed".into(),
                        area: "world §5",
                        expected: format!("a finding naming the value {path}, which the {target} chart (and its subcharts) does not know"),
                        actual: "no finding names it".into(),
                    });
                }
            }
        }
        if before_2_3_controller(target) && text.contains("2.3 controller") {
            out.push(Disagreement {
                class: "text-does-not-fit".into(),
                area: "world §6",
                expected: format!("no text about a 2.3 controller on an upgrade to {target}"),
                actual: text.lines().find(|l| l.contains("2.3 controller")).unwrap_or_default().chars().take(300).collect(),
            });
        }
    }
    if let (Some(tag), Some(running)) = (&s.state.manager_image, &s.built.running) {
        let tag = tag.trim_start_matches('v');
        if tag != running.as_str() && !text.contains(tag) {
            out.push(Disagreement {
                class: "running-image-unnamed".into(),
                area: "world §6",
                expected: format!("a finding or note naming the manager's running {tag} beside the release's {running}"),
                actual: "none does".into(),
            });
        }
    }
    out
}

/// Whether a `target` chart's controller is older than 2.3's: the 2.3 pre-releases run the 2.3
/// controller's code (Trainer v2.3.0-rc.3 `pkg/controller/trainjob_controller.go` L100
/// `removeFailedCondition`, as at v2.3.0), so a text about the 2.3 controller fits them.
fn before_2_3_controller(target: &str) -> bool {
    semver::Version::parse(target).is_ok_and(|v| !crate::explore::charts::makes_runtime_snapshots(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_values_a_release_record_holds_must_be_named() {
        let helm: State =
            "install=helm:install@2.1.0 release=kubeflow-trainer/kubeflow-system to=2.3.0 value=runtime.x=true".parse().unwrap();
        assert_eq!(readable_values(&helm).len(), 1);
        let argo: State = "install=argocd@2.1.0 release=kubeflow-trainer/ml-platform to=2.4.0 value=runtime.x=true".parse().unwrap();
        assert!(readable_values(&argo).is_empty(), "Argo CD's values are not in the cluster");
    }

    #[test]
    fn a_2_3_pre_release_runs_the_2_3_controller() {
        // Seed 7 state 4693: TA-NB-005's text on an upgrade to 2.3.0-rc.3 fits.
        assert!(before_2_3_controller("2.2.1") && before_2_3_controller("2.2.0-rc.1"));
        assert!(!before_2_3_controller("2.3.0-rc.3") && !before_2_3_controller("2.3.0") && !before_2_3_controller("2.4.0"));
    }

    #[test]
    fn keys_are_known_through_maps_and_free_form_maps() {
        let d = json!({"jobset": {"install": true, "controller": {"replicas": 1}}, "manager": {"labels": {}}, "image": {"tag": ""}});
        assert!(known(&d, "jobset.install") && known(&d, "jobset.controller.replicas") && known(&d, "manager.labels.team"));
        assert!(!known(&d, "jobset.enabled") && !known(&d, "image.tag.x") && !known(&d, "runtime"));
    }
}
