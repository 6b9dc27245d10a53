//! The rest of the function map: Helm's own (`include`, `tpl`, `required`, `fail`, `lookup`,
//! `getHostByName`), Sprig's defaults, reflection, paths, URLs, regular expressions (Go RE2
//! syntax, with Go's ASCII `\d \w \s`), semver, and random values.

use std::rc::Rc;

use super::convert::strval;
use super::random::random_u64;
use super::strings::{int, s, string_list};
use crate::version::{parse_lenient, Constraint};
use gotmpl::fmt::go_quote;
use gotmpl::{FnError, FuncMap, GoError, Map, Object, Param, Value};

type R = Result<Value, FnError>;

/// Helm wraps `required`/`fail` messages so its error reformatting can find them.
pub const WARN_START: &str = "HELM_ERR_START";
pub const WARN_END: &str = "HELM_ERR_END";

fn empty(v: &Value) -> bool {
    !v.truth()
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::{Any, Bool, Int, Str};
    // Helm.
    map.add("include", &[Str, Any], None, |ctx, a| super::templates::include(ctx, s(&a[0]), a[1].clone()).map(Value::string));
    map.add("tpl", &[Str, Any], None, |ctx, a| super::templates::tpl(ctx, s(&a[0]), a[1].clone()).map(Value::string));
    map.add("required", &[Str, Any], None, |_, a| {
        if a[1].is_nil() || a[1].as_str() == Some("") {
            return Err(FnError::new(format!("{WARN_START}{}{WARN_END}", s(&a[0]))));
        }
        Ok(a[1].clone())
    });
    map.add("fail", &[Str], None, |_, a| Err(FnError::new(format!("{WARN_START}{}{WARN_END}", s(&a[0])))));
    // Without a cluster (helm template) lookup finds nothing.
    map.add("lookup", &[Str, Str, Str, Str], None, |_, _| Ok(Value::empty_map()));
    map.add("getHostByName", &[Str], None, |_, _| Ok(Value::str("")));

    // Defaults.
    map.add("default", &[Any], Some(Any), |_, a| Ok(if a.len() < 2 || empty(&a[1]) { a[0].clone() } else { a[1].clone() }));
    map.add("empty", &[Any], None, |_, a| Ok(Value::Bool(empty(&a[0]))));
    map.add("coalesce", &[], Some(Any), |_, a| Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil)));
    map.add("all", &[], Some(Any), |_, a| Ok(Value::Bool(a.iter().all(|v| !empty(v)))));
    map.add("any", &[], Some(Any), |_, a| Ok(Value::Bool(a.iter().any(|v| !empty(v)))));
    map.add("ternary", &[Any, Any, Bool], None, |_, a| Ok(if a[2].truth() { a[0].clone() } else { a[1].clone() }));

    // Reflection.
    map.add("kindOf", &[Any], None, |_, a| Ok(Value::str(a[0].kind_name())));
    map.add("typeOf", &[Any], None, |_, a| Ok(Value::string(a[0].type_name())));
    map.add("kindIs", &[Str, Any], None, |_, a| Ok(Value::Bool(s(&a[0]) == a[1].kind_name())));
    map.add("typeIs", &[Str, Any], None, |_, a| Ok(Value::Bool(s(&a[0]) == a[1].type_name())));
    map.add("typeIsLike", &[Str, Any], None, |_, a| {
        let t = a[1].type_name();
        Ok(Value::Bool(s(&a[0]) == t || format!("*{}", s(&a[0])) == t))
    });
    map.add("deepEqual", &[Any, Any], None, |_, a| Ok(Value::Bool(a[0].deep_equal(&a[1]))));

    // Paths (the os* variants are the same on the systems this runs on).
    for name in ["base", "osBase"] {
        map.add(name, &[Str], None, |_, a| Ok(Value::string(path_base(s(&a[0])))));
    }
    for name in ["dir", "osDir"] {
        map.add(name, &[Str], None, |_, a| Ok(Value::string(path_dir(s(&a[0])))));
    }
    for name in ["ext", "osExt"] {
        map.add(name, &[Str], None, |_, a| Ok(Value::string(path_ext(s(&a[0])))));
    }
    for name in ["clean", "osClean"] {
        map.add(name, &[Str], None, |_, a| Ok(Value::string(path_clean(s(&a[0])))));
    }
    for name in ["isAbs", "osIsAbs"] {
        map.add(name, &[Str], None, |_, a| Ok(Value::Bool(s(&a[0]).starts_with('/'))));
    }

    // URLs.
    map.add("urlParse", &[Str], None, |_, a| url_parse(s(&a[0])));
    map.add("urlJoin", &[Param::Map], None, |_, a| Ok(Value::string(url_join(&a[0]))));

    // Regular expressions.
    map.add("regexMatch", &[Str, Str], None, |_, a| Ok(Value::Bool(go_regex(s(&a[0])).map(|r| r.is_match(s(&a[1]))).unwrap_or(false))));
    map.add("mustRegexMatch", &[Str, Str], None, |_, a| Ok(Value::Bool(regex_or_err(s(&a[0]))?.is_match(s(&a[1])))));
    for name in ["regexFind", "mustRegexFind"] {
        map.add(name, &[Str, Str], None, |_, a| {
            Ok(Value::string(regex_or_err(s(&a[0]))?.find(s(&a[1])).map(|m| m.as_str().to_string()).unwrap_or_default()))
        });
    }
    for name in ["regexFindAll", "mustRegexFindAll"] {
        map.add(name, &[Str, Str, Int], None, |_, a| {
            let re = regex_or_err(s(&a[0]))?;
            let n = int(&a[2]);
            let all = re.find_iter(s(&a[1])).map(|m| m.as_str().to_string());
            let found: Vec<String> = if n < 0 { all.collect() } else { all.take(n as usize).collect() };
            Ok(string_list(found))
        });
    }
    for name in ["regexReplaceAll", "mustRegexReplaceAll"] {
        map.add(name, &[Str, Str, Str], None, |_, a| {
            Ok(Value::string(regex_or_err(s(&a[0]))?.replace_all(s(&a[1]), s(&a[2])).into_owned()))
        });
    }
    for name in ["regexReplaceAllLiteral", "mustRegexReplaceAllLiteral"] {
        map.add(name, &[Str, Str, Str], None, |_, a| {
            Ok(Value::string(regex_or_err(s(&a[0]))?.replace_all(s(&a[1]), regex::NoExpand(s(&a[2]))).into_owned()))
        });
    }
    for name in ["regexSplit", "mustRegexSplit"] {
        map.add(name, &[Str, Str, Int], None, |_, a| {
            Ok(string_list(regex_split(&regex_or_err(s(&a[0]))?, s(&a[0]), s(&a[1]), int(&a[2]))))
        });
    }
    map.add("regexQuoteMeta", &[Str], None, |_, a| Ok(Value::string(quote_meta(s(&a[0])))));

    // Semver.
    map.add("semver", &[Str], None, |_, a| {
        let text = s(&a[0]);
        let version = parse_lenient(text).ok_or("invalid semantic version")?;
        Ok(Value::Object(Rc::new(SemverValue { version, original: text.to_string() })))
    });
    map.add("semverCompare", &[Str, Str], None, |_, a| {
        let constraint = Constraint::parse(s(&a[0])).map_err(|_| FnError::new(format!("improper constraint: {}", s(&a[0]))))?;
        let version = parse_lenient(s(&a[1])).ok_or("invalid semantic version")?;
        Ok(Value::Bool(constraint.matches(&version)))
    });

    // Random values: their content cannot match Helm's, their shape does.
    map.add("randAlphaNum", &[Int], None, |_, a| {
        random_string(int(&a[0]), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    });
    map.add("randAlpha", &[Int], None, |_, a| random_string(int(&a[0]), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"));
    map.add("randNumeric", &[Int], None, |_, a| random_string(int(&a[0]), "0123456789"));
    map.add("randAscii", &[Int], None, |_, a| {
        let printable: String = (32u8..127).map(|b| b as char).collect();
        random_string(int(&a[0]), &printable)
    });
    map.add("randBytes", &[Int], None, |_, a| {
        use base64::Engine;
        let n = int(&a[0]).clamp(0, super::MAX_RESULT_BYTES as i64) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| random_u64() as u8).collect();
        Ok(Value::string(base64::engine::general_purpose::STANDARD.encode(bytes)))
    });
    map.add("randInt", &[Int, Int], None, |_, a| {
        let (min, max) = (int(&a[0]), int(&a[1]));
        if max <= min {
            return Err("invalid argument to Intn".into());
        }
        Ok(Value::Int(min + (random_u64() % (max - min) as u64) as i64))
    });
    map.add("uuidv4", &[], None, |_, _| {
        let mut b: Vec<u8> = (0..16).map(|_| random_u64() as u8).collect();
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = super::strings::hex(&b);
        Ok(Value::string(format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])))
    });
}

