//! Several clusters in one run: which clusters the flags name ([`members`]), reading them
//! concurrently with a bound while the calling thread audits each as it arrives ([`read`]), the
//! per-cluster outcome and its verdict ([`audit`]), and printing reports in input order however
//! the reads finish ([`spool`]). A cluster that cannot be read or audited is that cluster's
//! failure; the others go on. Charts come from one [`crate::upgrade::store::ChartStore`] for the
//! whole fleet, so each version is pulled once and each (version, release, values) rendered once.

pub mod audit;
pub mod members;
pub mod read;
pub mod spool;

use serde::Serialize;

use crate::cluster::source::Source;

/// One cluster of the fleet: the name reports use, and where it is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub name: String,
    pub source: Source,
}

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The flags name no cluster, one twice, or something unreadable; exit 2 before any read.
    #[error("{0}")]
    Usage(String),
}
