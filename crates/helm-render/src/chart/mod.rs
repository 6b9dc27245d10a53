//! The chart model and loader: Chart.yaml metadata (v1 and v2), values.yaml (multi-document),
//! templates, `crds/`, other files, and subcharts under `charts/` (archived or unpacked), from an
//! archive's files or a directory (with `.helmignore`). Classification follows Helm's `LoadFiles`.

pub mod archive;
pub mod ignore;
pub mod metadata;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use metadata::{Dependency, Metadata};

use crate::chart::archive::{ensure_gzip, load_archive, ArchiveError, ArchiveFile};
use gotmpl::Value;

#[derive(Debug, Clone)]
pub struct ChartFile {
    pub path: String,
    pub data: Arc<[u8]>,
}

/// A loaded chart and its subcharts.
#[derive(Debug, Clone)]
pub struct Chart {
    pub metadata: Metadata,
    /// values.yaml documents merged (nulls kept; coalescing decides about them).
    pub values: Value,
    pub templates: Vec<ChartFile>,
    /// Every other file (crds/, files/, README…), as `.Files` sees them.
    pub files: Vec<ChartFile>,
    pub schema: Option<Vec<u8>>,
    pub dependencies: Vec<Chart>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("Chart.yaml file is missing")]
    MissingChartYaml,
    #[error(transparent)]
    Metadata(#[from] metadata::MetadataError),
    #[error(transparent)]
    Ignore(#[from] ignore::IgnoreError),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl Chart {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// Loads a `.tgz` file.
    pub fn load_archive_file(path: &Path) -> Result<Chart, LoadError> {
        let bytes = read_bounded(path)?;
        ensure_gzip(&path.display().to_string(), &bytes)?;
        Chart::from_archive_bytes(&bytes)
    }

    pub fn from_archive_bytes(bytes: &[u8]) -> Result<Chart, LoadError> {
        let files = load_archive(bytes)?;
        Chart::from_files(files.into_iter().map(|f: ArchiveFile| ChartFile { path: f.path, data: f.data.into() }).collect())
    }

    /// Loads a chart directory, honouring its `.helmignore`.
    pub fn load_dir(dir: &Path) -> Result<Chart, LoadError> {
        // Said first: walking a directory that is no chart (a build output, say) failed on
        // whatever file it met first ("chart file bin2/… is larger than the maximum file size").
        if !dir.join("Chart.yaml").is_file() {
            return Err(LoadError::Invalid(format!(
                "{} has no Chart.yaml, so it is not a chart directory: pass a chart directory, a .tgz or an oci:// reference",
                dir.display()
            )));
        }
        let rules = match std::fs::read_to_string(dir.join(".helmignore")) {
            Ok(text) => ignore::Rules::parse(&text)?,
            Err(_) => ignore::Rules::default(),
        };
        let mut files = Vec::new();
        walk(dir, dir, &rules, &mut files)?;
        Chart::from_files(files)
    }

    /// Helm's `LoadFiles`: sort files into Chart.yaml, values, templates, subcharts and the rest.
    pub fn from_files(files: Vec<ChartFile>) -> Result<Chart, LoadError> {
        let mut chart_yaml = None;
        let mut requirements = None;
        let mut values_docs: Option<Vec<u8>> = None;
        let mut templates = Vec::new();
        let mut other = Vec::new();
        let mut schema = None;
        let mut sub_files: BTreeMap<String, Vec<ChartFile>> = BTreeMap::new();
        let mut sub_archives: Vec<(String, Vec<u8>)> = Vec::new();
        for f in files {
            let path = f.path.clone();
            if path == "Chart.yaml" {
                chart_yaml = Some(f.data);
            } else if path == "values.yaml" {
                values_docs = Some(f.data.to_vec());
            } else if path == "values.schema.json" {
                schema = Some(f.data.to_vec());
            } else if path == "requirements.yaml" {
                requirements = Some(f.data.clone());
                other.push(f);
            } else if path == "Chart.lock" || path == "requirements.lock" {
                if path == "requirements.lock" {
                    other.push(f);
                }
            } else if path.starts_with("templates/") {
                templates.push(f);
            } else if let Some(rest) = path.strip_prefix("charts/") {
                let (first, inner) = rest.split_once('/').unwrap_or((rest, ""));
                if first.starts_with('_') || first.starts_with('.') {
                    continue;
                }
                if inner.is_empty() {
                    if first.ends_with(".tgz") {
                        sub_archives.push((first.to_string(), f.data.to_vec()));
                    } else if first.ends_with(".prov") {
                        other.push(f);
                    }
                    continue;
                }
                sub_files.entry(first.to_string()).or_default().push(ChartFile { path: inner.to_string(), data: f.data });
            } else {
                other.push(f);
            }
        }
        let chart_yaml = chart_yaml.ok_or(LoadError::MissingChartYaml)?;
        let mut metadata = Metadata::parse(&chart_yaml)?;
        if let Some(req) = requirements {
            if metadata.api_version == "v1" {
                metadata.dependencies = Metadata::parse_requirements(&req)?;
            } else {
                other.retain(|f| f.path != "requirements.yaml" && f.path != "requirements.lock");
            }
        } else if metadata.api_version != "v1" {
            other.retain(|f| f.path != "requirements.lock");
        }
        let values = match values_docs {
            Some(bytes) => parse_values(&String::from_utf8_lossy(&bytes))?,
            None => Value::empty_map(),
        };
        let mut dependencies = Vec::new();
        for (name, files) in sub_files {
            let sub = Chart::from_files(files)
                .map_err(|e| LoadError::Invalid(format!("error unpacking subchart {name} in {}: {e}", metadata.name)))?;
            dependencies.push(sub);
        }
        for (name, bytes) in sub_archives {
            let sub = Chart::from_archive_bytes(&bytes)
                .map_err(|e| LoadError::Invalid(format!("error unpacking subchart {name} in {}: {e}", metadata.name)))?;
            dependencies.push(sub);
        }
        Ok(Chart { metadata, values, templates, files: other, schema, dependencies })
    }
}

/// values.yaml: every document deep-merged, later documents winning.
pub fn parse_values(text: &str) -> Result<Value, LoadError> {
    let docs = crate::yaml::read_documents(text).map_err(|e| {
        LoadError::Invalid(format!("cannot load values.yaml: cannot unmarshal yaml document: error converting YAML to JSON: {}", e.0))
    })?;
    let mut merged = gotmpl::Map::new();
    for doc in docs {
        match doc {
            Value::Map(m) => crate::value_ops::merge_maps(&mut merged, &m.entries.borrow()),
            Value::Nil | Value::Invalid => {}
            other => {
                return Err(LoadError::Invalid(format!(
                    "cannot load values.yaml: cannot unmarshal yaml document: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_kind(&other)
                )))
            }
        }
    }
    Ok(Value::map(merged))
}

pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        _ => "number",
    }
}

