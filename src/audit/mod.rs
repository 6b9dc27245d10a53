//! Checks over what was rendered (and, later, what is installed): findings with stable ids.

pub mod finding;
pub mod gitops;
pub mod hooks;
