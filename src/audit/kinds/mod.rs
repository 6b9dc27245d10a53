//! Check kinds: the code behind rules. Each kind reads the [`CheckInput`] and returns hits; the
//! rule that names it supplies id, severity and words. Kinds are generic (ownership of whatever
//! the target owns, fields removed between whatever two CRD schemas), so rules stay data.

mod chart;
mod ownership;
mod runtimes;
mod schema;
mod versions;

use std::collections::BTreeMap;

use super::input::CheckInput;
use super::rules::Rule;

/// One thing a kind found.
#[derive(Debug, Clone, Default)]
pub struct Hit {
    pub subject: String,
    pub location: String,
    pub message: String,
    pub evidence: Vec<String>,
    /// Filled into the rule's fix template (`{commands}`, `{object}`, …).
    pub vars: BTreeMap<String, String>,
}

impl Hit {
    pub fn new(subject: impl Into<String>, message: impl Into<String>) -> Hit {
        Hit { subject: subject.into(), message: message.into(), ..Hit::default() }
    }

    pub fn evidence(mut self, e: impl Into<String>) -> Hit {
        self.evidence.push(e.into());
        self
    }

    pub fn var(mut self, k: &str, v: impl Into<String>) -> Hit {
        self.vars.insert(k.to_string(), v.into());
        self
    }
}

pub struct KindSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub required: &'static [&'static str],
    pub optional: &'static [&'static str],
    pub run: fn(&Rule, &CheckInput) -> Vec<Hit>,
}

pub const KINDS: &[KindSpec] = &[
    KindSpec {
        name: "upgrade-gate",
        summary: "the upgrade skips a version every install must pass through",
        required: &["via"],
        optional: &[],
        run: versions::upgrade_gate,
    },
    KindSpec {
        name: "kube-version",
        summary: "the cluster is older than the target needs",
        required: &["min"],
        optional: &[],
        run: versions::kube_version,
    },
    KindSpec {
        name: "release-stuck",
        summary: "the Helm release is pending or failed",
        required: &[],
        optional: &[],
        run: versions::release_stuck,
    },
    KindSpec {
        name: "ownership",
        summary: "live objects the target will own lack this release's Helm metadata",
        required: &[],
        optional: &["kinds", "except"],
        run: ownership::ownership,
    },
    KindSpec {
        name: "immutable-field",
        summary: "the target changes a field the API server will not update",
        required: &[],
        optional: &[],
        run: ownership::immutable_field,
    },
    KindSpec {
        name: "field-removed",
        summary: "live objects use fields the target CRD schemas drop or retype",
        required: &[],
        optional: &["kinds"],
        run: schema::field_removed,
    },
    KindSpec {
        name: "stale-crd",
        summary: "a CRD from a chart's crds/ is older live than the target's (Helm never upgrades them)",
        required: &[],
        optional: &[],
        run: schema::stale_crd,
    },
    KindSpec {
        name: "crd-keep",
        summary: "target CRDs are release objects without the keep policy",
        required: &[],
        optional: &[],
        run: schema::crd_keep,
    },
    KindSpec {
        name: "finalizer",
        summary: "objects carry a finalizer (stuck when also deleting)",
        required: &["finalizer"],
        optional: &[],
        run: runtimes::finalizer,
    },
    KindSpec {
        name: "runtime-handoff",
        summary: "runtimes the release owns that the target no longer renders (Helm deletes them)",
        required: &[],
        optional: &[],
        run: runtimes::handoff,
    },
    KindSpec {
        name: "runtime-drift",
        summary: "live runtimes differ from what the target's installer will force-apply",
        required: &[],
        optional: &[],
        run: runtimes::drift,
    },
    KindSpec {
        name: "label-bypass",
        summary: "user objects carry a label that skips validation",
        required: &["label"],
        optional: &[],
        run: runtimes::label_bypass,
    },
    KindSpec {
        name: "crd-present",
        summary: "CRDs of a group (and version) exist in the cluster",
        required: &["group"],
        optional: &["version"],
        run: chart::crd_present,
    },
    KindSpec {
        name: "values-unknown-key",
        summary: "user values the target chart does not know (Helm ignores them)",
        required: &[],
        optional: &[],
        run: chart::values_unknown,
    },
    KindSpec {
        name: "hook-finding",
        summary: "a `hooks` review finding for the target chart under the detected engine",
        required: &["hook_rule"],
        optional: &["namespace_level", "engines"],
        run: chart::hook_finding,
    },
    KindSpec {
        name: "feature-gates",
        summary: "feature gates or an older controller image the target's strict config decoding rejects",
        required: &["known"],
        optional: &["values_path", "image_tag_path"],
        run: chart::feature_gates,
    },
];

pub fn kind(name: &str) -> Option<&'static KindSpec> {
    KINDS.iter().find(|k| k.name == name)
}
