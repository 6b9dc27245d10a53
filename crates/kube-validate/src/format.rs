//! String formats as kube-openapi's `strfmt.Default` registry checks them (the subset apiextensions
//! keeps, see [`super::structural`]). Written by hand: the checks are Go library behaviours
//! (`time.Parse` layouts, `net.ParseIP`, `net/url.ParseRequestURI`, Kubernetes name rules) that no
//! Rust crate reproduces as such; the exact rules come from
//! `k8s.io/kube-openapi/pkg/validation/strfmt/default.go` at the commit kube-apiserver 1.36 pins.

use std::sync::OnceLock;

use regex::Regex;

/// Whether `format` is in the registry at all (`KnownFormats.ContainsName`).
pub fn known(format: &str) -> bool {
    matches!(
        format.replace('-', "").as_str(),
        "bsonobjectid"
            | "uri"
            | "email"
            | "hostname"
            | "ipv4"
            | "ipv6"
            | "cidr"
            | "mac"
            | "uuid"
            | "uuid3"
            | "uuid4"
            | "uuid5"
            | "isbn"
            | "isbn10"
            | "isbn13"
            | "creditcard"
            | "ssn"
            | "hexcolor"
            | "rgbcolor"
            | "byte"
            | "password"
            | "date"
            | "duration"
            | "datetime"
            | "k8sshortname"
            | "k8slongname"
    )
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("empty regex")))
}

