//! trainer-audit: pre-upgrade readiness audits for Kubeflow Trainer Helm installs.
//!
//! The library is the pipeline (chart source → archive → chart → render → inventory → audit);
//! the binary is a thin command-line layer over it (see `cli`).

pub mod audit;
pub mod chart;
pub mod cli;
pub mod cluster;
pub mod diff;
#[doc(hidden)]
pub mod fuzzing;
pub mod gitops;
pub mod gotmpl;
pub mod helm;
pub mod inventory;
pub mod migrate;
pub mod plan;
pub mod report;
pub mod source;
pub mod validate;
