//! Every object a printed command names exists in the rendered target or the state (issue 29
//! §4): each `kubectl` command of the plan and the runbook that names objects (not lists, not
//! selectors, not commands guarded by `--ignore-not-found`) names one that the cluster holds, or
//! that a chart on the plan's route renders for this release name and namespace; a namespaced
//! object is looked up in the command's `-n` (kubectl's default namespace, `default`, without
//! one). Each `helm` command names the state's release, in its namespace, and a rollback names a
//! revision on record.

use std::collections::BTreeSet;

use serde_json::Value as Json;
use trainer_audit::objects::str_at;

use super::{Disagreement, Observed, Situation};
use crate::explore::charts::Charts;
use crate::explore::printed::{helm_call, kubectl_names, plan_commands, runbook_commands, Printed};

/// kubectl's names of a resource (singular, plural, short) and the kind, with whether it is
/// namespaced.
const RESOURCES: &[(&[&str], &str, bool)] = &[
    (&["deployment", "deployments", "deploy", "deployment.apps", "deployments.apps"], "Deployment", true),
    (
        &[
            "crd",
            "crds",
            "customresourcedefinition",
            "customresourcedefinitions",
            "customresourcedefinition.apiextensions.k8s.io",
            "customresourcedefinitions.apiextensions.k8s.io",
        ],
        "CustomResourceDefinition",
        false,
    ),
    (
        &["clustertrainingruntime", "clustertrainingruntimes", "clustertrainingruntime.trainer.kubeflow.org"],
        "ClusterTrainingRuntime",
        false,
    ),
    (&["trainingruntime", "trainingruntimes", "trainingruntime.trainer.kubeflow.org"], "TrainingRuntime", true),
    (&["trainjob", "trainjobs", "trainjob.trainer.kubeflow.org"], "TrainJob", true),
    (&["ns", "namespace", "namespaces"], "Namespace", false),
    (&["resourcequota", "resourcequotas", "quota"], "ResourceQuota", true),
    (&["limitrange", "limitranges", "limits"], "LimitRange", true),
    (&["job", "jobs", "job.batch"], "Job", true),
    (&["secret", "secrets"], "Secret", true),
    (&["configmap", "configmaps", "cm"], "ConfigMap", true),
    (&["serviceaccount", "serviceaccounts", "sa"], "ServiceAccount", true),
    (&["service", "services", "svc"], "Service", true),
    (&["clusterrole", "clusterroles", "clusterrole.rbac.authorization.k8s.io"], "ClusterRole", false),
    (&["clusterrolebinding", "clusterrolebindings"], "ClusterRoleBinding", false),
    (&["validatingwebhookconfiguration", "validatingwebhookconfigurations"], "ValidatingWebhookConfiguration", false),
    (&["mutatingwebhookconfiguration", "mutatingwebhookconfigurations"], "MutatingWebhookConfiguration", false),
    (&["jobset", "jobsets"], "JobSet", true),
];

fn kind_of(resource: &str) -> Option<(&'static str, bool)> {
    RESOURCES.iter().find(|(names, _, _)| names.contains(&resource)).map(|(_, k, ns)| (*k, *ns))
}

/// Every `Kind/namespace/name` the state holds or a chart on the route renders.
fn known(s: &Situation, charts: &Charts, route: &[String]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = s.live.keys().cloned().collect();
    let values = s.state.values_json();
    let mut renders: Vec<std::rc::Rc<crate::explore::charts::Rendered>> = s.base.iter().chain(&s.target).cloned().collect();
    for v in route {
        if let Ok(r) = charts.render(v, &s.state.release, &s.state.namespace, &values) {
            renders.push(r);
        }
    }
    for r in renders {
        for o in r.objects.iter().chain(&r.crds).chain(&r.installer_runtimes) {
            out.insert(super::situation::key(o));
        }
        for h in &r.hooks {
            out.insert(format!("{}/{}/{}", str_at(h, &["kind"]), s.state.namespace, str_at(h, &["name"])));
        }
    }
    out
}

pub fn check(s: &Situation, observed: &Observed) -> Vec<Disagreement> {
    let mut printed: Vec<Printed> = Vec::new();
    let mut route: Vec<String> = Vec::new();
    if let Some(report) = observed.plan.as_ref().and_then(|p| p.get("report")) {
        printed.extend(plan_commands(report));
        route.extend(
            report
                .pointer("/plan/steps")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(|st| st["to"].as_str().map(String::from)),
        );
    }
    if let Some(runbook) = observed.runbook.as_ref().filter(|r| r.code == Some(0)) {
        printed.extend(runbook_commands(&runbook.stdout));
    }
    if printed.is_empty() {
        return Vec::new();
    }
    let charts = s.charts;
    let known = known(s, charts, &route);
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for p in &printed {
        if !seen.insert(p.line.clone()) {
            continue;
        }
        if let Some(h) = helm_call(&p.line) {
            let ns = h.namespace.clone().unwrap_or_else(|| "default".into());
            // The release that adopts what runs: a Helm release's own name, the name Argo CD
            // rendered the chart as, `kubeflow-trainer` for kustomize's objects (so named).
            if h.release != s.state.release || ns != s.state.namespace {
                out.push(Disagreement {
                    class: "printed-helm-release".into(),
                    area: "states §4",
                    expected: format!("helm {} on release {} in {}", h.verb, s.state.release, s.state.namespace),
                    actual: format!("{}: {}", p.place, p.line),
                });
            }
            if let Some(rev) = h.revision {
                if !s.built.history.revisions.iter().any(|r| r.number == rev) {
                    out.push(Disagreement {
                        class: "printed-helm-revision".into(),
                        area: "states §4",
                        expected: format!(
                            "a revision on record ({:?})",
                            s.built.history.revisions.iter().map(|r| r.number).collect::<Vec<_>>()
                        ),
                        actual: format!("{}: {}", p.place, p.line),
                    });
                }
            }
            continue;
        }
        if p.line.contains("--ignore-not-found") {
            continue;
        }
        for named in kubectl_names(&p.line) {
            let Some((kind, namespaced)) = kind_of(&named.resource) else { continue };
            let ns = if namespaced { named.namespace.clone().unwrap_or_else(|| "default".into()) } else { String::new() };
            let key = format!("{kind}/{ns}/{}", named.name);
            if !known.contains(&key) {
                out.push(Disagreement {
                    class: "printed-name".into(),
                    area: "states §4",
                    expected: format!("{key} in the state or the rendered target"),
                    actual: format!("{}: {}", p.place, p.line),
                });
            }
        }
    }
    out
}
