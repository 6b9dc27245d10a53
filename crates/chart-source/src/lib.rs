//! Where charts come from: references, OCI registries, the local cache, and archive loading.
//! Everything downstream receives verified archive bytes or a directory path from here.

pub mod atomic_write;
pub mod cache;
pub mod oci;
pub mod progress;
pub mod pull;
pub mod reference;
pub mod versions;

pub use reference::{ChartRef, OciRef};
