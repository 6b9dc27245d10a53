//! `crd-keep`: CRDs the chart renders from templates (release objects) without
//! `helm.sh/resource-policy: keep`, so an uninstall, a rollback to a chart without them or a
//! GitOps prune deletes them and every object of their kinds. In a chart review the chart alone
//! is read; in an upgrade a live CRD that already carries the policy is not reported (that
//! protects it on upgrade and rollback; only the chart's own policy protects it on uninstall,
//! which the rule's words say).

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::{ChartInput, CheckInput};
use crate::inventory::crd::Crd;
use crate::objects::{str_at, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

fn unprotected(chart: &crate::inventory::Inventory) -> impl Iterator<Item = &Crd> {
    chart.crds.iter().filter(|c| c.origin == Origin::Template && !c.keeps_on_delete())
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        unprotected(input.target)
            .filter(|c| input.state.crd(&c.name).is_none_or(|live| !str_at(live, &["metadata", "annotations", "helm.sh/resource-policy"]).contains("keep")))
            .map(|c| {
                Hit {
                    subject: format!("CustomResourceDefinition/{}", c.name),
                    location: c.source.clone(),
                    message: format!("{} becomes a release object of {} without helm.sh/resource-policy: keep: a rollback to a revision that does not render it (also the automatic one of --rollback-on-failure/--atomic), an upgrade with crds.enabled=false, or helm uninstall deletes it and every {}; a keep annotation on the live CRD stops the first two, not uninstall", c.name, input.to, c.kind),
                    evidence: vec!["resource-policy: <none> in the chart and on the live CRD".into()],
                    ..Hit::default()
                }
                .var("crd", c.name.clone())
            })
            .collect()
    }

    fn review(&self, chart: &ChartInput) -> Option<Vec<Hit>> {
        Some(
            unprotected(chart.chart)
                .map(|crd| {
                    Hit {
                        subject: format!("CustomResourceDefinition/{}", crd.name),
                        location: crd.source.clone(),
                        message: format!(
                            "{} is a release object without `helm.sh/resource-policy: keep`: `helm uninstall`, a rollback to a chart without it, or a GitOps prune deletes the CRD and every {} with it",
                            crd.name, crd.kind
                        ),
                        evidence: vec![format!("origin=templates resource-policy={}", crd.resource_policy.as_deref().unwrap_or("<none>"))],
                        ..Hit::default()
                    }
                    .var("crd", crd.name.clone())
                })
                .collect(),
        )
    }
}
