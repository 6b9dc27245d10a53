//! The Go structs Helm puts in a template's data: `.Capabilities` (KubeVersion, APIVersions,
//! HelmVersion), `.Files` with its methods, and a nil map (a nil `map[string]string` prints as
//! `map[]` but serialises as `null`, as `.Chart.Annotations` does).

use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine;

use crate::yaml::to_yaml;
use gotmpl::{GoError, ListKind, Map, Object, Value};
use kube_version::KubeVersion;

/// Helm v4.2.3's default API versions for client-only rendering, in scheme priority order.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha2",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// Helm v4.2.3's client-only `.Capabilities.KubeVersion` (`common.DefaultCapabilities`).
pub fn default_kube_version() -> KubeVersion {
    KubeVersion::patch(1, 36, 0)
}

/// `common.KubeVersion` as a template sees it (the object `.Capabilities.KubeVersion` is):
/// `Version` is the version's text with a leading `v` (suffixes kept), `String` the normalised
/// `vMAJOR.MINOR.PATCH`. A view of the one [`KubeVersion`], not another version type.
#[derive(Debug, Clone)]
pub struct KubeVersionObject(pub KubeVersion);

impl std::ops::Deref for KubeVersionObject {
    type Target = KubeVersion;
    fn deref(&self) -> &KubeVersion {
        &self.0
    }
}

impl Object for KubeVersionObject {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::string(self.git_version())),
            "Major" => Some(Value::string(self.major.to_string())),
            "Minor" => Some(Value::string(self.minor.to_string())),
            _ => None,
        }
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "String" | "GitVersion")
    }
    fn call(&self, name: &str, _args: &[Value]) -> Option<Result<Value, GoError>> {
        match name {
            "String" => Some(Ok(Value::string(self.normalized()))),
            "GitVersion" => Some(Ok(Value::string(self.git_version()))),
            _ => None,
        }
    }
    fn display(&self) -> String {
        self.normalized()
    }
    fn json_fields(&self) -> Option<Vec<(String, Value)>> {
        Some(vec![
            ("Version".into(), Value::string(self.git_version())),
            ("Major".into(), Value::string(self.major.to_string())),
            ("Minor".into(), Value::string(self.minor.to_string())),
        ])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `common.VersionSet`: a `[]string` with `Has`.
#[derive(Debug, Clone)]
pub struct VersionSet(pub Vec<String>);

impl Object for VersionSet {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }
    fn kind(&self) -> &'static str {
        "slice"
    }
    fn has_method(&self, name: &str) -> bool {
        name == "Has"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, GoError>> {
        (name == "Has").then(|| Ok(Value::Bool(args.first().and_then(Value::as_str).is_some_and(|v| self.0.iter().any(|x| x == v)))))
    }
    fn display(&self) -> String {
        format!("[{}]", self.0.join(" "))
    }
    fn to_json(&self) -> Value {
        Value::list_of(ListKind::String, self.0.iter().map(|s| Value::str(s)).collect())
    }
    fn items(&self) -> Option<Vec<Value>> {
        Some(self.0.iter().map(|s| Value::str(s)).collect())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `chart.BuildInfo` of the Helm we mirror.
#[derive(Debug, Clone)]
pub struct HelmVersion;

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "chart.BuildInfo".into()
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => "v4.2.3",
            "GitCommit" | "GitTreeState" => "",
            "GoVersion" => "go1.26.6",
            "KubeClientVersion" => "v1.36",
            _ => return None,
        }))
    }
    fn display(&self) -> String {
        "{v4.2.3   go1.26.6 v1.36}".into()
    }
    fn json_fields(&self) -> Option<Vec<(String, Value)>> {
        Some(vec![
            ("version".into(), Value::str("v4.2.3")),
            ("go_version".into(), Value::str("go1.26.6")),
            ("kube_client_version".into(), Value::str("v1.36")),
        ])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `*common.Capabilities`.
#[derive(Debug, Clone)]
pub struct Capabilities {
    pub kube_version: KubeVersion,
    pub api_versions: Vec<String>,
}

impl Capabilities {
    /// Helm v4.2.3's client-only defaults plus `--api-versions` (appended).
    pub fn client_only(kube_version: Option<KubeVersion>, extra_api_versions: &[String]) -> Capabilities {
        let mut api_versions: Vec<String> = DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect();
        api_versions.extend(extra_api_versions.iter().cloned());
        Capabilities { kube_version: kube_version.unwrap_or_else(default_kube_version), api_versions }
    }
}

impl Object for Capabilities {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }
    fn kind(&self) -> &'static str {
        "ptr"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(Rc::new(KubeVersionObject(self.kube_version.clone())))),
            "APIVersions" => Some(Value::Object(Rc::new(VersionSet(self.api_versions.clone())))),
            "HelmVersion" => Some(Value::Object(Rc::new(HelmVersion))),
            _ => None,
        }
    }
    fn display(&self) -> String {
        format!("&{{{} [{}] {}}}", self.kube_version.normalized(), self.api_versions.join(" "), HelmVersion.display())
    }
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("KubeVersion".into(), KubeVersionObject(self.kube_version.clone()).to_json());
        m.insert("APIVersions".into(), VersionSet(self.api_versions.clone()).to_json());
        m.insert("HelmVersion".into(), HelmVersion.to_json());
        Value::map(m)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `.Files`: a chart's non-template files by path.
