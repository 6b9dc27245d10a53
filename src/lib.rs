//! trainer-audit: pre-upgrade readiness audits for Kubeflow Trainer Helm installs.
//!
//! The library is the pipeline (chart source → archive → chart → render → inventory → audit);
//! the binary is a thin command-line layer over it (see `cli`).

pub mod atomic_write;
pub mod audit;
pub mod chart;
pub mod cli;
pub mod cluster;
pub mod cronjob;
pub mod diff;
pub mod engine;
pub mod fleet;
pub mod gitops;
pub mod gitops_review;
pub mod gotmpl;
pub mod helm;
pub mod inventory;
pub mod invocation;
pub mod kube_version;
pub mod migrate;
pub mod objects;
pub mod par;
pub mod plan;
pub mod rbac;
pub mod report;
pub mod shell;
pub mod source;
pub mod upgrade;
pub mod validate;
pub mod value_ops;
pub mod version;
pub mod yaml;
