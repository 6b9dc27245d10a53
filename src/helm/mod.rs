//! Helm on top of `gotmpl`: the template function library (Sprig and Helm's own), YAML and JSON
//! exactly as Helm reads and writes them, and the engine that renders a chart's templates.

pub mod json;
pub mod yaml;
