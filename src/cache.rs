//! Where trainer-audit keeps its chart cache (`chart_source::cache`): `$TRAINER_AUDIT_CACHE_DIR`,
//! else `$XDG_CACHE_HOME/trainer-audit`, else `~/.cache/trainer-audit`.

use std::path::PathBuf;

use chart_source::cache::Cache;

pub const CACHE_DIR_ENV: &str = "TRAINER_AUDIT_CACHE_DIR";

/// The cache at its default location, or None when there is no home to put it in.
pub fn chart_cache() -> Option<Cache> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    env(CACHE_DIR_ENV)
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("trainer-audit")))
        .or_else(|| env("HOME").map(|h| h.join(".cache/trainer-audit")))
        .map(Cache::new)
}
