//! Entry points for fuzzers (`fuzz/` cargo-fuzz targets and `cargo xtask fuzz`): each takes
//! arbitrary bytes, runs one reader of untrusted input with tight limits, and ignores errors —
//! only a panic, a hang or runaway memory is a finding.

use gotmpl::Limits;

/// Limits small enough that a fuzzer spends its time on parsing, not on legal but long renders.
pub fn limits() -> Limits {
    Limits { max_steps: 200_000, max_output: 1 << 20, max_total_bytes: 64 << 20, ..Limits::default() }
}

/// A chart archive: loaded, and rendered when it loads.
pub fn archive(data: &[u8]) {
    if let Ok(chart) = helm_render::chart::Chart::from_archive_bytes(data) {
        let mut options = helm_render::render::RenderOptions { limits: Some(limits()), ..Default::default() };
        options.release.name = "r".into();
        if let Ok(rendered) = helm_render::render::render_chart(&chart, &options) {
            let _ = trainer_audit::inventory::Inventory::build(&chart, &rendered, "ns");
        }
    }
}

/// YAML text through the full and the head-only reader, and back out through the emitter.
pub fn yaml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(docs) = helm_render::yaml::read_documents(&text) {
        for d in docs {
            let _ = helm_render::yaml::to_yaml(&d);
        }
    }
    let _ = helm_render::yaml::read_first_head(&text);
}

/// A values file coalesced into a chart and printed as YAML and JSON.
pub fn values(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::snippet::render_snippet_limited(&text, "{{ toYaml .Values }}{{ toJson .Values }}", limits());
}

/// A template (bytes before the first NUL) with values (after it).
pub fn template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, values) = text.split_once('\0').unwrap_or((&text, ""));
    let _ = crate::snippet::render_snippet_limited(values, template, limits());
}

/// A Helm release record's payload, as a Secret (base64 added) and as a ConfigMap.
pub fn release(data: &[u8]) {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    for (kind, payload) in [("Secret", b64.encode(data)), ("ConfigMap", String::from_utf8_lossy(data).into_owned())] {
        let record = serde_json::json!({"kind": kind, "metadata": {"name": "sh.helm.release.v1.r.v1"}, "data": {"release": payload}});
        if let Ok(r) = trainer_audit::cluster::release::decode(&record) {
            let _ = r.objects();
        }
    }
}

/// A snapshot file, read and summarised.
pub fn snapshot(data: &[u8]) {
    if let Ok(state) = trainer_audit::cluster::snapshot::parse(&String::from_utf8_lossy(data)) {
        let _ = trainer_audit::cluster::status::status(&state);
    }
}