/// Whether `s` is valid for `format` (a known format).
pub fn valid(format: &str, s: &str) -> bool {
    static HOST: OnceLock<Regex> = OnceLock::new();
    static UUID: OnceLock<Regex> = OnceLock::new();
    static UUID3: OnceLock<Regex> = OnceLock::new();
    static UUID4: OnceLock<Regex> = OnceLock::new();
    static UUID5: OnceLock<Regex> = OnceLock::new();
    static HEX: OnceLock<Regex> = OnceLock::new();
    static RGB: OnceLock<Regex> = OnceLock::new();
    static SSN: OnceLock<Regex> = OnceLock::new();
    static MAC: OnceLock<Regex> = OnceLock::new();
    static BSON: OnceLock<Regex> = OnceLock::new();
    static EMAIL: OnceLock<Regex> = OnceLock::new();
    match format.replace('-', "").as_str() {
        "password" => true,
        "datetime" => is_datetime(s),
        "date" => is_date(s),
        "duration" => is_duration(s),
        "byte" => is_base64(s),
        "hostname" => re(&HOST, r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$").is_match(s),
        "uuid" => re(&UUID, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(s),
        "uuid3" => re(&UUID3, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(s),
        "uuid4" => re(&UUID4, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(s),
        "uuid5" => re(&UUID5, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(s),
        "hexcolor" => re(&HEX, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(s),
        "rgbcolor" => re(&RGB, r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$").is_match(s),
        "ssn" => re(&SSN, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").is_match(s),
        "mac" => re(&MAC, r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$").is_match(s),
        "bsonobjectid" => re(&BSON, r"^[0-9a-fA-F]{24}$").is_match(s),
        "email" => re(&EMAIL, r"^[^@\s<>]+@[^@\s<>]+$").is_match(s),
        "ipv4" => is_ipv4(s),
        "ipv6" => s.contains(':') && s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "uri" => is_request_uri(s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "k8sshortname" => super::meta::dns1123_label_errors(s).is_empty(),
        "k8slongname" => super::meta::dns1123_subdomain_errors(s).is_empty(),
        _ => true,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `time.Parse("2006-01-02", s)`.
pub fn is_date(s: &str) -> bool {
    let p: Vec<&str> = s.split('-').collect();
    match (p.as_slice(),) {
        ([y, m, d],) => match (digits(y, 4), digits(m, 2), digits(d, 2)) {
            (Some(y), Some(m), Some(d)) => (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m),
            _ => false,
        },
        _ => false,
    }
}

/// strfmt `ParseDateTime`: RFC 3339 with or without fractional seconds, or local time without zone.
pub fn is_datetime(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let Some((date, rest)) = s.split_once('T') else { return false };
    if !is_date(date) || rest.len() < 8 {
        return false;
    }
    let (hms, mut tail) = rest.split_at(8);
    let b = hms.as_bytes();
    if b[2] != b':' || b[5] != b':' {
        return false;
    }
    match (digits(&hms[0..2], 2), digits(&hms[3..5], 2), digits(&hms[6..8], 2)) {
        (Some(h), Some(m), Some(sec)) if h < 24 && m < 60 && sec < 60 => {}
        _ => return false,
    }
    if let Some(frac) = tail.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return false;
        }
        tail = &frac[n..];
    }
    match tail {
        "" | "Z" => true,
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) && &z[3..4] == ":" => {
            matches!((digits(&z[1..3], 2), digits(&z[4..6], 2)), (Some(h), Some(m)) if h < 24 && m < 60)
        }
        _ => false,
    }
}

/// strfmt `ParseDuration`: Go's `time.ParseDuration`, else `<n><unit>` groups with long unit names.
pub fn is_duration(s: &str) -> bool {
    if go_parse_duration(s) {
        return true;
    }
    static GROUP: OnceLock<Regex> = OnceLock::new();
    let units: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    re(&GROUP, r"((\d+)\s*([A-Za-zµ]+))").captures_iter(s).any(|c| {
        let unit = c.get(3).map(|m| m.as_str().trim().to_lowercase()).unwrap_or_default();
        c.get(2).is_some_and(|d| d.as_str().parse::<i64>().is_ok())
            && units.iter().any(|v| {
                v.iter()
                    .enumerate()
                    .any(|(i, variant)| (i == v.len() - 1 && unit.starts_with(variant)) || unit.eq_ignore_ascii_case(variant))
            })
    })
}

/// Go's `time.ParseDuration` grammar: `[-+]?(\d*(\.\d*)?unit)+` or `0`.
fn go_parse_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let int = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut n = int;
        let mut frac = 0;
        if rest[n..].starts_with('.') {
            n += 1;
            frac = rest[n..].bytes().take_while(u8::is_ascii_digit).count();
            n += frac;
        }
        if int == 0 && frac == 0 {
            return false;
        }
        rest = &rest[n..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"].iter().filter(|u| rest.starts_with(**u)).max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

/// Go's `net.ParseIP` for dotted IPv4 (leading zeros rejected since Go 1.17).
fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && !(p.len() > 1 && p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else { return false };
    let Some(n) = digits(bits, bits.len()).filter(|_| !(bits.is_empty() || bits.len() > 1 && bits.starts_with('0'))) else {
        return false;
    };
    if is_ipv4(ip) {
        n <= 32
    } else {
        ip.contains(':') && ip.parse::<std::net::Ipv6Addr>().is_ok() && n <= 128
    }
}

/// govalidator `IsRequestURI`: `url.ParseRequestURI` accepts an absolute URI (scheme:...) or an
/// absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.contains(' ') && !s.starts_with('/') {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, _)) = s.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !s.contains(char::is_whitespace)
}

fn is_isbn10(s: &str) -> bool {
    let d: Vec<char> = s.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if d.len() != 10 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.iter().enumerate() {
        let v = match c {
            '0'..='9' => *c as u32 - '0' as u32,
            'X' if i == 9 => 10,
            _ => return false,
        };
        sum += (i as u32 + 1) * v;
    }
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let d: Vec<u32> = s.chars().filter(|c| *c != '-' && *c != ' ').filter_map(|c| c.to_digit(10)).collect();
    if d.len() != 13 || s.chars().filter(|c| *c != '-' && *c != ' ').count() != 13 {
        return false;
    }
    let sum: u32 = d[..12].iter().enumerate().map(|(i, v)| if i % 2 == 0 { *v } else { 3 * v }).sum();
    (10 - sum % 10) % 10 == d[12]
}

fn is_credit_card(s: &str) -> bool {
    let d: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if d.len() < 12 || d.len() > 19 {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, v)| {
            if i % 2 == 1 {
                let x = v * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                *v
            }
        })
        .sum();
    sum % 10 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(valid("date-time", "2024-02-29T10:00:00Z"));
        assert!(valid("date-time", "2024-02-29T10:00:00.123+02:00"));
        assert!(valid("date-time", "2024-02-29T10:00:00"));
        assert!(!valid("date-time", "2023-02-29T10:00:00Z"));
        assert!(!valid("date-time", "yesterday"));
        assert!(valid("date", "2024-01-31"));
        assert!(!valid("date", "2024-1-31"));
        assert!(valid("duration", "1h30m"));
        assert!(valid("duration", "3 days"));
        assert!(!valid("duration", "soon"));
        assert!(valid("byte", "aGVsbG8="));
        assert!(!valid("byte", "***"));
        assert!(valid("ipv4", "10.0.0.1"));
        assert!(!valid("ipv4", "10.0.0.01"));
        assert!(valid("cidr", "10.0.0.0/8"));
        assert!(!valid("cidr", "10.0.0.0/33"));
        assert!(valid("uri", "https://example.com/x"));
        assert!(!valid("uri", "example"));
        assert!(valid("uuid", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(valid("k8s-short-name", "abc-1"));
        assert!(!valid("k8s-short-name", "Abc"));
        assert!(valid("isbn10", "0321751043"));
        assert!(known("date-time") && !known("nonsense"));
    }
}
