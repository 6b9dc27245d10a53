//! Object metadata as the API server checks it before the schema: the root `metadata` of a custom
//! resource (`ValidateObjectMetaAccessor` with `NameIsDNSSubdomain`, namespace by scope) and the
//! `apiVersion`/`kind`/`metadata` of `x-kubernetes-embedded-resource` nodes
//! (apiextensions-apiserver `pkg/apiserver/schema/objectmeta/validation.go`). Messages are
//! apimachinery's `util/validation` wording.

use serde_json::Value;

use super::fielderr::{BadValue, FieldError};
use super::structural::{Additional, Schema};

const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str, first_alpha: bool) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && (if first_alpha { b[0].is_ascii_lowercase() } else { alnum(b[0]) })
        && alnum(b[b.len() - 1])
        && b.iter().all(|c| alnum(*c) || *c == b'-')
}

/// `IsDNS1123Label`.
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_label(s, false) {
        errs.push(DNS1123_LABEL_ERR.to_string());
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if s.is_empty() || !s.split('.').all(|l| is_label(l, false)) {
        errs.push(DNS1123_SUBDOMAIN_ERR.to_string());
    }
    errs
}

/// `IsDNS1035Label`.
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_label(s, true) {
        errs.push(DNS1035_LABEL_ERR.to_string());
    }
    errs
}

/// Root `metadata` of a custom resource on create or update.
pub fn validate_root_meta(obj: &Value, namespaced: bool, errs: &mut Vec<FieldError>) {
    let Some(meta) = obj.get("metadata") else {
        errs.push(FieldError::required("metadata.name", "name or generateName is required"));
        return;
    };
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    let generate = meta.get("generateName").and_then(Value::as_str).unwrap_or("");
    if !generate.is_empty() {
        // A prefix is checked with its trailing dash tolerated (`NameIsDNSSubdomain(prefix, true)`).
        let trimmed = generate.strip_suffix('-').unwrap_or(generate);
        for m in dns1123_subdomain_errors(trimmed) {
            errs.push(FieldError::invalid("metadata.generateName", BadValue::Str(generate.into()), m));
        }
    }
    if name.is_empty() {
        if generate.is_empty() {
            errs.push(FieldError::required("metadata.name", "name or generateName is required"));
        }
    } else {
        for m in dns1123_subdomain_errors(name) {
            errs.push(FieldError::invalid("metadata.name", BadValue::Str(name.into()), m));
        }
    }
    let ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    if namespaced {
        if ns.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for m in dns1123_label_errors(ns) {
                errs.push(FieldError::invalid("metadata.namespace", BadValue::Str(ns.into()), m));
            }
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::new(super::fielderr::ErrorKind::Forbidden, "metadata.namespace", BadValue::Omit, "not allowed on this type"));
    }
}

/// `x-kubernetes-embedded-resource` nodes below the root (`objectmeta.Validate(nil, obj, s, false)`).
pub fn validate_embedded(path: &str, v: &Value, s: &Schema, errs: &mut Vec<FieldError>) {
    // Nothing to check where no embedded resource is declared (most CRDs declare none): the
    // walk and its paths were a tenth of validating a TrainJob.
    if !s.has_embedded_below {
        return;
    }
    match v {
        Value::Object(m) => {
            if s.embedded_resource {
                validate_embedded_resource(path, m, errs);
            }
            for (k, child) in m {
                if let Some(p) = s.properties.get(k) {
                    validate_embedded(&join(path, k), child, p, errs);
                } else if let Some(Additional::Schema(a)) = &s.additional {
                    validate_embedded(&format!("{path}[{k}]"), child, a, errs);
                }
            }
        }
        Value::Array(items) => {
            if let Some(it) = &s.items {
                for (i, child) in items.iter().enumerate() {
                    validate_embedded(&format!("{path}[{i}]"), child, it, errs);
                }
            }
        }
        _ => {}
    }
}

