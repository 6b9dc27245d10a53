//! Objects as JSON and as template values: the one conversion between `serde_json` (what the
//! API server and snapshot files hold) and `gotmpl::Value` (what Helm's functions read and
//! write), and JSON written as YAML the way `toYaml` writes it.

use serde_json::Value as Json;

use gotmpl::Value;

/// JSON as a template value, as Helm's `fromJson` reads it (every number a float64).
pub fn from_serde(v: &Json) -> Value {
    helm_render::json::from_json(&v.to_string()).unwrap_or(Value::Nil)
}

/// JSON written as YAML exactly as `toYaml` writes it (keys sorted, go-yaml v2 layout).
pub fn yaml_of(v: &Json) -> Result<String, helm_render::yaml::EmitError> {
    helm_render::yaml::to_yaml(&from_serde(v))
}

/// Our template value as JSON; integral numbers become integers (the API server's view).
pub fn to_serde(v: &Value) -> Json {
    match v {
        Value::Nil | Value::Invalid => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Json::from(*f as i64),
        Value::Float(f) => serde_json::Number::from_f64(*f).map(Json::Number).unwrap_or(Json::Null),
        Value::Int(i) | Value::Int64(i) => Json::from(*i),
        Value::Uint(u) => Json::from(*u),
        Value::String(s) => Json::String(s.to_string()),
        Value::List(l) => Json::Array(l.items.iter().map(to_serde).collect()),
        Value::Map(m) => Json::Object(m.entries.borrow().iter().map(|(k, v)| (k.clone(), to_serde(v))).collect()),
        other => Json::String(gotmpl::fmt::sprint_value(other)),
    }
}
