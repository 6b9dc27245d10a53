//! The data a chart's templates see: `.Values`, `.Release`, `.Chart` (a map with Go field names,
//! as in Helm v4), `.Capabilities`, `.Files`, `.Subcharts`. Built once per chart and shared by
//! its templates.

use std::rc::Rc;

use crate::objects::{Capabilities, Files, NilStringMap};
use gotmpl::{ListKind, Map, MapKind, Value};

/// What `.Release` holds for `helm template`.
#[derive(Debug, Clone)]
pub struct ReleaseInfo {
    pub name: String,
    pub namespace: String,
    pub is_upgrade: bool,
    pub revision: i64,
}

impl Default for ReleaseInfo {
    fn default() -> Self {
        ReleaseInfo { name: "release-name".into(), namespace: "default".into(), is_upgrade: false, revision: 1 }
    }
}

impl ReleaseInfo {
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("Name".into(), Value::string(self.name.clone()));
        m.insert("Namespace".into(), Value::string(self.namespace.clone()));
        m.insert("IsInstall".into(), Value::Bool(!self.is_upgrade));
        m.insert("IsUpgrade".into(), Value::Bool(self.is_upgrade));
        m.insert("Revision".into(), Value::Int(self.revision));
        m.insert("Service".into(), Value::str("Helm"));
        Value::map(m)
    }
}

/// Chart.yaml metadata as templates see it (Go field names).
#[derive(Debug, Clone, Default)]
pub struct ChartMeta {
    pub api_version: String,
    pub name: String,
    pub version: String,
    pub kube_version: String,
    pub description: String,
    pub chart_type: String,
    pub keywords: Vec<String>,
    pub home: String,
    pub sources: Vec<String>,
    pub icon: String,
    pub app_version: String,
    pub deprecated: bool,
    pub condition: String,
    pub tags: String,
    /// None: no annotations at all (a nil map in Go).
    pub annotations: Option<Vec<(String, String)>>,
    pub maintainers: Vec<Value>,
    pub dependencies: Vec<Value>,
}

impl ChartMeta {
    /// Helm v4's `.Chart` map.
    pub fn to_value(&self, is_root: bool) -> Value {
        let strings = |v: &[String]| Value::list_of(ListKind::String, v.iter().map(|s| Value::str(s)).collect());
        let mut m = Map::new();
        m.insert("APIVersion".into(), Value::string(self.api_version.clone()));
        m.insert(
            "Annotations".into(),
            match &self.annotations {
                None => Value::Object(Rc::new(NilStringMap)),
                Some(pairs) => Value::map_of(MapKind::String, pairs.iter().map(|(k, v)| (k.clone(), Value::str(v))).collect()),
            },
        );
        m.insert("AppVersion".into(), Value::string(self.app_version.clone()));
        m.insert("Condition".into(), Value::string(self.condition.clone()));
        m.insert("Dependencies".into(), Value::list(self.dependencies.clone()));
        m.insert("Deprecated".into(), Value::Bool(self.deprecated));
        m.insert("Description".into(), Value::string(self.description.clone()));
        m.insert("Home".into(), Value::string(self.home.clone()));
        m.insert("Icon".into(), Value::string(self.icon.clone()));
        m.insert("IsRoot".into(), Value::Bool(is_root));
        m.insert("Keywords".into(), strings(&self.keywords));
        m.insert("KubeVersion".into(), Value::string(self.kube_version.clone()));
        m.insert("Maintainers".into(), Value::list(self.maintainers.clone()));
        m.insert("Name".into(), Value::string(self.name.clone()));
        m.insert("Sources".into(), strings(&self.sources));
        m.insert("Tags".into(), Value::string(self.tags.clone()));
        m.insert("Type".into(), Value::string(self.chart_type.clone()));
        m.insert("Version".into(), Value::string(self.version.clone()));
        Value::map(m)
    }
}

/// The data map of one chart.
pub fn chart_data(
    chart: &ChartMeta,
    is_root: bool,
    values: Value,
    release: &ReleaseInfo,
    capabilities: &Rc<Capabilities>,
    files: Files,
    subcharts: Value,
) -> Value {
    let mut m = Map::new();
    m.insert("Chart".into(), chart.to_value(is_root));
    m.insert("Capabilities".into(), Value::Object(capabilities.clone()));
    m.insert("Files".into(), Value::Object(Rc::new(files)));
    m.insert("Release".into(), release.to_value());
    m.insert("Subcharts".into(), subcharts);
    m.insert(
        "Values".into(),
        match values {
            Value::Map(cell) => Value::Map(Rc::new(gotmpl::value::MapCell {
                kind: MapKind::Values,
                entries: std::cell::RefCell::new(cell.entries.borrow().clone()),
            })),
            _ => Value::map_of(MapKind::Values, Map::new()),
        },
    );
    Value::map(m)
}
