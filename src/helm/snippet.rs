//! One template rendered in a throwaway chart named `probe` (version 0.1.0, release
//! `release-name` in `default`), exactly as the oracle renders such a chart. Used by the
//! engine's table tests and the snippet conformance harness.

use std::rc::Rc;

use crate::gotmpl::{Limits, Map, Value};
use crate::helm::context::{chart_data, ChartMeta, ReleaseInfo};
use crate::helm::engine::{render, TemplateFile};
use crate::helm::objects::{Capabilities, Files};
use crate::helm::yaml::read_documents;

pub const TEMPLATE_NAME: &str = "probe/templates/t.yaml";

/// Chart defaults from a values.yaml text: documents merged, nulls dropped (what coalescing does
/// to defaults when the user supplies nothing).
pub fn default_values(values_yaml: &str) -> Result<Value, String> {
    let docs = read_documents(values_yaml)
        .map_err(|e| format!("cannot load values.yaml: cannot unmarshal yaml document: error converting YAML to JSON: {}", e.0))?;
    let mut merged = Map::new();
    for doc in docs {
        match doc {
            Value::Map(m) => merge_maps(&mut merged, &m.entries.borrow()),
            Value::Nil | Value::Invalid => {}
            _ => return Err("cannot load values.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}".into()),
        }
    }
    Ok(drop_nils(&Value::map(merged)))
}

fn merge_maps(dst: &mut Map, src: &Map) {
    for (k, v) in src {
        match (dst.get(k), v) {
            (Some(Value::Map(d)), Value::Map(s)) => {
                let mut inner = d.entries.borrow().clone();
                merge_maps(&mut inner, &s.entries.borrow());
                dst.insert(k.clone(), Value::map(inner));
            }
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

fn drop_nils(v: &Value) -> Value {
    match v {
        Value::Map(m) => {
            Value::map(m.entries.borrow().iter().filter(|(_, v)| !v.is_nil()).map(|(k, v)| (k.clone(), drop_nils(v))).collect())
        }
        other => other.clone(),
    }
}

/// Renders `template` with `values_yaml` as the chart's values.yaml.
pub fn render_snippet(values_yaml: &str, template: &str) -> Result<String, String> {
    render_snippet_limited(values_yaml, template, Limits::default())
}

/// As [`render_snippet`], with explicit execution limits.
pub fn render_snippet_limited(values_yaml: &str, template: &str, limits: Limits) -> Result<String, String> {
    let values = default_values(values_yaml)?;
    let meta = ChartMeta { api_version: "v2".into(), name: "probe".into(), version: "0.1.0".into(), ..ChartMeta::default() };
    let caps = Rc::new(Capabilities::client_only(None, &[]));
    let data = chart_data(&meta, true, values, &ReleaseInfo::default(), &caps, Files::default(), Value::empty_map());
    let file = TemplateFile { name: TEMPLATE_NAME.into(), text: template.into(), data, base_path: "probe/templates".into() };
    let mut out = render(&[file], limits).map_err(|e| e.0)?;
    Ok(out.remove(TEMPLATE_NAME).unwrap_or_default())
}
