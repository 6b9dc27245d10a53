//! Renderers for people and machines: text, JSON (serde of the report types), SARIF, Markdown,
//! HTML, GitHub workflow commands, OpenMetrics; every command's report is a
//! [`document::Document`], and [`output`] is the one printer (format, destination, exit code).
//! Everything here is deterministic: same report, same bytes.

pub mod check;
pub mod cluster;
pub mod diff;
pub mod document;
pub mod findings;
pub mod fix;
pub mod fleet;
pub mod format;
pub mod github;
pub mod gitops;
pub mod gitops_sarif;
pub mod hooks;
pub mod html;
pub mod html_runbook;
pub mod json_schema;
pub mod migrate;
pub mod openmetrics;
pub mod output;
pub mod plan;
pub mod render;
pub mod rules;
pub mod runbook;
pub mod sarif;
pub mod source;
pub mod status;
pub mod style;