fn join(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

fn validate_embedded_resource(path: &str, m: &serde_json::Map<String, Value>, errs: &mut Vec<FieldError>) {
    if !m.contains_key("apiVersion") {
        errs.push(FieldError::required(join(path, "apiVersion"), ""));
    }
    if !m.contains_key("kind") {
        errs.push(FieldError::required(join(path, "kind"), ""));
    }
    if let Some(v) = m.get("apiVersion") {
        match v.as_str() {
            None => errs.push(FieldError::invalid(join(path, "apiVersion"), BadValue::of_json(v), "must be a string")),
            Some("") => errs.push(FieldError::invalid(join(path, "apiVersion"), BadValue::Str(String::new()), "must not be empty")),
            Some(av) if av.matches('/').count() > 1 => errs.push(FieldError::invalid(
                join(path, "apiVersion"),
                BadValue::Str(av.into()),
                format!("unexpected GroupVersion string: {av}"),
            )),
            Some(_) => {}
        }
    }
    if let Some(v) = m.get("kind") {
        match v.as_str() {
            None => errs.push(FieldError::invalid(join(path, "kind"), BadValue::of_json(v), "must be a string")),
            Some("") => errs.push(FieldError::invalid(join(path, "kind"), BadValue::Str(String::new()), "must not be empty")),
            Some(k) => {
                let e = dns1035_label_errors(&k.to_lowercase());
                if !e.is_empty() {
                    errs.push(FieldError::invalid(
                        join(path, "kind"),
                        BadValue::Str(k.into()),
                        format!("may have mixed case, but should otherwise match: {}", e.join(",")),
                    ));
                }
            }
        }
    }
    if let Some(Value::Object(meta)) = m.get("metadata") {
        if let Some(name) = meta.get("name").and_then(Value::as_str) {
            let mp = join(&join(path, "metadata"), "name");
            if name == "." || name == ".." {
                errs.push(FieldError::invalid(mp, BadValue::Str(name.into()), format!("may not be '{name}'")));
            } else {
                for bad in ["/", "%"] {
                    if name.contains(bad) {
                        errs.push(FieldError::invalid(mp.clone(), BadValue::Str(name.into()), format!("may not contain '{bad}'")));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn root_name_is_a_dns_subdomain() {
        let mut errs = Vec::new();
        validate_root_meta(&json!({"metadata":{"name":"Bad_Name","namespace":"default"}}), true, &mut errs);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().starts_with("metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
        let mut errs = Vec::new();
        validate_root_meta(&json!({"metadata":{"name":"ok.name","namespace":"default"}}), true, &mut errs);
        assert!(errs.is_empty());
        let mut errs = Vec::new();
        validate_root_meta(&json!({"metadata":{"name":"x","namespace":"n"}}), false, &mut errs);
        assert_eq!(errs[0].to_string(), "metadata.namespace: Forbidden: not allowed on this type");
    }

    #[test]
    fn embedded_resources_need_kind_and_api_version() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{"t":{"type":"object","x-kubernetes-embedded-resource":true,
                "x-kubernetes-preserve-unknown-fields":true}}}),
            &kube_version::KubeVersion::new(1, 36),
        )
        .unwrap();
        let mut errs = Vec::new();
        validate_embedded("", &json!({"t":{"kind":"Bad Kind"}}), &s, &mut errs);
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(text[0], "t.apiVersion: Required value");
        assert!(text[1].starts_with("t.kind: Invalid value: \"Bad Kind\": may have mixed case"));
    }

    /// The walk enters only subtrees that declare an embedded resource, and still finds one
    /// nested under plain objects and lists.
    #[test]
    fn embedded_resources_are_found_where_declared_only() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{
                "a":{"type":"array","items":{"type":"object","properties":{"t":{"type":"object","x-kubernetes-embedded-resource":true,
                    "x-kubernetes-preserve-unknown-fields":true}}}},
                "b":{"type":"object","properties":{"x":{"type":"string"}}}}}),
            &kube_version::KubeVersion::new(1, 36),
        )
        .unwrap();
        assert!(s.has_embedded_below && s.properties["a"].has_embedded_below && !s.properties["b"].has_embedded_below);
        let mut errs = Vec::new();
        validate_embedded("", &json!({"a":[{"t":{"kind":"K"}}],"b":{"x":"y"}}), &s, &mut errs);
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["a[0].t.apiVersion: Required value"]);
    }
}