const MAX_FILE: u64 = 5 * 1024 * 1024;

fn read_bounded(path: &Path) -> Result<Vec<u8>, LoadError> {
    let io = |source: std::io::Error| LoadError::Io { path: path.display().to_string(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.len() > crate::chart::archive::MAX_CHART_BYTES {
        return Err(LoadError::Invalid(format!("{} is larger than {} bytes", path.display(), crate::chart::archive::MAX_CHART_BYTES)));
    }
    std::fs::read(path).map_err(io)
}

/// Directory walk in lexical order, following symlinks, refusing irregular files.
fn walk(root: &Path, dir: &Path, rules: &ignore::Rules, out: &mut Vec<ChartFile>) -> Result<(), LoadError> {
    let io = |p: &Path, source: std::io::Error| LoadError::Io { path: p.display().to_string(), source };
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(|e| io(dir, e))?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let meta = std::fs::metadata(&path).map_err(|e| io(&path, e))?;
        if rules.ignored(&rel, meta.is_dir()) {
            continue;
        }
        if meta.is_dir() {
            walk(root, &path, rules, out)?;
        } else if meta.is_file() {
            if meta.len() > MAX_FILE {
                return Err(LoadError::Invalid(format!("chart file {rel:?} is larger than the maximum file size {MAX_FILE}")));
            }
            let mut data = std::fs::read(&path).map_err(|e| io(&path, e))?;
            if data.starts_with(&[0xEF, 0xBB, 0xBF]) {
                data.drain(..3);
            }
            out.push(ChartFile { path: rel, data: data.into() });
        } else {
            return Err(LoadError::Invalid(format!("cannot load irregular file {} as it has file mode type bits set", path.display())));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_is_named_and_its_io_error_is_the_source() {
        let path = std::env::temp_dir().join(format!("helm-render-missing-{}/Chart.yaml", std::process::id()));
        let err = read_bounded(&path).unwrap_err();
        assert!(matches!(&err, LoadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{err:?}");
        assert!(err.to_string().starts_with(&format!("cannot read {}: ", path.display())), "{err}");
        assert!(std::error::Error::source(&err).is_some());
    }
}
