//! The target chart's CRDs over the live objects, for one check: compiled once at the cluster's
//! Kubernetes version and shared by the kinds that read them — `schema` (where each stored
//! object stands under the target CRDs), `schema-crd` (what the cluster's API server says of the
//! CRDs' own rules) and `migrate` (the conversions `trainer-audit migrate` writes, validated
//! against the same CRDs). Computed on first use: a check whose rules never ask pays nothing.

use std::cell::OnceCell;

use super::CheckInput;
use crate::migrate::{self, Migration, Options, Source};
use kube_validate::stored::{CrdSet, Survey, ASSUMED_KUBE};
use kube_version::KubeVersion;

/// What a check derives from the target CRDs, once.
#[derive(Default)]
pub struct Derived {
    crds: OnceCell<CrdSet>,
    survey: OnceCell<Survey>,
    migration: OnceCell<Migration>,
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
        self.derived
            .migration
            .get_or_init(|| migrate::migrate(&self.state.objects, &Options::new(false, Source::Cluster), self.target_crds()))
    }
}
