//! Field errors worded as `k8s.io/apimachinery/pkg/util/validation/field` words them
//! (`Error.Error()` = `<path>: <type>[: <value>][: <detail>]`), so a verdict can be compared with the
//! API server's status causes character for character. Also Go's `%v` for float64, which the
//! OpenAPI messages use for bounds.

use std::fmt;

/// `field.ErrorType`, with the strings `ErrorType.String()` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    Required,
    Invalid,
    TypeInvalid,
    NotSupported,
    Forbidden,
    Duplicate,
    TooLong,
    TooMany,
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Required => "Required value",
            ErrorKind::Invalid | ErrorKind::TypeInvalid => "Invalid value",
            ErrorKind::NotSupported => "Unsupported value",
            ErrorKind::Forbidden => "Forbidden",
            ErrorKind::Duplicate => "Duplicate value",
            ErrorKind::TooLong => "Too long",
            ErrorKind::TooMany => "Too many",
            ErrorKind::Internal => "Internal error",
        }
    }

    /// `metav1.CauseType` of the status cause the API server sends for this kind.
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorKind::Required => "FieldValueRequired",
            ErrorKind::Invalid => "FieldValueInvalid",
            ErrorKind::TypeInvalid => "FieldValueTypeInvalid",
            ErrorKind::NotSupported => "FieldValueNotSupported",
            ErrorKind::Forbidden => "FieldValueForbidden",
            ErrorKind::Duplicate => "FieldValueDuplicate",
            ErrorKind::TooLong => "FieldValueTooLong",
            ErrorKind::TooMany => "FieldValueTooMany",
            ErrorKind::Internal => "InternalError",
        }
    }

    /// The kinds `hasBlockingErr` in apiextensions-apiserver's strategy treats as blocking CEL.
    pub fn blocks_cel(self) -> bool {
        matches!(self, ErrorKind::NotSupported | ErrorKind::Required | ErrorKind::TooLong | ErrorKind::TooMany | ErrorKind::TypeInvalid)
    }
}

/// `Error.BadValue`, printed the way `ErrorBody` prints each Go type.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum BadValue {
    /// `field.OmitValueType{}`: nothing printed.
    Omit,
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Anything else: its JSON encoding (`null`, objects, lists, Go `int`s).
    Json(String),
}

impl BadValue {
    /// The value as Go's `interface{}` holding decoded JSON would be printed.
    pub fn of_json(v: &serde_json::Value) -> BadValue {
        match v {
            serde_json::Value::String(s) => BadValue::Str(s.clone()),
            serde_json::Value::Bool(b) => BadValue::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => BadValue::Int(i),
                None => BadValue::Float(n.as_f64().unwrap_or(0.0)),
            },
            other => BadValue::Json(go_json(other)),
        }
    }
}

/// Go's `json.Marshal` of decoded JSON: object keys sorted, `<`, `>` and `&` escaped, floats as Go
/// prints them.
pub fn go_json(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(k, out);
                out.push(':');
                write_go_json(&m[k.as_str()], out);
            }
            out.push('}');
        }
        serde_json::Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        serde_json::Value::String(s) => write_go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_go_string(s: &str, out: &mut String) {
    let json = serde_json::to_string(s).unwrap_or_default();
    out.push_str(&json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026"));
}

/// One `field.Error`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FieldError {
    pub kind: ErrorKind,
    /// `field.Path.String()`; `<nil>` for a nil path.
    pub field: String,
    pub value: BadValue,
    pub detail: String,
}

