//! `helm template` without Helm, on top of `gotmpl`: charts loaded as Helm loads them (`chart`),
//! values coalesced as Helm coalesces them (`values`, `value_ops`, `strvals`, `values_schema`), the
//! template function library (Sprig and Helm's own, `funcs`), YAML and JSON exactly as Helm reads
//! and writes them (`yaml`, `json`), Helm's version constraints (`version`), and the engine that
//! renders a chart's templates and assembles the output (`engine`, `render`, `manifest`).

pub mod chart;
pub mod context;
pub mod engine;
pub mod funcs;
pub mod json;
pub mod manifest;
pub mod objects;
pub mod release_record;
pub mod render;
pub mod strvals;
pub mod value_ops;
pub mod values;
pub mod values_schema;
pub mod version;
pub mod yaml;
