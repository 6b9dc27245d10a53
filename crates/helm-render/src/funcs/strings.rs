//! Sprig's string functions: case, trimming, quoting, indentation, splitting and joining,
//! encodings and hashes, with Sprig's argument order (`replace old new s`, `trunc n s`).

use base64::Engine;
use sha2::Digest;

use super::convert::{strslice, strval};
use super::MAX_RESULT_BYTES;
use gotmpl::builtins::strings_list;
use gotmpl::fmt::{go_quote, sprint_value};
use gotmpl::{FnError, FuncMap, ListKind, Map, MapKind, Param, Value};

pub(super) fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// A Go `int` parameter's value (the executor has already checked the type).
pub(super) fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

fn ok(s: String) -> Result<Value, FnError> {
    if s.len() > MAX_RESULT_BYTES {
        return Err(FnError::new(format!("result of {} bytes exceeds the {MAX_RESULT_BYTES}-byte limit", s.len())));
    }
    Ok(Value::string(s))
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::*;
    map.add("upper", &[Str], None, |_, a| ok(s(&a[0]).chars().map(simple_upper).collect()));
    map.add("lower", &[Str], None, |_, a| ok(s(&a[0]).chars().map(simple_lower).collect()));
    map.add("title", &[Str], None, |_, a| ok(title(s(&a[0]))));
    map.add("untitle", &[Str], None, |_, a| ok(untitle(s(&a[0]))));
    map.add("trim", &[Str], None, |_, a| ok(s(&a[0]).trim().to_string()));
    map.add("trimAll", &[Str, Str], None, |_, a| ok(trim_cutset(s(&a[1]), s(&a[0]))));
    map.add("trimall", &[Str, Str], None, |_, a| ok(trim_cutset(s(&a[1]), s(&a[0]))));
    map.add("trimPrefix", &[Str, Str], None, |_, a| ok(s(&a[1]).strip_prefix(s(&a[0])).unwrap_or(s(&a[1])).to_string()));
    map.add("trimSuffix", &[Str, Str], None, |_, a| ok(s(&a[1]).strip_suffix(s(&a[0])).unwrap_or(s(&a[1])).to_string()));
    map.add("nospace", &[Str], None, |_, a| ok(delete_white_space(s(&a[0]))));
    map.add("repeat", &[Int, Str], None, |_, a| {
        let n = int(&a[0]);
        if n < 0 {
            return Err("strings: negative Repeat count".into());
        }
        let text = s(&a[1]);
        if (n as u128) * (text.len() as u128) > MAX_RESULT_BYTES as u128 {
            return Err(FnError::new(format!("repeat: result exceeds the {MAX_RESULT_BYTES}-byte limit")));
        }
        ok(text.repeat(n as usize))
    });
    map.add("replace", &[Str, Str, Str], None, |_, a| ok(go_replace(s(&a[2]), s(&a[0]), s(&a[1]))));
    map.add("contains", &[Str, Str], None, |_, a| Ok(Value::Bool(s(&a[1]).contains(s(&a[0])))));
    map.add("hasPrefix", &[Str, Str], None, |_, a| Ok(Value::Bool(s(&a[1]).starts_with(s(&a[0])))));
    map.add("hasSuffix", &[Str, Str], None, |_, a| Ok(Value::Bool(s(&a[1]).ends_with(s(&a[0])))));
    map.add("indent", &[Int, Str], None, |_, a| indent(int(&a[0]), s(&a[1])).and_then(ok));
    map.add("nindent", &[Int, Str], None, |_, a| indent(int(&a[0]), s(&a[1])).map(|t| format!("\n{t}")).and_then(ok));
    map.add("trunc", &[Int, Str], None, |_, a| ok(trunc(int(&a[0]), s(&a[1]))));
    map.add("substr", &[Int, Int, Str], None, |_, a| substr(int(&a[0]), int(&a[1]), s(&a[2])).and_then(ok));
    map.add("abbrev", &[Int, Str], None, |_, a| ok(abbrev(int(&a[0]), s(&a[1]))));
    map.add("abbrevboth", &[Int, Int, Str], None, |_, a| ok(abbrev_both(int(&a[0]), int(&a[1]), s(&a[2]))));
    map.add("initials", &[Str], None, |_, a| ok(initials(s(&a[0]))));
    map.add("wrap", &[Int, Str], None, |_, a| ok(wrap_custom(s(&a[1]), int(&a[0]), "\n", false)));
    map.add("wrapWith", &[Int, Str, Str], None, |_, a| ok(wrap_custom(s(&a[2]), int(&a[0]), s(&a[1]), true)));
    map.add("swapcase", &[Str], None, |_, a| ok(swapcase(s(&a[0]))));
    map.add("snakecase", &[Str], None, |_, a| ok(delimited_case(s(&a[0]), '_')));
    map.add("kebabcase", &[Str], None, |_, a| ok(delimited_case(s(&a[0]), '-')));
    map.add("camelcase", &[Str], None, |_, a| ok(camelcase(s(&a[0]))));
    map.add("shuffle", &[Str], None, |_, a| {
        let mut chars: Vec<char> = s(&a[0]).chars().collect();
        for i in (1..chars.len()).rev() {
            let j = (super::random::random_u64() % (i as u64 + 1)) as usize;
            chars.swap(i, j);
        }
        ok(chars.into_iter().collect())
    });
    map.add("plural", &[Str, Str, Int], None, |_, a| Ok(if int(&a[2]) == 1 { a[0].clone() } else { a[1].clone() }));
    map.add("quote", &[], Some(Any), |_, a| {
        ok(a.iter().filter(|v| !v.is_nil()).map(|v| go_quote(&strval(v))).collect::<Vec<_>>().join(" "))
    });
    map.add("squote", &[], Some(Any), |_, a| {
        ok(a.iter().filter(|v| !v.is_nil()).map(|v| format!("'{}'", sprint_value(v))).collect::<Vec<_>>().join(" "))
    });
    map.add("cat", &[], Some(Any), |_, a| {
        ok(a.iter().filter(|v| !v.is_nil()).map(sprint_value).collect::<Vec<_>>().join(" ").trim().to_string())
    });
    map.add("toString", &[Any], None, |_, a| ok(strval(&a[0])));
    map.add("toStrings", &[Any], None, |_, a| Ok(strings_list(strslice(&a[0]))));
    map.add("split", &[Str, Str], None, |_, a| Ok(split_map(s(&a[1]).split(s(&a[0])).map(str::to_string).collect())));
    map.add("splitn", &[Str, Int, Str], None, |_, a| Ok(split_map(go_splitn(s(&a[2]), s(&a[0]), int(&a[1])))));
    map.add("splitList", &[Str, Str], None, |_, a| Ok(strings_list(go_split(s(&a[1]), s(&a[0])))));
    map.add("join", &[Str, Any], None, |_, a| ok(strslice(&a[1]).join(s(&a[0]))));
    map.add("sortAlpha", &[Any], None, |_, a| {
        let mut items = match &a[0] {
            Value::List(_) => strslice(&a[0]),
            other => vec![strval(other)],
        };
        items.sort();
        Ok(strings_list(items))
    });
    map.add("b64enc", &[Str], None, |_, a| ok(base64::engine::general_purpose::STANDARD.encode(s(&a[0]))));
    map.add("b64dec", &[Str], None, |_, a| {
        ok(match base64::engine::general_purpose::STANDARD.decode(s(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => base64_error(&e),
        })
    });
    map.add("b32enc", &[Str], None, |_, a| ok(base32_encode(s(&a[0]).as_bytes())));
    map.add("b32dec", &[Str], None, |_, a| ok(base32_decode(s(&a[0]))));
    map.add("sha1sum", &[Str], None, |_, a| ok(hex(&sha1(s(&a[0]).as_bytes()))));
    map.add("sha256sum", &[Str], None, |_, a| ok(hex(&sha2::Sha256::digest(s(&a[0]).as_bytes()))));
    map.add("sha512sum", &[Str], None, |_, a| ok(hex(&sha2::Sha512::digest(s(&a[0]).as_bytes()))));
    map.add("adler32sum", &[Str], None, |_, a| ok(adler32(s(&a[0]).as_bytes()).to_string()));
    map.add("hello", &[], None, |_, _| ok("Hello!".into()));
}

fn title(text: &str) -> String {
    let is_separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if c.is_alphabetic() || c.is_numeric() {
            false
        } else {
            c.is_whitespace()
        }
    };
    let mut prev = ' ';
    text.chars()
        .map(|c| {
            let upper = is_separator(prev);
            prev = c;
            if upper {
                simple_upper(c)
            } else {
                c
            }
        })
        .collect()
}

