//! The target chart's CRDs over the live objects, for one check: compiled once at the cluster's
//! Kubernetes version and shared by the kinds that read them — `schema` (where each stored
//! object stands under the target CRDs), `schema-crd` (what the cluster's API server says of the
//! CRDs' own rules) and `migrate` (the conversions `trainer-audit migrate` writes, validated
//! against the same CRDs); and the one pass over the live TrainJobs (`trainjobs`). Computed on
//! first use: a check whose rules never ask pays nothing.

use std::cell::OnceCell;

use super::CheckInput;
use crate::migrate::{self, Migration, Options, Source};
use kube_validate::stored::{CrdSet, Survey, ASSUMED_KUBE};
use kube_version::KubeVersion;

/// What a check derives from the target CRDs and the live objects, once.
#[derive(Default)]
pub struct Derived {
    crds: OnceCell<CrdSet>,
    survey: OnceCell<Survey>,
    migration: OnceCell<Migration>,
    migrated: OnceCell<Migrated>,
    evidence: OnceCell<Vec<String>>,
    pub(super) trainjobs: OnceCell<super::trainjobs::TrainJobFacts>,
}

/// Subjects (`Kind/ns/name`) of the live objects `migrate` converts and writes back, and of
/// those it refuses, with the reason.
#[derive(Debug, Default)]
pub struct Migrated {
    pub converted: std::collections::HashSet<String>,
    pub refused: Vec<(String, String)>,
}

impl CheckInput<'_> {
    /// The cluster's Kubernetes version, and whether it is known (else [`ASSUMED_KUBE`]).
    pub fn kube(&self) -> (KubeVersion, bool) {
        match self.state.kube_version() {
            Some(k) => (k.minor_version(), true),
            None => (ASSUMED_KUBE, false),
        }
    }

    /// Every CRD the target chart renders, compiled for the cluster.
    pub fn target_crds(&self) -> &CrdSet {
        self.derived.crds.get_or_init(|| {
            let crds = self.target.objects.iter().filter(|o| o.identity.kind == "CustomResourceDefinition").map(|o| &o.body);
            CrdSet::new(crds, self.kube().0)
        })
    }

    /// Every live object of the target CRDs' kinds, assessed under them.
    pub fn survey(&self) -> &Survey {
        self.derived.survey.get_or_init(|| self.target_crds().survey(self.state.objects.iter()))
    }

    /// What `trainer-audit migrate` converts among the live objects (2.1 → 2.2+ fields).
    pub fn migration(&self) -> &Migration {
        self.derived.migration.get_or_init(|| {
            // The kinds read the verdicts and notes, never the objects: not kept (memory).
            let options = Options { keep_objects: false, ..Options::new(false, Source::Cluster) };
            migrate::migrate(&self.state.objects, &options, self.target_crds())
        })
    }

    /// Per conversion of [`CheckInput::migration`], in its order: `Kind/ns/name: level path, …`
    /// (its notes that name a field). Made once on the pool's cores: each of `migrate`'s steps
    /// lists the same objects.
    pub fn migration_evidence(&self) -> &[String] {
        self.derived.evidence.get_or_init(|| {
            crate::par::map(&self.migration().conversions, |c| {
                let notes: Vec<String> =
                    c.notes.iter().filter(|n| !n.path.is_empty()).map(|n| format!("{} {}", n.level.word(), n.path)).collect();
                format!("{}: {}", subject(c), notes.join(", "))
            })
        })
    }

    /// The subjects of [`CheckInput::migration`]'s conversions, for the kinds that name them
    /// (each `schema` rule asked anew, building 25,000 names per rule).
    pub fn migrated(&self) -> &Migrated {
        self.derived.migrated.get_or_init(|| {
            let mut out = Migrated::default();
            for c in &self.migration().conversions {
                let subject = subject(c);
                if c.refused() {
                    let why = c.notes.iter().filter(|n| n.level == migrate::Level::Refused).map(|n| n.text.as_str()).collect::<Vec<_>>();
                    out.refused.push((subject, why.join("; ")));
                } else if c.write || !c.before_crds.is_empty() {
                    out.converted.insert(subject);
                }
            }
            out
        })
    }
}

/// `Kind/ns/name` (`Kind/name` without a namespace): how findings name a converted object.
pub fn subject(c: &migrate::Conversion) -> String {
    if c.id.namespace.is_empty() {
        format!("{}/{}", c.id.kind, c.id.name)
    } else {
        format!("{}/{}/{}", c.id.kind, c.id.namespace, c.id.name)
    }
}
