//! The release record Helm v4.2.3 stores for a revision, and its size: the release as JSON
//! (`pkg/release/v1` `Release`: name, info, chart, config, manifest, hooks, version, namespace,
//! apply method — the chart with its metadata, templates, values, schema and files but none of its
//! subcharts, whose field `encoding/json` does not see), gzipped at `gzip.BestCompression` and
//! base64-encoded (`pkg/storage/driver/util.go` `encodeRelease`). The Secret and ConfigMap
//! drivers store that text under the key `release`; Kubernetes refuses a Secret or ConfigMap
//! whose data values add up to more than 1 MiB (`core.MaxSecretSize`, k8s.io/kubernetes
//! `pkg/apis/core/validation/validation.go` `ValidateSecret`, `ValidateConfigMap`).
//!
//! How exact: the JSON is written as Go writes it (field order, `omitempty`, sorted map keys,
//! HTML-safe escaping, `[]byte` as base64) with two stand-ins — every file's `modtime` and the
//! release's timestamps are fixed texts of a real one's length, and a `Chart.lock` (which the
//! loader does not keep) is written as absent. The gzip stream is flate2's at level 9, not Go's
//! `compress/flate`: the compressed size differs by a fraction of a percent
//! ([`RecordSize::uncertainty`]), which findings near the limit say.

use std::io::Write;

use base64::Engine;
use gotmpl::{Map, Value};

use crate::chart::Chart;
use crate::json::{to_json, write_string, JsonError, COMPACT};
use crate::render::Rendered;

/// `core.MaxSecretSize`: the most bytes a Secret's (or ConfigMap's) data values may hold together.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// A timestamp as Go marshals `time.Now()` in UTC (RFC 3339 with nanoseconds).
const NOW: &str = "2026-01-02T03:04:05.123456789Z";
/// A file's modification time from a chart archive (whole seconds).
const MODTIME: &str = "2026-01-02T03:04:05Z";

/// What the record says besides the chart and the render.
#[derive(Debug, Clone)]
pub struct RecordMeta<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub revision: i64,
    /// `pending-upgrade` when an upgrade first writes it, `pending-install` for an install.
    pub status: &'a str,
    /// `Preparing upgrade`, `Initial install underway`.
    pub description: &'a str,
    /// `ssa` or `csa`; empty for none.
    pub apply_method: &'a str,
    /// The user-supplied values (`config`).
    pub config: &'a Map,
}

/// The sizes of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RecordSize {
    /// The release JSON.
    pub json: usize,
    /// Its gzip stream.
    pub gzip: usize,
    /// The base64 text the driver stores: what counts against [`MAX_RECORD_BYTES`].
    pub stored: usize,
}

impl RecordSize {
    /// How far the stored size may be from Helm's (its deflate is not ours): 1.5% of it (the
    /// differential against helm 4.2.3 found up to 0.9%).
    pub fn uncertainty(&self) -> usize {
        self.stored * 3 / 200
    }
}

fn field(out: &mut String, first: &mut bool, name: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    write_string(out, name, true);
    out.push(':');
}

fn string_field(out: &mut String, first: &mut bool, name: &str, value: &str) {
    if !value.is_empty() {
        field(out, first, name);
        write_string(out, value, true);
    }
}

fn strings(out: &mut String, values: &[String]) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, v, true);
    }
    out.push(']');
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn file(out: &mut String, name: &str, data: &[u8]) {
    out.push_str("{\"name\":");
    write_string(out, name, true);
    out.push_str(",\"data\":");
    write_string(out, &b64(data), true);
    out.push_str(",\"modtime\":\"");
    out.push_str(MODTIME);
    out.push_str("\"}");
}