/// Go's `unicode.ToUpper`: one rune to one rune (`ß` stays `ß`).
fn simple_upper(c: char) -> char {
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn simple_lower(c: char) -> char {
    let mut low = c.to_lowercase();
    match (low.next(), low.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// goutils `Uncapitalize` of every word: the letter after a space is lowered.
fn untitle(text: &str) -> String {
    let mut prev_space = true;
    text.chars()
        .map(|c| {
            let out = if prev_space { simple_lower(c) } else { c };
            prev_space = c.is_whitespace();
            out
        })
        .collect()
}

/// goutils works on bytes as if they were runes: non-ASCII text comes out as Latin-1.
fn bytes_as_runes(text: &str) -> impl Iterator<Item = char> + '_ {
    text.bytes().map(|b| b as char)
}

fn is_go_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0B' | '\x0C' | '\r' | ' ' | '\u{85}' | '\u{A0}') || (c as u32 > 0xFF && c.is_whitespace())
}

/// goutils `DeleteWhiteSpace` (byte-wise; the input is returned untouched when nothing goes).
fn delete_white_space(text: &str) -> String {
    if !bytes_as_runes(text).any(is_go_space) {
        return text.to_string();
    }
    bytes_as_runes(text).filter(|&c| !is_go_space(c)).collect()
}

/// goutils `Initials` (byte-wise).
fn initials(text: &str) -> String {
    let mut gap = true;
    let mut out = String::new();
    for c in bytes_as_runes(text) {
        if is_go_space(c) {
            gap = true;
        } else if gap {
            out.push(c);
            gap = false;
        }
    }
    out
}

/// goutils `WrapCustom` (byte offsets, as in Go).
fn wrap_custom(text: &str, width: i64, newline: &str, wrap_long: bool) -> String {
    if text.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = width.max(1) as usize;
    let b = text.as_bytes();
    let len = b.len();
    let mut offset = 0;
    let mut out: Vec<u8> = Vec::new();
    while len - offset > width {
        if b[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = (width + offset + 1).min(len);
        let space = b[offset..end].iter().rposition(|&c| c == b' ').map(|p| p + offset);
        match space {
            Some(at) => {
                out.extend_from_slice(&b[offset..at]);
                out.extend_from_slice(newline.as_bytes());
                offset = at + 1;
            }
            None if wrap_long => {
                out.extend_from_slice(&b[offset..width + offset]);
                out.extend_from_slice(newline.as_bytes());
                offset += width;
            }
            None => {
                let end = width + offset;
                match b[end..].iter().position(|&c| c == b' ') {
                    None => {
                        out.extend_from_slice(&b[offset..]);
                        offset = len;
                    }
                    Some(i) => {
                        out.extend_from_slice(&b[offset..end + i]);
                        out.extend_from_slice(newline.as_bytes());
                        offset = end + i + 1;
                    }
                }
            }
        }
    }
    out.extend_from_slice(&b[offset..]);
    String::from_utf8_lossy(&out).into_owned()
}

fn trim_cutset(text: &str, cutset: &str) -> String {
    text.trim_matches(|c| cutset.contains(c)).to_string()
}

/// `strings.Replace(s, old, new, -1)`: an empty `old` inserts `new` between runes.
fn go_replace(text: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::from(new);
        for c in text.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    text.replace(old, new)
}

fn indent(spaces: i64, text: &str) -> Result<String, FnError> {
    if spaces < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let lines = text.matches('\n').count() + 1;
    if (spaces as u128) * (lines as u128) + text.len() as u128 > MAX_RESULT_BYTES as u128 {
        return Err(FnError::new(format!("indent: result exceeds the {MAX_RESULT_BYTES}-byte limit")));
    }
    let pad = " ".repeat(spaces as usize);
    Ok(format!("{pad}{}", text.replace('\n', &format!("\n{pad}"))))
}

/// Byte-based, as in Go; a cut inside a UTF-8 sequence is repaired with U+FFFD.
fn trunc(c: i64, text: &str) -> String {
    let b = text.as_bytes();
    let len = b.len() as i64;
    if c < 0 && len + c > 0 {
        return String::from_utf8_lossy(&b[(len + c) as usize..]).into_owned();
    }
    if c >= 0 && len > c {
        return String::from_utf8_lossy(&b[..c as usize]).into_owned();
    }
    text.to_string()
}

fn substr(start: i64, end: i64, text: &str) -> Result<String, FnError> {
    let b = text.as_bytes();
    let len = b.len() as i64;
    let slice = |from: i64, to: i64| -> Result<String, FnError> {
        if from < 0 || to > len || from > to {
            return Err(FnError::new(format!("runtime error: slice bounds out of range [{from}:{to}]")));
        }
        Ok(String::from_utf8_lossy(&b[from as usize..to as usize]).into_owned())
    };
    if start < 0 {
        return slice(0, end);
    }
    if end < 0 || end > len {
        return slice(start, len);
    }
    slice(start, end)
}

/// goutils `Abbreviate` (byte offsets, as in Go).
fn abbrev(width: i64, text: &str) -> String {
    let b = text.as_bytes();
    if width < 4 || b.len() as i64 <= width {
        return text.to_string();
    }
    String::from_utf8_lossy(&b[..(width - 3) as usize]).into_owned() + "..."
}

fn abbrev_both(left: i64, width: i64, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len() as i64;
    if width < 4 || n <= width {
        return text.to_string();
    }
    let mut offset = left.min(n);
    if n - offset < width - 3 {
        offset = n - (width - 3);
    }
    if offset <= 4 {
        return abbrev(width, text);
    }
    if width < 7 {
        return text.to_string();
    }
    if offset + width - 3 < n {
        let rest: String = chars[offset as usize..].iter().collect();
        return format!("...{}", abbrev(width - 3, &rest));
    }
    format!("...{}", chars[(n - (width - 3)) as usize..].iter().collect::<String>())
}

/// goutils `WrapCustom` without long-word breaking.
#[cfg(test)]
fn wrap(text: &str, width: i64, newline: &str) -> String {
    wrap_custom(text, width, newline, false)
}

fn swapcase(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_uppercase() {
                simple_lower(c)
            } else if c.is_lowercase() {
                simple_upper(c)
            } else {
                c
            }
        })
        .collect()
}