#[derive(Debug, Clone, Default)]
pub struct Files(pub BTreeMap<String, std::sync::Arc<[u8]>>);

impl Files {
    fn get(&self, name: &str) -> Option<&std::sync::Arc<[u8]>> {
        self.0.get(name)
    }

    /// `AsConfig`/`AsSecrets`: basename → content, as `toYaml` of that map.
    fn as_map(&self, encode: bool) -> String {
        // A chart's Files map is never nil, so an empty one is `{}`.
        let m: Map = self
            .0
            .iter()
            .map(|(k, v)| {
                let base = k.rsplit('/').next().unwrap_or(k).to_string();
                let text =
                    if encode { base64::engine::general_purpose::STANDARD.encode(v) } else { String::from_utf8_lossy(v).into_owned() };
                (base, Value::string(text))
            })
            .collect();
        to_yaml(&Value::map(m)).unwrap_or_default()
    }
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }
    fn kind(&self) -> &'static str {
        "map"
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "Get" | "GetBytes" | "Glob" | "Lines" | "AsConfig" | "AsSecrets")
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, GoError>> {
        let arg = args.first().and_then(Value::as_str).unwrap_or("");
        Some(Ok(match name {
            "Get" => Value::string(self.get(arg).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default()),
            "GetBytes" => Value::Bytes(self.get(arg).map(|b| Rc::from(&b[..])).unwrap_or_else(|| Rc::from(Vec::new()))),
            "Lines" => {
                let Some(bytes) = self.get(arg) else { return Some(Ok(Value::list_of(ListKind::String, vec![]))) };
                if bytes.is_empty() {
                    return Some(Err(GoError::plain("runtime error: index out of range [-1]")));
                }
                let text = String::from_utf8_lossy(bytes);
                let text = text.strip_suffix('\n').unwrap_or(&text);
                Value::list_of(ListKind::String, text.split('\n').map(Value::str).collect())
            }
            "Glob" => {
                let matcher = glob_matcher(arg);
                let picked: BTreeMap<String, std::sync::Arc<[u8]>> =
                    self.0.iter().filter(|(k, _)| matcher(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
                Value::Object(Rc::new(Files(picked)))
            }
            "AsConfig" => Value::string(self.as_map(false)),
            "AsSecrets" => Value::string(self.as_map(true)),
            _ => return None,
        }))
    }
    fn display(&self) -> String {
        let parts: Vec<String> =
            self.0.iter().map(|(k, v)| format!("{k}:{}", gotmpl::fmt::sprint_value(&Value::Bytes(Rc::from(&v[..]))))).collect();
        format!("map[{}]", parts.join(" "))
    }
    fn to_json(&self) -> Value {
        Value::map(self.0.iter().map(|(k, v)| (k.clone(), Value::Bytes(Rc::from(&v[..])))).collect())
    }
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        Some(self.0.iter().map(|(k, v)| (k.clone(), Value::Bytes(Rc::from(&v[..])))).collect())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// gobwas/glob with `/` as separator: `*` stays within a path segment, `**` crosses them, `?` one
/// character, `[...]` classes, `{a,b}` alternatives. An invalid pattern matches everything.
pub fn glob_matcher(pattern: &str) -> Box<dyn Fn(&str) -> bool> {
    let mut re = String::from("^");
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut in_alt = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                re.push_str(".*");
                i += 1;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                let end = chars[i..].iter().position(|&x| x == ']').map(|p| p + i);
                match end {
                    Some(end) => {
                        let class: String = chars[i + 1..end].iter().collect();
                        let class = class.strip_prefix('!').map(|c| format!("^{c}")).unwrap_or(class);
                        re.push('[');
                        re.push_str(&class.replace('\\', "\\\\"));
                        re.push(']');
                        i = end;
                    }
                    None => return Box::new(|_| true),
                }
            }
            '{' => {
                in_alt += 1;
                re.push_str("(?:");
            }
            '}' if in_alt > 0 => {
                in_alt -= 1;
                re.push(')');
            }
            ',' if in_alt > 0 => re.push('|'),
            '\\' if i + 1 < chars.len() => {
                i += 1;
                re.push_str(&regex::escape(&chars[i].to_string()));
            }
            other => re.push_str(&regex::escape(&other.to_string())),
        }
        i += 1;
    }
    re.push('$');
    match regex::Regex::new(&re) {
        Ok(r) if in_alt == 0 => Box::new(move |s| r.is_match(s)),
        _ => Box::new(|_| true),
    }
}

/// A nil `map[string]string`: prints `map[]`, serialises as `null`.
#[derive(Debug)]
pub struct NilStringMap;

impl Object for NilStringMap {
    fn type_name(&self) -> String {
        "map[string]string".into()
    }
    fn kind(&self) -> &'static str {
        "map"
    }
    fn display(&self) -> String {
        "map[]".into()
    }
    fn to_json(&self) -> Value {
        Value::Nil
    }
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        Some(Vec::new())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