fn random_string(n: i64, alphabet: &str) -> R {
    if n < 0 {
        return Err("Count must be greater than zero".into());
    }
    let chars: Vec<char> = alphabet.chars().collect();
    let n = (n as usize).min(super::MAX_RESULT_BYTES);
    Ok(Value::string((0..n).map(|_| chars[(random_u64() % chars.len() as u64) as usize]).collect()))
}

/// Go's regexp `\d \w \s` (and negations) are ASCII; Rust's are Unicode-aware unless rewritten.
fn go_regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    let mut translated = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            translated.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => translated.push_str("[0-9]"),
            Some('D') => translated.push_str("[^0-9]"),
            Some('w') => translated.push_str("[0-9A-Za-z_]"),
            Some('W') => translated.push_str("[^0-9A-Za-z_]"),
            Some('s') => translated.push_str("[\\t\\n\\f\\r ]"),
            Some('S') => translated.push_str("[^\\t\\n\\f\\r ]"),
            Some(other) => {
                translated.push('\\');
                translated.push(other);
            }
            None => translated.push('\\'),
        }
    }
    regex::RegexBuilder::new(&translated).size_limit(8 * 1024 * 1024).build()
}

fn regex_or_err(pattern: &str) -> Result<regex::Regex, FnError> {
    go_regex(pattern).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(text) => text.lines().last().unwrap_or("invalid syntax").trim_start_matches("error: ").to_string(),
            other => other.to_string(),
        };
        FnError::new(format!("regexp: Compile({}): error parsing regexp: {detail}", go_quote(pattern).replace('"', "`")))
    })
}

