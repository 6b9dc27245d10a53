//! trainer-audit: pre-upgrade readiness audits for Kubeflow Trainer Helm installs.
//!
//! The library is the pipeline (chart source → archive → chart → render → inventory → audit);
//! the binary is a thin command-line layer over it (see `cli`).

pub mod audit;
pub mod cache;
pub mod cli;
pub mod cluster;
pub mod cronjob;
pub mod diff;
pub mod engine;
pub mod fleet;
pub mod gitops;
pub mod gitops_review;
pub mod inventory;
pub mod invocation;
pub mod migrate;
pub mod objects;
pub mod par;
pub mod plan;
pub mod rbac;
pub mod report;
pub mod shell;
pub mod upgrade;
pub mod webhook;
