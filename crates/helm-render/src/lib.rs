//! Helm on top of `gotmpl`: the template function library (Sprig and Helm's own), YAML and JSON
//! exactly as Helm reads and writes them, and the engine that renders a chart's templates.

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
