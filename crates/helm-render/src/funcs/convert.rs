//! Sprig's value conversions: `strval` (strings as is, everything else `%v`) and spf13/cast's
//! lenient numeric casts, where failures quietly become zero.

use gotmpl::Value;
// Sprig `strval` lives below both chart loading (annotations) and the function library.
pub use crate::value_ops::strval;

/// spf13/cast `trimZeroDecimal`: `"12.00"` → `"12"`.
fn trim_zero_decimal(s: &str) -> &str {
    let b = s.as_bytes();
    let mut found_zero = false;
    for i in (1..=b.len()).rev() {
        match b[i - 1] {
            b'.' => {
                if found_zero {
                    return &s[..i - 1];
                }
                return s;
            }
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int_base0(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    let digits = if radix != 10 || lower.contains('_') {
        // Underscores are only valid with a base prefix; keep it simple and strict.
        if digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
            return None;
        }
        digits.replace('_', "")
    } else {
        digits
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits, radix).ok()?;
    let value = if neg { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

/// spf13/cast `ToInt64`.
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint(u) => *u as i64,
        Value::Float(f) => {
            if f.is_nan() {
                i64::MIN
            } else {
                *f as i64
            }
        }
        Value::String(s) => parse_int_base0(trim_zero_decimal(s)).unwrap_or(0),
        Value::Bool(b) => *b as i64,
        _ => 0,
    }
}

/// spf13/cast `ToFloat64`.
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::Float(f) => *f,
        Value::String(s) => gotmpl::parse::go_parse_float(s).unwrap_or(0.0),
        Value::Bool(b) => *b as i64 as f64,
        _ => 0.0,
    }
}

/// Sprig `strslice`: a list's items as strings (nil items dropped), a scalar as one string.
pub fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => l.items.iter().filter(|i| !i.is_nil()).map(strval).collect(),
        Value::Invalid | Value::Nil => Vec::new(),
        Value::Bytes(b) => b.iter().map(|x| x.to_string()).collect(),
        other => vec![strval(other)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_like_spf13_cast() {
        let s = |x: &str| to_int64(&Value::str(x));
        assert_eq!((s("12"), s("1.9"), s("08"), s("0x10"), s("12.00"), s("abc")), (12, 0, 0, 16, 12, 0));
        assert_eq!(to_int64(&Value::Float(1.5)), 1);
        assert_eq!(to_int64(&Value::Bool(true)), 1);
        assert_eq!(to_float64(&Value::str("1.5")), 1.5);
        assert_eq!(to_float64(&Value::str("x")), 0.0);
    }
}
