//! `helm template` end to end: dependencies processed, values coalesced, every chart's data built,
//! templates rendered, NOTES set aside, manifests and hooks sorted, CRDs collected, and the output
//! assembled exactly as Helm prints it. [`Rendered`] is what later stages analyse.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::chart::Chart;
use crate::context::{chart_data, ChartMeta, ReleaseInfo};
use crate::engine::{render, TemplateFile};
use crate::manifest::{sort_manifests, source_block, Hook, Manifest};
use crate::objects::{Capabilities, Files};
use crate::values::{coalesce_values, missing_dependencies, process_dependencies, Warnings};
use crate::version::Constraint;
use gotmpl::{Limits, Map, MapKind, Value};
use kube_version::KubeVersion;

#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    pub release: ReleaseInfo,
    pub kube_version: Option<KubeVersion>,
    pub api_versions: Vec<String>,
    /// User values already merged from -f/--set.
    pub values: Map,
    pub limits: Option<Limits>,
}

/// A CRD file from a chart's `crds/` directory (never templated).
#[derive(Debug, Clone, PartialEq)]
pub struct CrdFile {
    /// `<chart path>/crds/<file>`.
    pub path: String,
    pub content: String,
}

/// Everything a render produced.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Raw engine output per template (NOTES.txt files included, as the engine returns them).
    pub templates: BTreeMap<String, String>,
    pub manifests: Vec<Manifest>,
    pub hooks: Vec<Hook>,
    pub crds: Vec<CrdFile>,
    pub notes: Option<String>,
    /// The coalesced values of the root chart.
    pub values: Map,
    pub warnings: Vec<String>,
}

impl Rendered {
    /// `rel.Manifest`: the manifest blocks (CRDs first when asked).
    pub fn release_manifest(&self, include_crds: bool) -> String {
        let mut out = String::new();
        if include_crds {
            for crd in &self.crds {
                out.push_str(&source_block(&crd.path, &crd.content));
            }
        }
        for m in &self.manifests {
            out.push_str(&source_block(&m.path, &m.content));
        }
        out
    }

    /// What `helm template` prints.
    pub fn template_output(&self, include_crds: bool, no_hooks: bool, skip_tests: bool) -> String {
        let mut out = format!("{}\n", self.release_manifest(include_crds).trim());
        if !no_hooks {
            for h in &self.hooks {
                if skip_tests && h.events.iter().any(|e| e == "test") {
                    continue;
                }
                out.push_str(&source_block(&h.path, &h.content));
            }
        }
        out
    }
}

/// The one render error (defined beside the engine, which raises most of them).
pub use super::engine::RenderError;

/// What Helm's engine returns (`engine.Render`, the oracle's `Chart.render`): every template's
/// output, before documents are split, sorted and hooks set aside.
#[derive(Debug, Clone)]
pub struct RenderedTemplates {
    /// Raw engine output per template (NOTES.txt files included).
    pub templates: BTreeMap<String, String>,
    pub crds: Vec<CrdFile>,
    /// The coalesced values of the root chart.
    pub values: Map,
    pub warnings: Vec<String>,
}

/// `helm template`'s content: [`render_templates`], then manifests sorted and hooks extracted.
pub fn render_chart(chart: &Chart, options: &RenderOptions) -> Result<Rendered, RenderError> {
    let RenderedTemplates { templates, crds, values, warnings } = render_templates(chart, options)?;
    let notes_key = format!("{}/templates/NOTES.txt", chart.name());
    let notes = templates.get(&notes_key).cloned();
    let without_notes = templates.iter().filter(|(k, _)| !k.ends_with("NOTES.txt")).map(|(k, v)| (k.as_str(), v.as_str()));
    let (manifests, hooks) = sort_manifests(without_notes)?;
    Ok(Rendered { templates, manifests, hooks, crds, notes, values, warnings })
}

/// Dependencies processed, values coalesced and validated, every template rendered.
pub fn render_templates(chart: &Chart, options: &RenderOptions) -> Result<RenderedTemplates, RenderError> {
    if chart.metadata.chart_type == "library" {
        return Err(RenderError("library charts are not installable".into()));
    }
    let missing = missing_dependencies(chart);
    if !missing.is_empty() {
        return Err(RenderError(format!(
            "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
            missing.join(", ")
        )));
    }
    let mut chart = chart.clone();
    let mut warnings = Warnings::default();
    process_dependencies(&mut chart, &options.values, &mut warnings)?;
    let caps = Rc::new(Capabilities::client_only(options.kube_version.clone(), &options.api_versions));
    if !chart.metadata.kube_version.is_empty() {
        let ok = Constraint::parse(&chart.metadata.kube_version)
            .ok()
            .map(|c| {
                let (major, minor, patch) = caps.kube_version.triple();
                (c, semver::Version::new(major, minor, patch))
            })
            .is_some_and(|(c, v)| c.matches(&v));
        if !ok {
            return Err(RenderError(format!(
                "chart requires kubeVersion: {} which is incompatible with Kubernetes {}",
                chart.metadata.kube_version,
                caps.kube_version.normalized()
            )));
        }
    }
    let values = coalesce_values(&chart, &options.values, &mut warnings)?;
    let mut schema_report = String::new();
    validate_schemas(&chart, &Value::map(values.clone()), &mut schema_report)?;
    if !schema_report.is_empty() {
        return Err(RenderError(format!(
            "values don't meet the specifications of the schema(s) in the following chart(s):\n{schema_report}"
        )));
    }
    let mut files = Vec::new();
    let mut crds = Vec::new();
    collect(&chart, chart.name(), true, Value::map(values.clone()), &options.release, &caps, &mut files, &mut crds);
    let templates = render(&files, options.limits.unwrap_or_default())?;
    Ok(RenderedTemplates { templates, crds, values, warnings: warnings.0 })
}