/// Go's `Regexp.Split`.
fn regex_split(re: &regex::Regex, expr: &str, text: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !expr.is_empty() && text.is_empty() {
        return vec![String::new()];
    }
    let mut out = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for m in re.find_iter(text) {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            out.push(text[beg..end].to_string());
        }
        beg = m.end();
    }
    if end != text.len() {
        out.push(text[beg..].to_string());
    }
    out
}

fn quote_meta(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Go's `path.Clean`.
pub fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

fn path_ext(p: &str) -> String {
    let base_start = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    match p[base_start..].rfind('.') {
        Some(i) => p[base_start + i..].to_string(),
        None => String::new(),
    }
}

fn url_parse(text: &str) -> R {
    let mut m = Map::new();
    let (rest, fragment) = text.split_once('#').map(|(a, b)| (a, b.to_string())).unwrap_or((text, String::new()));
    let (scheme, after) = match rest.split_once(':') {
        Some((sc, af)) if !sc.is_empty() && sc.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) => (sc.to_string(), af),
        _ => (String::new(), rest),
    };
    let (before_query, query) = after.split_once('?').map(|(a, b)| (a, b.to_string())).unwrap_or((after, String::new()));
    let (mut host, mut userinfo, mut path, mut opaque) = (String::new(), String::new(), String::new(), String::new());
    if let Some(auth_and_path) = before_query.strip_prefix("//") {
        let (authority, p) = match auth_and_path.find('/') {
            Some(i) => (&auth_and_path[..i], &auth_and_path[i..]),
            None => (auth_and_path, ""),
        };
        match authority.rsplit_once('@') {
            Some((u, h)) => {
                userinfo = u.to_string();
                host = h.to_string();
            }
            None => host = authority.to_string(),
        }
        path = p.to_string();
    } else if !scheme.is_empty() && !before_query.starts_with('/') {
        opaque = before_query.to_string();
    } else {
        path = before_query.to_string();
    }
    let hostname = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[').to_string()
    } else {
        host.rsplit_once(':').map(|(h, _)| h.to_string()).unwrap_or_else(|| host.clone())
    };
    for (k, v) in [
        ("scheme", scheme),
        ("host", host),
        ("hostname", hostname),
        ("path", path),
        ("query", query),
        ("opaque", opaque),
        ("fragment", fragment),
        ("userinfo", userinfo),
    ] {
        m.insert(k.into(), Value::string(v));
    }
    Ok(Value::map(m))
}

