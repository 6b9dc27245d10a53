//! Checks over what was rendered and what is installed: rules (data) run check kinds (code)
//! and produce findings with stable ids.

pub mod citation;
pub mod compat;
pub mod finding;
pub mod hooks;
pub mod input;
pub mod kinds;
pub mod quotes;
pub mod renames;
pub mod rules;
pub mod run;
pub mod verdict;
