//! go-yaml v2's YAML 1.1 resolution of plain scalars: `yes`/`on`/`y` are booleans, `~` is null,
//! `017`/`0x1F`/`0b101`/`1_000` are integers, `1e3` and `.5` are floats, `2001-12-14` is a
//! timestamp. The reader uses it to type values; the emitter uses it to decide which strings
//! must be quoted so they read back as strings.

#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Timestamp,
    Merge,
    Str,
}

pub fn resolve_plain(s: &str) -> Resolved {
    let Some(first) = s.bytes().next() else { return Resolved::Null };
    let hint = match first {
        b'+' | b'-' => 'S',
        b'0'..=b'9' => 'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => 'M',
        b'.' => '.',
        b'<' => 'M',
        _ => return Resolved::Str,
    };
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => return Resolved::Bool(false),
        "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        "<<" => return Resolved::Merge,
        _ => {}
    }
    match hint {
        'M' => Resolved::Str,
        '.' => match s.parse::<f64>() {
            Ok(f) if is_go_float_syntax(s) => Resolved::Float(f),
            _ => Resolved::Str,
        },
        _ => {
            if is_timestamp(s) {
                return Resolved::Timestamp;
            }
            let plain = s.replace('_', "");
            if let Some(v) = parse_go_int(&plain) {
                return v;
            }
            if is_yaml_style_float(&plain) {
                if let Ok(f) = plain.parse::<f64>() {
                    return Resolved::Float(f);
                }
            }
            Resolved::Str
        }
    }
}

/// `strconv.ParseFloat` accepts a leading `.`; Rust's parser agrees on the forms that matter.
fn is_go_float_syntax(s: &str) -> bool {
    let body = s.trim_start_matches(['+', '-']);
    !body.is_empty()
        && body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && body.chars().any(|c| c.is_ascii_digit())
}

/// `strconv.ParseInt(s, 0, 64)` then `ParseUint(s, 0, 64)` (after `_` removal by the caller).
fn parse_go_int(s: &str) -> Option<Resolved> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        (magnitude <= i64::MAX as u128 + 1).then(|| Resolved::Int((-(magnitude as i128)) as i64))
    } else if magnitude <= i64::MAX as u128 {
        Some(Resolved::Int(magnitude as i64))
    } else if magnitude <= u64::MAX as u128 {
        Some(Resolved::Uint(magnitude as u64))
    } else {
        None
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Base-60 floats (`1:20`, `1:20:30.5`): no longer resolved, but still quoted on output.
pub fn is_base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let start = i;
        if i < b.len() && (b'0'..=b'5').contains(&b[i]) && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
            i += 2;
        } else if i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2's timestamp forms: `2006-1-2`, `2006-1-2 15:4:5.999999999`,
/// `2006-1-2T15:4:5.999999999Z07:00` (also `t`).
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let year_end = b.iter().position(|c| !c.is_ascii_digit()).unwrap_or(b.len());
    if year_end != 4 || year_end == b.len() || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let Some(month) = number(b, &mut i, 1, 2) else { return false };
    if i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    let Some(day) = number(b, &mut i, 1, 2) else { return false };
    let year: i32 = s[..4].parse().unwrap_or(0);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if sep != b'T' && sep != b't' && sep != b' ' {
        return false;
    }
    i += 1;
    let Some(hour) = number(b, &mut i, 1, 2) else { return false };
    if i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    let Some(minute) = number(b, &mut i, 1, 2) else { return false };
    if i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    let Some(second) = number(b, &mut i, 1, 2) else { return false };
    if hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        let start = i + 1;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if sep == b' ' {
        return i == b.len();
    }
    // The T forms need a zone: Z or ±hh:mm.
    if i < b.len() && b[i] == b'Z' {
        return i + 1 == b.len();
    }
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
        let Some(zh) = number(b, &mut i, 2, 2) else { return false };
        if i >= b.len() || b[i] != b':' {
            return false;
        }
        i += 1;
        let Some(zm) = number(b, &mut i, 2, 2) else { return false };
        return i == b.len() && zh < 24 && zm < 60;
    }
    false
}

fn number(b: &[u8], i: &mut usize, min: usize, max: usize) -> Option<u32> {
    let start = *i;
    while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i - start < min {
        return None;
    }
    std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_go_yaml_v2() {
        assert_eq!(resolve_plain("yes"), Resolved::Bool(true));
        assert_eq!(resolve_plain("Off"), Resolved::Bool(false));
        assert_eq!(resolve_plain("tRUE"), Resolved::Str);
        assert_eq!(resolve_plain("~"), Resolved::Null);
        assert_eq!(resolve_plain(""), Resolved::Null);
        assert_eq!(resolve_plain("017"), Resolved::Int(15));
        assert_eq!(resolve_plain("0o17"), Resolved::Int(15));
        assert_eq!(resolve_plain("0x1F"), Resolved::Int(31));
        assert_eq!(resolve_plain("0b101"), Resolved::Int(5));
        assert_eq!(resolve_plain("1_000"), Resolved::Int(1000));
        assert_eq!(resolve_plain("+12"), Resolved::Int(12));
        assert_eq!(resolve_plain("1e3"), Resolved::Float(1000.0));
        assert_eq!(resolve_plain(".5"), Resolved::Float(0.5));
        assert_eq!(resolve_plain("5."), Resolved::Float(5.0));
        assert_eq!(resolve_plain("12345678901234567890"), Resolved::Uint(12345678901234567890));
        assert_eq!(resolve_plain("2001-12-14"), Resolved::Timestamp);
        assert_eq!(resolve_plain("2001-12-14T21:59:43.10-05:00"), Resolved::Timestamp);
        for s in ["1e", "1.2.3", "0x", "1:20", "a: b", "=", "-a"] {
            assert_eq!(resolve_plain(s), Resolved::Str, "{s}");
        }
        assert!(is_base60_float("1:20") && is_base60_float("1:20:30") && !is_base60_float("1_0"));
    }
}
