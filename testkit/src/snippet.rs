//! One template rendered in a throwaway chart named `probe` (version 0.1.0, release
//! `release-name` in `default`), exactly as the oracle renders such a chart. Used by the
//! engine's table tests and the snippet conformance harness.

use std::rc::Rc;

use gotmpl::{Limits, Value};
use helm_render::context::{chart_data, ChartMeta, ReleaseInfo};
use helm_render::engine::{render, TemplateFile};
use helm_render::objects::{Capabilities, Files};

pub const TEMPLATE_NAME: &str = "probe/templates/t.yaml";

/// Chart defaults from a values.yaml text: documents merged, nulls dropped (what coalescing does
/// to defaults when the user supplies nothing).
pub fn default_values(values_yaml: &str) -> Result<Value, String> {
    let merged = helm_render::chart::parse_values(values_yaml).map_err(|e| e.to_string())?;
    Ok(helm_render::values::clean(&merged))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A map stored into itself (twice, so every walk fans out) must end every walk quickly:
    /// printing, serialising and copying are bounded by depth and size.
    #[test]
    fn cyclic_maps_are_bounded() {
        let started = std::time::Instant::now();
        let template = r#"{{ $m := dict "a" 1 }}{{ $_ := set $m "self" $m }}{{ $_ := set $m "twin" $m }}{{ toJson $m | len }}|{{ toYaml $m | len }}|{{ deepCopy $m | kindOf }}"#;
        let out = render_snippet("a: 1\n", template).unwrap();
        assert_eq!(out, "0|0|map");
        let err =
            render_snippet("a: 1\n", r#"{{ $m := dict "a" 1 }}{{ $_ := set $m "self" $m }}{{ $_ := set $m "twin" $m }}{{ toString $m }}"#)
                .unwrap_err();
        assert!(err.contains("exceeds the 16777216-byte limit"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
}