impl FieldError {
    pub fn new(kind: ErrorKind, field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> Self {
        FieldError { kind, field: field.into(), value, detail: detail.into() }
    }

    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Required, field, BadValue::Str(String::new()), detail)
    }

    pub fn invalid(field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, field, value, detail)
    }

    /// `field.TooLong(path, _, max)`.
    pub fn too_long(field: impl Into<String>, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("may not be more than {max} {}", if max == 1 { "byte" } else { "bytes" })
        } else {
            "value is too long".to_string()
        };
        Self::new(ErrorKind::TooLong, field, BadValue::Str("<value omitted>".into()), detail)
    }

    /// `field.TooMany(path, actual, max)`.
    pub fn too_many(field: impl Into<String>, actual: i64, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("must have at most {max} {}", if max == 1 { "item" } else { "items" })
        } else {
            "has too many items".to_string()
        };
        let value = if actual >= 0 { BadValue::Json(actual.to_string()) } else { BadValue::Omit };
        Self::new(ErrorKind::TooMany, field, value, detail)
    }

    /// `field.NotSupported(path, value, valid)`: valid values quoted with Go's `strconv.Quote`.
    pub fn not_supported(field: impl Into<String>, value: BadValue, valid: &[String]) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorKind::NotSupported, field, value, detail)
    }

    /// `ErrorBody()`: everything after `<path>: `.
    pub fn body(&self) -> String {
        let mut s = String::from(self.kind.as_str());
        match self.kind {
            ErrorKind::Required | ErrorKind::Forbidden | ErrorKind::TooLong | ErrorKind::Internal => {}
            _ => match &self.value {
                BadValue::Omit => {}
                BadValue::Str(v) => {
                    s.push_str(": ");
                    s.push_str(&go_quote(v));
                }
                BadValue::Int(i) => s.push_str(&format!(": {i}")),
                BadValue::Float(f) => s.push_str(&format!(": {}", go_float(*f))),
                BadValue::Bool(b) => s.push_str(&format!(": {b}")),
                BadValue::Json(j) => {
                    s.push_str(": ");
                    s.push_str(j);
                }
            },
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Go's `strconv.Quote`, as the template engine's `%q` prints it: the API server quotes values with it.
pub use gotmpl::fmt::go_quote;

/// Go's `%v` of a float64: `strconv.FormatFloat(f, 'g', -1, 64)`, whose shortest form switches to
/// an exponent when the decimal exponent is below -4 or at least 6 (`eprec = 6` in strconv/ftoa.go).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Shortest round-trip digits and decimal exponent from Rust's `{:e}`.
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let nd = digits.len() as i32;
    if exp >= nd - 1 {
        format!("{sign}{digits}{}", "0".repeat((exp - nd + 1) as usize))
    } else if exp >= 0 {
        let (a, b) = digits.split_at((exp + 1) as usize);
        format!("{sign}{a}.{b}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_match_apimachinery() {
        let e = FieldError::new(
            ErrorKind::TypeInvalid,
            "spec.trainer.numProcPerNode",
            BadValue::Str("string".into()),
            "spec.trainer.numProcPerNode in body must be of type integer: \"string\"",
        );
        assert_eq!(
            e.to_string(),
            "spec.trainer.numProcPerNode: Invalid value: \"string\": spec.trainer.numProcPerNode in body must be of type integer: \"string\""
        );
        assert_eq!(FieldError::required("spec.x", "").to_string(), "spec.x: Required value");
        assert_eq!(FieldError::too_long("spec.s", 1).to_string(), "spec.s: Too long: may not be more than 1 byte");
        assert_eq!(FieldError::too_many("spec.l", 3, 2).to_string(), "spec.l: Too many: 3: must have at most 2 items");
        assert_eq!(
            FieldError::not_supported("spec.e", BadValue::Str("c".into()), &["a".into(), "b".into()]).to_string(),
            "spec.e: Unsupported value: \"c\": supported values: \"a\", \"b\""
        );
        assert_eq!(FieldError::invalid("<nil>", BadValue::Json("null".into()), "x").to_string(), "<nil>: Invalid value: null: x");
        assert_eq!(FieldError::invalid("spec.o", BadValue::Omit, "msg").to_string(), "spec.o: Invalid value: msg");
    }

    #[test]
    fn go_float_formatting() {
        assert_eq!(go_float(65535.0), "65535");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(100000.0), "100000");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5), "-2.5");
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(go_quote("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
        assert_eq!(go_quote("é"), "\"é\"");
    }
}
