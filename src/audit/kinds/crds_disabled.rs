//! `crds-disabled`: CRDs the target chart ships that the upgrade leaves out because the user's
//! values turn the chart's CRD switch off (`crds.enabled`, Trainer 2.3+: every
//! `templates/crd/*.yaml` is wrapped in `if .Values.crds.enabled`), and that the cluster does not
//! have. Whoever manages the CRDs outside the chart must add the ones a new release brings (the
//! 2.4 line adds OptimizationJob): objects of a kind without its CRD cannot be created.
//! The CRDs come from the target rendered once more with the switch on
//! ([`CheckInput::target_crds_on`]); the printed command renders and applies just the missing ones.

use serde::Deserialize;

use super::migrate::local_chart;
use super::{Check, Hit};
use crate::audit::input::{CheckInput, CRDS_SWITCH};
use crate::shell::quote;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// `trainer-audit render` of one template of the target with the switch on, as this check
/// reached the chart (registry flags included).
fn render_command(input: &CheckInput, template: &str) -> String {
    let chart = match local_chart(input) {
        Some(path) => quote(&path),
        None => format!("{} --version {}{}", quote(&input.repository), quote(&input.to.to_string()), input.registry_flags),
    };
    format!(
        "trainer-audit render {chart} --release {} -n {} --set {}=true -s {}",
        quote(&input.release_name),
        quote(&input.namespace),
        CRDS_SWITCH.join("."),
        quote(template)
    )
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(on) = input.target_crds_on else { return Vec::new() };
        let switch = CRDS_SWITCH.join(".");
        let chart_prefix = format!("{}/", on.chart.name);
        on.crds
            .iter()
            .filter(|c| !input.target.crds.iter().any(|t| t.name == c.name))
            .filter(|c| input.state.crd(&c.name).is_none())
            .map(|crd| {
                let template = crd.source.strip_prefix(&chart_prefix).unwrap_or(&crd.source);
                Hit::new(
                    format!("CustomResourceDefinition/{}", crd.name),
                    format!(
                        "the target {} ships CRD {} ({}) in {template}, but the upgrade's values turn {switch} off so Helm does not install it, and the cluster does not have it: no {} can be created, and a controller that watches the kind cannot start that watch",
                        input.to, crd.name, crd.kind, crd.kind
                    ),
                )
                .evidence(format!("{switch}: {}", user_switch(input)))
                .evidence(format!("kubectl get crd {}: not found", crd.name))
                .located(crd.source.clone())
                .var("crd", crd.name.clone())
                .var("commands", format!("{} | kubectl apply --server-side -f -", render_command(input, template)))
            })
            .collect()
    }
}

/// The switch as the user's values set it (JSON text).
fn user_switch(input: &CheckInput) -> String {
    let [section, key] = CRDS_SWITCH;
    input.user_values.get(section).and_then(|s| s.get(key)).map(ToString::to_string).unwrap_or_else(|| "(unset)".into())
}
