//! Test doubles, generators and harnesses shared by trainer-audit's tests, benches, fuzz targets
//! and xtask. The product crate never depends on this one.

pub mod celcorpus;
pub mod celdiff;
pub mod controlplane;
pub mod crdcorpus;
pub mod dockerfile;
pub mod explore;
pub mod fake_api;
pub mod fuzz;
pub mod helm_state;
pub mod krew;
pub mod layers;
pub mod openmetrics;
pub mod registry;
pub mod release;
pub mod scenario;
pub mod snippet;
pub mod standin;
pub mod webhookcorpus;
