//! Where Helm charts come from: references, OCI registries, the local cache, and pulls. Everything
//! downstream receives verified archive bytes or a directory path from here; reading an archive is
//! the chart loader's (`helm_render::chart`). Nothing here knows the tool that uses it: the caller
//! names itself to registries (`oci::ClientOptions`) and chooses where the cache lives.

pub mod atomic_write;
pub mod cache;
pub mod oci;
pub mod progress;
pub mod pull;
pub mod reference;
pub mod versions;

pub use reference::{ChartRef, OciRef};
