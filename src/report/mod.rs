//! Renderers for people and machines: text, JSON (serde of the report types), SARIF and
//! Markdown. Everything here is deterministic: same report, same bytes.

pub mod check;
pub mod diff;
pub mod findings;
pub mod fleet;
pub mod github;
pub mod gitops;
pub mod gitops_sarif;
pub mod hooks;
pub mod html;
pub mod html_runbook;
pub mod json_schema;
pub mod openmetrics;
pub mod output;
pub mod plan;
pub mod render;
pub mod rules;
pub mod runbook;
pub mod sarif;
pub mod status;
pub mod style;