/// `chart.Metadata` as `encoding/json` writes it.
fn metadata(out: &mut String, chart: &Chart) -> Result<(), JsonError> {
    let m = &chart.metadata;
    let mut first = true;
    out.push('{');
    string_field(out, &mut first, "name", &m.name);
    string_field(out, &mut first, "home", &m.home);
    if !m.sources.is_empty() {
        field(out, &mut first, "sources");
        strings(out, &m.sources);
    }
    string_field(out, &mut first, "version", &m.version);
    string_field(out, &mut first, "description", &m.description);
    if !m.keywords.is_empty() {
        field(out, &mut first, "keywords");
        strings(out, &m.keywords);
    }
    if !m.maintainers.is_empty() {
        field(out, &mut first, "maintainers");
        out.push('[');
        for (i, mt) in m.maintainers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let mut f = true;
            out.push('{');
            string_field(out, &mut f, "name", &mt.name);
            string_field(out, &mut f, "email", &mt.email);
            string_field(out, &mut f, "url", &mt.url);
            out.push('}');
        }
        out.push(']');
    }
    string_field(out, &mut first, "icon", &m.icon);
    string_field(out, &mut first, "apiVersion", &m.api_version);
    string_field(out, &mut first, "condition", &m.condition);
    string_field(out, &mut first, "tags", &m.tags);
    string_field(out, &mut first, "appVersion", &m.app_version);
    if m.deprecated {
        field(out, &mut first, "deprecated");
        out.push_str("true");
    }
    if let Some(annotations) = m.annotations.as_ref().filter(|a| !a.is_empty()) {
        let mut sorted = annotations.clone();
        sorted.sort();
        field(out, &mut first, "annotations");
        out.push('{');
        for (i, (k, v)) in sorted.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_string(out, k, true);
            out.push(':');
            write_string(out, v, true);
        }
        out.push('}');
    }
    string_field(out, &mut first, "kubeVersion", &m.kube_version);
    if !m.dependencies.is_empty() {
        field(out, &mut first, "dependencies");
        out.push('[');
        for (i, d) in m.dependencies.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            write_string(out, &d.name, true);
            let mut f = false;
            string_field(out, &mut f, "version", &d.version);
            out.push_str(",\"repository\":");
            write_string(out, &d.repository, true);
            string_field(out, &mut f, "condition", &d.condition);
            if !d.tags.is_empty() {
                field(out, &mut f, "tags");
                strings(out, &d.tags);
            }
            if d.enabled {
                field(out, &mut f, "enabled");
                out.push_str("true");
            }
            if !d.import_values.is_empty() {
                field(out, &mut f, "import-values");
                out.push_str(&to_json(&Value::list(d.import_values.clone()), &COMPACT)?);
            }
            string_field(out, &mut f, "alias", &d.alias);
            out.push('}');
        }
        out.push(']');
    }
    string_field(out, &mut first, "type", &m.chart_type);
    out.push('}');
    Ok(())
}

/// The release JSON Helm v4.2.3 marshals for this revision (subcharts' own files are not in it).
pub fn release_json(chart: &Chart, rendered: &Rendered, meta: &RecordMeta) -> Result<String, JsonError> {
    let mut out = String::with_capacity(1 << 20);
    let mut first = true;
    out.push('{');
    string_field(&mut out, &mut first, "name", meta.name);
    // info: first_deployed, last_deployed, description, status, notes.
    field(&mut out, &mut first, "info");
    out.push_str(&format!("{{\"first_deployed\":\"{NOW}\",\"last_deployed\":\"{NOW}\""));
    let mut f = false;
    string_field(&mut out, &mut f, "description", meta.description);
    string_field(&mut out, &mut f, "status", meta.status);
    if let Some(notes) = rendered.notes.as_deref() {
        string_field(&mut out, &mut f, "notes", notes);
    }
    out.push('}');
    // chart: metadata, lock, templates, values, schema, schemamodtime, files, modtime.
    field(&mut out, &mut first, "chart");
    out.push_str("{\"metadata\":");
    metadata(&mut out, chart)?;
    out.push_str(",\"lock\":null,\"templates\":[");
    for (i, t) in chart.templates.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        file(&mut out, &t.path, &t.data);
    }
    out.push_str("],\"values\":");
    out.push_str(&to_json(&chart.values, &COMPACT)?);
    out.push_str(",\"schema\":");
    match &chart.schema {
        Some(s) => write_string(&mut out, &b64(s), true),
        None => out.push_str("null"),
    }
    out.push_str(&format!(",\"schemamodtime\":\"{}\",\"files\":[", if chart.schema.is_some() { MODTIME } else { "0001-01-01T00:00:00Z" }));
    for (i, t) in chart.files.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        file(&mut out, &t.path, &t.data);
    }
    out.push_str(&format!("],\"modtime\":\"{MODTIME}\"}}"));
    if !meta.config.is_empty() {
        field(&mut out, &mut first, "config");
        out.push_str(&to_json(&Value::map(meta.config.clone()), &COMPACT)?);
    }
    string_field(&mut out, &mut first, "manifest", &rendered.release_manifest(false));
    if !rendered.hooks.is_empty() {
        field(&mut out, &mut first, "hooks");
        out.push('[');
        for (i, h) in rendered.hooks.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let mut f = true;
            out.push('{');
            string_field(&mut out, &mut f, "name", &h.name);
            string_field(&mut out, &mut f, "kind", &h.kind);
            string_field(&mut out, &mut f, "path", &h.path);
            string_field(&mut out, &mut f, "manifest", &h.content);
            if !h.events.is_empty() {
                field(&mut out, &mut f, "events");
                strings(&mut out, &h.events);
            }
            field(&mut out, &mut f, "last_run");
            out.push_str("{\"phase\":\"\"}");
            if h.weight != 0 {
                field(&mut out, &mut f, "weight");
                out.push_str(&h.weight.to_string());
            }
            if !h.delete_policies.is_empty() {
                field(&mut out, &mut f, "delete_policies");
                strings(&mut out, &h.delete_policies);
            }
            if !h.output_log_policies.is_empty() {
                field(&mut out, &mut f, "output_log_policies");
                strings(&mut out, &h.output_log_policies);
            }
            out.push('}');
        }
        out.push(']');
    }
    if meta.revision != 0 {
        field(&mut out, &mut first, "version");
        out.push_str(&meta.revision.to_string());
    }
    string_field(&mut out, &mut first, "namespace", meta.namespace);
    string_field(&mut out, &mut first, "apply_method", meta.apply_method);
    out.push('}');
    Ok(out)
}

