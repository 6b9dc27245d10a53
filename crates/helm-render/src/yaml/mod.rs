//! YAML as Helm reads and writes it: sigs.k8s.io/yaml reading (go-yaml v2 typing, then JSON)
//! and go-yaml v2's emitter for `toYaml`. Events come from `saphyr-parser`; typing and emitting
//! are ours, because no maintained crate reproduces go-yaml v2 byte for byte.

pub mod emit;
pub mod read;
pub mod resolve;

pub use emit::{to_yaml, EmitError};
pub use read::{read_documents, read_first, read_first_head, YamlError};
