//! `release-size`: the record Helm writes for the target revision (the release as JSON, gzipped
//! and base64-encoded: helm_render::release_record) against the 1 MiB Kubernetes allows a Secret's
//! or ConfigMap's data (`core.MaxSecretSize`), when Helm keeps its records in either. A record
//! that does not fit stops `helm upgrade` before it changes anything (the pending record is
//! created first); one within the estimate's uncertainty of the limit may or may not fit.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::finding::Severity;
use crate::audit::input::CheckInput;
use helm_render::release_record::MAX_RECORD_BYTES;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// The hit for a record of `stored` bytes (± `uncertainty`) kept in a `kind`, if any: an error
/// past the limit, a warning within the uncertainty of it.
pub fn judge(stored: usize, uncertainty: usize, kind: &str, name: &str, to: &str) -> Option<Hit> {
    let limit = MAX_RECORD_BYTES;
    let (severity, how) = if stored > limit + uncertainty {
        (Severity::Error, format!("{} bytes over", stored - limit))
    } else if stored + uncertainty > limit {
        (Severity::Warning, format!("within ±{uncertainty} bytes of it, so it may not fit"))
    } else {
        return None;
    };
    Some(
        Hit::new(
            format!("{kind}/{name}"),
            format!("the Helm release record of {to} is about {stored} bytes, and a {kind} holds at most {limit}: {how}"),
        )
        .evidence(format!("record: release JSON, gzip (best compression), base64: {stored} bytes (±{uncertainty})"))
        .var("size", stored.to_string())
        .var("limit", limit.to_string())
        .var("kind", kind)
        .severity(severity),
    )
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(r) = input.record else { return Vec::new() };
        let Some(kind) = r.driver.object_kind() else { return Vec::new() };
        judge(r.size.stored, r.size.uncertainty(), kind, &r.name, &input.to.to_string())
            .map(|h| h.evidence(format!("storage driver: {} ({})", r.driver.name(), r.driver_from)))
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_api_servers_1_mib() {
        let u = 10_000;
        assert!(judge(MAX_RECORD_BYTES - u - 1, u, "Secret", "sh.helm.release.v1.r.v2", "2.3.0").is_none(), "just under, beyond doubt");
        let near = judge(MAX_RECORD_BYTES - u + 1, u, "Secret", "sh.helm.release.v1.r.v2", "2.3.0").unwrap();
        assert_eq!(near.severity, Some(Severity::Warning));
        let at = judge(MAX_RECORD_BYTES, u, "Secret", "sh.helm.release.v1.r.v2", "2.3.0").unwrap();
        assert_eq!(at.severity, Some(Severity::Warning), "at the limit the estimate cannot tell");
        let over = judge(MAX_RECORD_BYTES + u + 1, u, "ConfigMap", "sh.helm.release.v1.r.v2", "2.3.0").unwrap();
        assert_eq!(over.severity, Some(Severity::Error));
        assert!(over.message.contains("a ConfigMap holds at most 1048576"), "{}", over.message);
        // Exactly: with no uncertainty the limit itself fits and one byte more does not.
        assert!(judge(MAX_RECORD_BYTES, 0, "Secret", "sh.helm.release.v1.r.v2", "x").is_none());
        assert_eq!(judge(MAX_RECORD_BYTES + 1, 0, "Secret", "sh.helm.release.v1.r.v2", "x").unwrap().severity, Some(Severity::Error));
    }
}