/// `encodeRelease`: the text the driver stores.
pub fn encode(json: &str) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(json.len() / 4), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(json.as_bytes());
    let bytes = gz.finish().unwrap_or_default();
    b64(&bytes)
}

/// The sizes of the record Helm writes for this revision.
pub fn record_size(chart: &Chart, rendered: &Rendered, meta: &RecordMeta) -> Result<RecordSize, JsonError> {
    let json = release_json(chart, rendered, meta)?;
    let stored = encode(&json);
    let gzip = stored.len() / 4 * 3 - stored.bytes().rev().take_while(|b| *b == b'=').count();
    Ok(RecordSize { json: json.len(), gzip, stored: stored.len() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::ChartFile;
    use crate::render::{render_chart, RenderOptions};

    fn chart(files: &[(&str, &str)]) -> Chart {
        let files = files.iter().map(|(p, d)| ChartFile { path: p.to_string(), data: d.as_bytes().into() }).collect();
        Chart::from_files(files).unwrap()
    }

    #[test]
    fn the_json_is_helms_shape() {
        let c = chart(&[
            ("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.2.3\nannotations: {b: '2', a: '1'}\n"),
            ("values.yaml", "num: 1\ns: x<y\n"),
            ("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"),
            ("templates/NOTES.txt", "hello"),
            ("README.md", "readme"),
        ]);
        let rendered = render_chart(&c, &RenderOptions::default()).unwrap();
        let config = Map::default();
        let meta = RecordMeta {
            name: "r",
            namespace: "ns",
            revision: 2,
            status: "pending-upgrade",
            description: "Preparing upgrade",
            apply_method: "ssa",
            config: &config,
        };
        let json = release_json(&c, &rendered, &meta).unwrap();
        assert!(json.starts_with("{\"name\":\"r\",\"info\":{\"first_deployed\":"), "{json}");
        assert!(json.contains("\"description\":\"Preparing upgrade\",\"status\":\"pending-upgrade\",\"notes\":\"hello\"}"), "{json}");
        assert!(
            json.contains(
                "\"metadata\":{\"name\":\"demo\",\"version\":\"1.2.3\",\"apiVersion\":\"v2\",\"annotations\":{\"a\":\"1\",\"b\":\"2\"}}"
            ),
            "{json}"
        );
        assert!(json.contains("\"values\":{\"num\":1,\"s\":\"x\\u003cy\"}"), "Go's HTML-safe escaping: {json}");
        assert!(json.contains("\"files\":[{\"name\":\"README.md\",\"data\":\"cmVhZG1l\""), "{json}");
        assert!(json.ends_with("\"version\":2,\"namespace\":\"ns\",\"apply_method\":\"ssa\"}"), "{json}");
        assert!(!json.contains("\"config\""), "no user values, no config");
        let size = record_size(&c, &rendered, &meta).unwrap();
        assert_eq!(size.stored, encode(&json).len());
        assert_eq!(size.stored % 4, 0);
        assert!(size.gzip < size.json && size.stored > size.gzip);
    }
}
