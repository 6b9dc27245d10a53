//! Test doubles, generators and harnesses shared by trainer-audit's tests, benches, fuzz targets
//! and xtask. The product crate never depends on this one.

pub mod apiserver;
pub mod crdcorpus;
pub mod dockerfile;