/// Helm's `ValidateAgainstSchema`: each chart's schema against its part of the values.
fn validate_schemas(chart: &Chart, values: &Value, report: &mut String) -> Result<(), crate::values_schema::InvalidSchema> {
    if let Some(schema) = &chart.schema {
        if let Some(lines) = crate::values_schema::validate(schema, values)? {
            report.push_str(&format!("{}:\n{lines}", chart.name()));
        }
    }
    let Value::Map(m) = values else { return Ok(()) };
    for sub in &chart.dependencies {
        let raw = m.entries.borrow().get(sub.name()).cloned();
        match raw {
            None | Some(Value::Nil) => {}
            Some(v @ Value::Map(_)) => validate_schemas(sub, &v, report)?,
            Some(other) => {
                report.push_str(&format!("{}:\ninvalid type for values: expected object (map), got {}\n", sub.name(), other.type_name()))
            }
        }
    }
    Ok(())
}

/// Builds each chart's data and template list (Helm's `recAllTpls`) and collects CRD files.
#[allow(clippy::too_many_arguments)]
fn collect<'a>(
    chart: &'a Chart,
    full_path: &str,
    is_root: bool,
    values: Value,
    release: &ReleaseInfo,
    caps: &Rc<Capabilities>,
    files: &mut Vec<TemplateFile<'a>>,
    crds: &mut Vec<CrdFile>,
) -> Value {
    for f in &chart.files {
        let lower = f.path.to_ascii_lowercase();
        if f.path.starts_with("crds/") && (lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json")) {
            crds.push(CrdFile { path: format!("{full_path}/{}", f.path), content: utf8_text(&f.data).into_owned() });
        }
    }
    let mut subcharts = Map::new();
    let values_map = match &values {
        Value::Map(m) => m.entries.borrow().clone(),
        _ => Map::new(),
    };
    for sub in &chart.dependencies {
        let sub_values = match values_map.get(sub.name()) {
            Some(v @ Value::Map(_)) => v.clone(),
            _ => Value::empty_map(),
        };
        let sub_path = format!("{full_path}/charts/{}", sub.name());
        let data = collect(sub, &sub_path, false, sub_values, release, caps, files, crds);
        subcharts.insert(sub.name().to_string(), data);
    }
    let meta = chart_meta(chart);
    let files_obj = Files(chart.files.iter().map(|f| (f.path.clone(), f.data.clone())).collect());
    let data = chart_data(&meta, is_root, values, release, caps, files_obj, Value::map_of(MapKind::Any, subcharts));
    let library = chart.metadata.chart_type == "library";
    for t in &chart.templates {
        let base = t.path.rsplit('/').next().unwrap_or(&t.path);
        if library && !base.starts_with('_') {
            continue;
        }
        files.push(TemplateFile {
            name: format!("{full_path}/{}", t.path),
            text: utf8_text(&t.data),
            data: data.clone(),
            base_path: format!("{full_path}/templates"),
        });
    }
    data
}

/// File bytes as text, invalid UTF-8 replaced as Go's string conversion prints it; the strict
/// check first because it is several times faster than the lossy scan on valid text.
fn utf8_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

fn chart_meta(chart: &Chart) -> ChartMeta {
    let md = &chart.metadata;
    let maintainers = md
        .maintainers
        .iter()
        .map(|m| {
            let mut map = Map::new();
            map.insert("Email".into(), Value::str(&m.email));
            map.insert("Name".into(), Value::str(&m.name));
            map.insert("URL".into(), Value::str(&m.url));
            Value::map(map)
        })
        .collect();
    let dependencies = md
        .dependencies
        .iter()
        .map(|d| {
            let mut map = Map::new();
            map.insert("Alias".into(), Value::str(&d.alias));
            map.insert("Condition".into(), Value::str(&d.condition));
            map.insert("Enabled".into(), Value::Bool(d.enabled));
            map.insert("ImportValues".into(), Value::list(d.import_values.clone()));
            map.insert("Name".into(), Value::str(&d.name));
            map.insert("Repository".into(), Value::str(&d.repository));
            map.insert("Tags".into(), Value::list_of(gotmpl::ListKind::String, d.tags.iter().map(|t| Value::str(t)).collect()));
            map.insert("Version".into(), Value::str(&d.version));
            Value::map(map)
        })
        .collect();
    ChartMeta {
        api_version: md.api_version.clone(),
        name: md.name.clone(),
        version: md.version.clone(),
        kube_version: md.kube_version.clone(),
        description: md.description.clone(),
        chart_type: md.chart_type.clone(),
        keywords: md.keywords.clone(),
        home: md.home.clone(),
        sources: md.sources.clone(),
        icon: md.icon.clone(),
        app_version: md.app_version.clone(),
        deprecated: md.deprecated,
        condition: md.condition.clone(),
        tags: md.tags.clone(),
        annotations: md.annotations.clone(),
        maintainers,
        dependencies,
    }
}