/// xstrings `ToSnakeCase`/`ToKebabCase`: words split at case changes, acronyms kept together.
fn delimited_case(text: &str, sep: char) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c.is_whitespace() {
            out.push(sep);
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower)) && !out.ends_with(sep) {
                out.push(sep);
            }
        }
        out.push(simple_lower(c));
    }
    out
}

/// xstrings' Pascal-case conversion (Sprig's `camelcase`): words split at `-`, `_` and spaces
/// are capitalised; an all-caps run at a word start is lowered after its first letter.
fn camelcase(text: &str) -> String {
    let connector = |c: char| c == '-' || c == '_' || c.is_whitespace();
    let mut chars = text.chars();
    let mut out = String::new();
    let mut first_upper = false;
    let mut r0 = None;
    for c in chars.by_ref() {
        if !connector(c) {
            first_upper = c.is_uppercase();
            r0 = Some(simple_upper(c));
            break;
        }
        out.push(c);
    }
    let Some(mut r0) = r0 else { return out };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if connector(r0) && connector(r1) {
            out.push(r1);
            continue;
        }
        if connector(r1) {
            first_upper = r0.is_uppercase();
            r0 = simple_upper(r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = simple_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

fn split_map(parts: Vec<String>) -> Value {
    let map: Map = parts.into_iter().enumerate().map(|(i, p)| (format!("_{i}"), Value::string(p))).collect();
    Value::map_of(MapKind::String, map)
}

/// `strings.Split`: an empty separator splits into runes.
fn go_split(text: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return text.chars().map(|c| c.to_string()).collect();
    }
    text.split(sep).map(str::to_string).collect()
}

fn go_splitn(text: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if n < 0 {
        return go_split(text, sep);
    }
    if sep.is_empty() {
        let chars: Vec<char> = text.chars().collect();
        let mut out: Vec<String> = chars.iter().take(n as usize - 1).map(|c| c.to_string()).collect();
        if chars.len() >= n as usize {
            out.push(chars[n as usize - 1..].iter().collect());
        }
        return out;
    }
    text.splitn(n as usize, sep).map(str::to_string).collect()
}

fn base64_error(e: &base64::DecodeError) -> String {
    let offset = match e {
        base64::DecodeError::InvalidByte(i, _) | base64::DecodeError::InvalidLastSymbol(i, _) => *i,
        base64::DecodeError::InvalidLength(i) => *i,
        base64::DecodeError::InvalidPadding => 0,
    };
    format!("illegal base64 data at input byte {offset}")
}

const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = [2, 4, 5, 7, 8][chunk.len() - 1];
        for i in 0..8 {
            if i < chars {
                out.push(B32[((bits >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base32_decode(text: &str) -> String {
    let mut bits: u64 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for (i, c) in text.trim_end_matches('=').bytes().enumerate() {
        let Some(v) = B32.iter().position(|&b| b == c) else {
            return format!("illegal base32 data at input byte {i}");
        };
        bits = (bits << 5) | v as u64;
        count += 5;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// SHA-1 (for `sha1sum`): small enough to keep here rather than pull another crate.
pub(super) fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let (mut a, mut b, mut c, mut d, mut e) = (h[0], h[1], h[2], h[3], h[4]);
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let temp = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = temp;
        }
        h[0] = h[0].wrapping_add(a);
        h[1] = h[1].wrapping_add(b);
        h[2] = h[2].wrapping_add(c);
        h[3] = h[3].wrapping_add(d);
        h[4] = h[4].wrapping_add(e);
    }
    let mut out = [0u8; 20];
    for (i, v) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&v.to_be_bytes());
    }
    out
}

/// Lists of strings for other modules.
pub(super) fn string_list(items: Vec<String>) -> Value {
    Value::list_of(ListKind::String, items.into_iter().map(Value::string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprig_string_semantics() {
        assert_eq!(title("hello wORLD foo-bar"), "Hello WORLD Foo-Bar");
        assert_eq!(indent(2, "a\nb\n").unwrap(), "  a\n  b\n  ");
        assert_eq!((trunc(3, "hello"), trunc(-2, "hello"), trunc(10, "hi")), ("hel".into(), "lo".into(), "hi".into()));
        assert_eq!(substr(2, -1, "hello").unwrap(), "llo");
        assert_eq!(abbrev(5, "hello world"), "he...");
        assert_eq!(wrap("hello world foo", 5, "\n"), "hello\nworld\nfoo");
        assert_eq!(delimited_case("HelloWorldHTTP", '_'), "hello_world_http");
        assert_eq!(delimited_case("HelloWorld", '-'), "hello-world");
        assert_eq!(camelcase("hello_world"), "HelloWorld");
        assert_eq!(base32_encode(b"hi"), "NBUQ====");
        assert_eq!(hex(&sha1(b"a")), "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8");
        assert_eq!(adler32(b"a"), 6422626);
    }
}
