//! Chart.yaml: the fields Helm reads (JSON names matched case-insensitively, as sigs.k8s.io/yaml
//! does), defaults (`apiVersion` v1 when missing), and Helm's validation messages.

use crate::yaml::{read_first, YamlError};
use gotmpl::{Map, Value};

#[derive(Debug, Clone, Default)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

#[derive(Debug, Clone, Default)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    /// Entries as written: strings or `{child, parent}` maps.
    pub import_values: Vec<Value>,
    pub alias: String,
}

#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub api_version: String,
    pub name: String,
    pub version: String,
    pub kube_version: String,
    pub description: String,
    pub chart_type: String,
    pub keywords: Vec<String>,
    pub home: String,
    pub sources: Vec<String>,
    pub dependencies: Vec<Dependency>,
    pub maintainers: Vec<Maintainer>,
    pub icon: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: Option<Vec<(String, String)>>,
    pub condition: String,
    pub tags: String,
}

/// Why Chart.yaml (or requirements.yaml) is not chart metadata; Helm's texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// Chart.yaml is not YAML.
    #[error("cannot load Chart.yaml: error converting YAML to JSON: {0}")]
    Yaml(#[source] YamlError),
    /// requirements.yaml is not YAML (Helm's text names no file).
    #[error("{0}")]
    RequirementsYaml(#[source] YamlError),
    #[error("cannot load Chart.yaml: chart metadata (Chart.yaml) is not a map")]
    NotAMap,
    /// A string field (`field`, as Go's struct names it) holding a list, map or number.
    #[error("cannot load Chart.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {found} into Go struct field Metadata.{field} of type string")]
    NotAString { field: String, found: &'static str },
    #[error("validation: {0}")]
    Invalid(#[from] Invalid),
}

/// What `Metadata.Validate` refuses, naming the field or dependency.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("chart.metadata.name is required")]
    NameRequired,
    #[error("chart.metadata.name {0:?} is invalid")]
    Name(String),
    #[error("chart.metadata.version is required")]
    VersionRequired,
    #[error("chart.metadata.version {0:?} is invalid")]
    Version(String),
    #[error("chart.metadata.type must be application or library")]
    Type,
    /// A dependency (by name) whose alias has characters other than `[A-Za-z0-9_-]`.
    #[error("dependency {0:?} has disallowed characters in the alias")]
    Alias(String),
    #[error("more than one dependency with name or alias {0:?}")]
    DuplicateDependency(String),
}

fn field<'a>(m: &'a Map, name: &str) -> Option<&'a Value> {
    m.get(name).or_else(|| m.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

fn string(m: &Map, name: &str) -> Result<String, MetadataError> {
    match field(m, name) {
        None | Some(Value::Nil) | Some(Value::Invalid) => Ok(String::new()),
        Some(Value::String(s)) => Ok(sanitize(s)),
        // sigs.k8s.io/yaml converts scalars for string fields: `off` → "false", `1.10` → "1.1".
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Float(f)) => Ok(gotmpl::fmt::format_float_shortest(*f)),
        Some(other) => Err(MetadataError::NotAString { field: name.to_string(), found: crate::chart::json_kind(other) }),
    }
}

fn strings(m: &Map, name: &str) -> Vec<String> {
    match field(m, name) {
        Some(Value::List(l)) => l.items.iter().filter_map(|v| v.as_str().map(sanitize)).collect(),
        _ => Vec::new(),
    }
}

/// Helm sanitizes string fields: whitespace becomes a space, non-printable characters go.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control() {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

impl Metadata {
    pub fn parse(bytes: &[u8]) -> Result<Metadata, MetadataError> {
        let text = String::from_utf8_lossy(bytes);
        let doc = read_first(&text).map_err(MetadataError::Yaml)?;
        let Value::Map(cell) = doc else {
            return Err(MetadataError::NotAMap);
        };
        let m = cell.entries.borrow();
        let mut md = Metadata {
            api_version: string(&m, "apiVersion")?,
            name: string(&m, "name")?,
            version: string(&m, "version")?,
            kube_version: string(&m, "kubeVersion")?,
            description: string(&m, "description")?,
            chart_type: string(&m, "type")?,
            keywords: strings(&m, "keywords"),
            home: string(&m, "home")?,
            sources: strings(&m, "sources"),
            icon: string(&m, "icon")?,
            app_version: string(&m, "appVersion")?,
            deprecated: matches!(field(&m, "deprecated"), Some(Value::Bool(true))),
            condition: string(&m, "condition")?,
            tags: string(&m, "tags")?,
            ..Metadata::default()
        };
        if md.api_version.is_empty() {
            md.api_version = "v1".into();
        }
        if let Some(Value::Map(a)) = field(&m, "annotations") {
            md.annotations = Some(a.entries.borrow().iter().map(|(k, v)| (k.clone(), crate::value_ops::strval(v))).collect());
        }
        if let Some(Value::List(l)) = field(&m, "maintainers") {
            for item in &l.items {
                if let Value::Map(mm) = item {
                    let mm = mm.entries.borrow();
                    md.maintainers.push(Maintainer { name: string(&mm, "name")?, email: string(&mm, "email")?, url: string(&mm, "url")? });
                }
            }
        }
        md.dependencies = parse_dependencies(field(&m, "dependencies"))?;
        md.validate()?;
        Ok(md)
    }

    /// requirements.yaml of an apiVersion v1 chart.
    pub fn parse_requirements(bytes: &[u8]) -> Result<Vec<Dependency>, MetadataError> {
        let doc = read_first(&String::from_utf8_lossy(bytes)).map_err(MetadataError::RequirementsYaml)?;
        match doc {
            Value::Map(m) => parse_dependencies(m.entries.borrow().get("dependencies")),
            _ => Ok(Vec::new()),
        }
    }

    fn validate(&self) -> Result<(), Invalid> {
        if self.name.is_empty() {
            return Err(Invalid::NameRequired);
        }
        if self.name == "." || self.name == ".." || self.name.contains(['/', '\\']) {
            return Err(Invalid::Name(self.name.clone()));
        }
        if self.version.is_empty() {
            return Err(Invalid::VersionRequired);
        }
        if crate::version::parse_lenient(&self.version).is_none() {
            return Err(Invalid::Version(self.version.clone()));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(Invalid::Type);
        }
        let mut seen = std::collections::HashSet::new();
        for d in &self.dependencies {
            if !d.alias.is_empty() && !d.alias.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return Err(Invalid::Alias(d.name.clone()));
            }
            let key = if d.alias.is_empty() { &d.name } else { &d.alias };
            if !seen.insert(key.clone()) {
                return Err(Invalid::DuplicateDependency(key.clone()));
            }
        }
        Ok(())
    }
}

fn parse_dependencies(v: Option<&Value>) -> Result<Vec<Dependency>, MetadataError> {
    let mut out = Vec::new();
    if let Some(Value::List(l)) = v {
        for item in &l.items {
            let Value::Map(m) = item else { continue };
            let m = m.entries.borrow();
            out.push(Dependency {
                name: string(&m, "name")?,
                version: string(&m, "version")?,
                repository: string(&m, "repository")?,
                condition: string(&m, "condition")?,
                tags: strings(&m, "tags"),
                enabled: matches!(field(&m, "enabled"), Some(Value::Bool(true))),
                import_values: match field(&m, "import-values") {
                    Some(Value::List(l)) => l.items.clone(),
                    _ => Vec::new(),
                },
                alias: string(&m, "alias")?,
            });
        }
    }
    Ok(out)
}
