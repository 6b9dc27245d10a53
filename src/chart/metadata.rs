//! Chart.yaml: the fields Helm reads (JSON names matched case-insensitively, as sigs.k8s.io/yaml
//! does), defaults (`apiVersion` v1 when missing), and Helm's validation messages.

use crate::gotmpl::{Map, Value};
use crate::yaml::read_first;

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

fn field<'a>(m: &'a Map, name: &str) -> Option<&'a Value> {
    m.get(name).or_else(|| m.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

fn string(m: &Map, name: &str) -> Result<String, String> {
    match field(m, name) {
        None | Some(Value::Nil) | Some(Value::Invalid) => Ok(String::new()),
        Some(Value::String(s)) => Ok(sanitize(s)),
        // sigs.k8s.io/yaml converts scalars for string fields: `off` → "false", `1.10` → "1.1".
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Float(f)) => Ok(crate::gotmpl::fmt::format_float_shortest(*f)),
        Some(other) => Err(format!(
            "cannot load Chart.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field Metadata.{name} of type string",
            crate::chart::json_kind(other)
        )),
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
    pub fn parse(bytes: &[u8]) -> Result<Metadata, String> {
        let text = String::from_utf8_lossy(bytes);
        let doc = read_first(&text).map_err(|e| format!("cannot load Chart.yaml: error converting YAML to JSON: {}", e.0))?;
        let Value::Map(cell) = doc else {
            return Err("cannot load Chart.yaml: chart metadata (Chart.yaml) is not a map".into());
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
            md.annotations = Some(a.entries.borrow().iter().map(|(k, v)| (k.clone(), crate::helm::funcs::strval(v))).collect());
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
    pub fn parse_requirements(bytes: &[u8]) -> Result<Vec<Dependency>, String> {
        let doc = read_first(&String::from_utf8_lossy(bytes)).map_err(|e| e.0)?;
        match doc {
            Value::Map(m) => parse_dependencies(m.entries.borrow().get("dependencies")),
            _ => Ok(Vec::new()),
        }
    }

    fn validate(&self) -> Result<(), String> {
        let fail = |m: &str| Err(format!("validation: {m}"));
        if self.name.is_empty() {
            return fail("chart.metadata.name is required");
        }
        if self.name == "." || self.name == ".." || self.name.contains(['/', '\\']) {
            return fail(&format!("chart.metadata.name {:?} is invalid", self.name));
        }
        if self.version.is_empty() {
            return fail("chart.metadata.version is required");
        }
        if crate::version::parse_lenient(&self.version).is_none() {
            return fail(&format!("chart.metadata.version {:?} is invalid", self.version));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return fail("chart.metadata.type must be application or library");
        }
        let mut seen = std::collections::HashSet::new();
        for d in &self.dependencies {
            if !d.alias.is_empty() && !d.alias.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return fail(&format!("dependency {:?} has disallowed characters in the alias", d.name));
            }
            let key = if d.alias.is_empty() { &d.name } else { &d.alias };
            if !seen.insert(key.clone()) {
                return fail(&format!("more than one dependency with name or alias {key:?}"));
            }
        }
        Ok(())
    }
}

fn parse_dependencies(v: Option<&Value>) -> Result<Vec<Dependency>, String> {
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