fn url_join(v: &Value) -> String {
    let get = |k: &str| match v {
        Value::Map(m) => m.entries.borrow().get(k).map(strval).unwrap_or_default(),
        _ => String::new(),
    };
    let mut out = String::new();
    let scheme = get("scheme");
    if !scheme.is_empty() {
        out.push_str(&scheme);
        out.push(':');
    }
    let opaque = get("opaque");
    if !opaque.is_empty() {
        out.push_str(&opaque);
    } else {
        let host = get("host");
        let userinfo = get("userinfo");
        if !host.is_empty() || !scheme.is_empty() && !userinfo.is_empty() {
            out.push_str("//");
            if !userinfo.is_empty() {
                out.push_str(&userinfo);
                out.push('@');
            }
            out.push_str(&host);
        }
        let path = get("path");
        if !path.is_empty() && !path.starts_with('/') && !host.is_empty() {
            out.push('/');
        }
        out.push_str(&path);
    }
    let query = get("query");
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query);
    }
    let fragment = get("fragment");
    if !fragment.is_empty() {
        out.push('#');
        out.push_str(&fragment);
    }
    out
}

/// Masterminds `*semver.Version` as templates see it.
#[derive(Debug)]
struct SemverValue {
    version: semver::Version,
    original: String,
}

impl Object for SemverValue {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }
    fn kind(&self) -> &'static str {
        "ptr"
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "Major" | "Minor" | "Patch" | "Prerelease" | "Metadata" | "Original" | "String")
    }
    fn call(&self, name: &str, _args: &[Value]) -> Option<Result<Value, GoError>> {
        let v = &self.version;
        Some(Ok(match name {
            "Major" => Value::Uint(v.major),
            "Minor" => Value::Uint(v.minor),
            "Patch" => Value::Uint(v.patch),
            "Prerelease" => Value::string(v.pre.to_string()),
            "Metadata" => Value::string(v.build.to_string()),
            "Original" => Value::string(self.original.clone()),
            "String" => Value::string(v.to_string()),
            _ => return None,
        }))
    }
    fn display(&self) -> String {
        self.version.to_string()
    }
    fn to_json(&self) -> Value {
        Value::string(self.version.to_string())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_like_go() {
        assert_eq!(
            (path_base("/a/b.txt"), path_dir("/a/b.txt"), path_ext("b.tar.gz"), path_clean("a//b/../c")),
            ("b.txt".into(), "/a".into(), ".gz".into(), "a/c".into())
        );
        assert_eq!((path_base(""), path_base("/"), path_dir("x")), (".".into(), "/".into(), ".".into()));
    }

    #[test]
    fn regexes_use_go_classes() {
        assert!(go_regex(r"^\d+$").unwrap().is_match("123"));
        assert!(!go_regex(r"^\d+$").unwrap().is_match("١٢"));
        let re = go_regex(",").unwrap();
        assert_eq!(regex_split(&re, ",", "a,b", -1), ["a", "b"]);
        assert_eq!(quote_meta("a.b"), "a\\.b");
    }
}
