//! `encoding/json` as Helm's templates see it: `Marshal` (sorted keys, HTML-safe escaping, Go's
//! float formatting, `[]byte` as base64), `MarshalIndent`, the non-HTML-escaping encoder, and
//! `Unmarshal` into interface values (every number a float64).

use base64::Engine;

use gotmpl::fmt::format_float_shortest;
use gotmpl::{Map, Value};

/// encoding/json's error text for a value it cannot write or a text it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub String);

pub struct JsonStyle {
    pub escape_html: bool,
    /// `MarshalIndent(v, "", indent)` when set.
    pub indent: Option<&'static str>,
}

pub const COMPACT: JsonStyle = JsonStyle { escape_html: true, indent: None };

pub fn to_json(v: &Value, style: &JsonStyle) -> Result<String, JsonError> {
    let mut out = String::new();
    write(&mut out, v, style, 0)?;
    Ok(out)
}

/// Go's float encoding ([`gotmpl::fmt::format_float_json`]); NaN and infinities are errors.
pub fn format_json_float(f: f64) -> Result<String, JsonError> {
    gotmpl::fmt::format_float_json(f).ok_or_else(|| JsonError(format!("json: unsupported value: {}", format_float_shortest(f))))
}

fn write(out: &mut String, v: &Value, style: &JsonStyle, depth: usize) -> Result<(), JsonError> {
    if out.len() > 64 * 1024 * 1024 {
        return Err(JsonError("json: output exceeds 64 MiB (a cyclic value?)".into()));
    }
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_inner(out, v, style, depth))
}

fn write_inner(out: &mut String, v: &Value, style: &JsonStyle, depth: usize) -> Result<(), JsonError> {
    if depth > 1_000 {
        return Err(JsonError("json: exceeded max depth".into()));
    }
    match v {
        Value::Invalid | Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&format_json_float(*f)?),
        Value::String(s) => write_string(out, s, style.escape_html),
        Value::Bytes(b) => write_string(out, &base64::engine::general_purpose::STANDARD.encode(b), style.escape_html),
        Value::List(list) => {
            if list.items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in list.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, depth + 1);
                write(out, item, style, depth + 1)?;
            }
            newline(out, style, depth);
            out.push(']');
        }
        Value::Map(map) => {
            let entries = map.entries.borrow();
            write_object(out, entries.iter().map(|(k, v)| (k.as_str(), v)), entries.is_empty(), style, depth)?;
        }
        Value::Object(o) => match o.json_fields() {
            Some(fields) => write_object(out, fields.iter().map(|(k, v)| (k.as_str(), v)), fields.is_empty(), style, depth)?,
            None => write(out, &o.to_json(), style, depth)?,
        },
    }
    Ok(())
}

/// `{"k":v,…}` in the given key order.
fn write_object<'v>(
    out: &mut String,
    fields: impl Iterator<Item = (&'v str, &'v Value)>,
    empty: bool,
    style: &JsonStyle,
    depth: usize,
) -> Result<(), JsonError> {
    if empty {
        out.push_str("{}");
        return Ok(());
    }
    out.push('{');
    for (i, (k, item)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, style, depth + 1);
        write_string(out, k, style.escape_html);
        out.push(':');
        if style.indent.is_some() {
            out.push(' ');
        }
        write(out, item, style, depth + 1)?;
    }
    newline(out, style, depth);
    out.push('}');
    Ok(())
}

fn newline(out: &mut String, style: &JsonStyle, depth: usize) {
    if let Some(indent) = style.indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(indent);
        }
    }
}

pub fn write_string(out: &mut String, s: &str, escape_html: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
            c if (c as u32) < 0x20 => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.Unmarshal` into `interface{}`: objects, arrays, float64 numbers, strings, bools, nil.
pub fn from_json(text: &str) -> Result<Value, JsonError> {
    let mut p = JsonParser { b: text.as_bytes(), i: 0, depth: 0 };
    p.ws();
    if p.i >= p.b.len() {
        return Err(JsonError("unexpected end of JSON input".into()));
    }
    let v = p.value()?;
    p.ws();
    if p.i < p.b.len() {
        return Err(JsonError(format!("invalid character {} after top-level value", quote_char(p.b[p.i]))));
    }
    Ok(v)
}

fn quote_char(b: u8) -> String {
    match b {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        b if b.is_ascii_graphic() || b == b' ' => format!("'{}'", b as char),
        b => format!("'\\x{b:02x}'"),
    }
}

struct JsonParser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eof(&self) -> JsonError {
        JsonError("unexpected end of JSON input".into())
    }

    fn bad(&self, context: &str) -> JsonError {
        match self.b.get(self.i) {
            None => self.eof(),
            Some(&c) => JsonError(format!("invalid character {} {context}", quote_char(c))),
        }
    }

    fn value(&mut self) -> Result<Value, JsonError> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.value_inner())
    }

    fn value_inner(&mut self) -> Result<Value, JsonError> {
        self.ws();
        self.depth += 1;
        if self.depth > 1_000 {
            return Err(JsonError("exceeded max depth".into()));
        }
        let result = match self.b.get(self.i) {
            None => Err(self.eof()),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Value::string),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Nil),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.bad("looking for beginning of value")),
        };
        self.depth -= 1;
        result
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            // Point at the first differing byte, as Go does.
            let mut j = 0;
            while self.i + j < self.b.len() && j < word.len() && self.b[self.i + j] == word.as_bytes()[j] {
                j += 1;
            }
            self.i += j;
            Err(self.bad(&format!("in literal {word} (expecting {})", quote_char(word.as_bytes()[j.min(word.len() - 1)]))))
        }
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        while self.i < self.b.len() && (self.b[self.i].is_ascii_digit() || matches!(self.b[self.i], b'.' | b'e' | b'E' | b'+' | b'-')) {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
        text.parse::<f64>().map(Value::Float).map_err(|_| JsonError(format!("invalid number literal {text}")))
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.i) else { return Err(self.eof()) };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.b.get(self.i) else { return Err(self.eof()) };
                    self.i += 1;
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let code = self.hex4()?;
                            let ch = if (0xD800..0xDC00).contains(&code) && self.b[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let low = self.hex4()?;
                                char::from_u32(0x10000 + ((code - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF)).unwrap_or('\u{FFFD}')
                            } else {
                                char::from_u32(code).unwrap_or('\u{FFFD}')
                            };
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.bad("in string escape code"));
                        }
                    }
                }
                c if c < 0x20 => {
                    self.i -= 1;
                    return Err(self.bad("in string literal"));
                }
                c => out.push(c),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self.b.get(self.i..self.i + 4).ok_or_else(|| self.eof())?;
        let text = std::str::from_utf8(digits).map_err(|_| self.bad("in \\u hexadecimal character escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.bad("in \\u hexadecimal character escape"))?;
        self.i += 4;
        Ok(v)
    }

    fn object(&mut self) -> Result<Value, JsonError> {
        self.i += 1;
        let mut map = Map::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::map(map));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.bad("looking for beginning of object key string"));
            }
            let key = self.string()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return Err(self.bad("after object key"));
            }
            self.i += 1;
            let v = self.value()?;
            map.insert(key, v);
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::map(map));
                }
                _ => return Err(self.bad("after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, JsonError> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::list(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::list(items));
                }
                _ => return Err(self.bad("after array element")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_go() {
        let cases = [
            (0.00001, "0.00001"),
            (1e-7, "1e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (123456789.0, "123456789"),
            (0.1, "0.1"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0"),
        ];
        for (f, want) in cases {
            assert_eq!(format_json_float(f).unwrap(), want, "{f}");
        }
    }

    #[test]
    fn escapes_html_and_sorts_keys() {
        let mut m = Map::new();
        m.insert("b".into(), Value::str("<&>"));
        m.insert("a".into(), Value::list(vec![Value::Float(1.0), Value::Nil]));
        let v = Value::map(m);
        assert_eq!(to_json(&v, &COMPACT).unwrap(), r#"{"a":[1,null],"b":"\u003c\u0026\u003e"}"#);
        let pretty = JsonStyle { escape_html: true, indent: Some("  ") };
        assert_eq!(to_json(&v, &pretty).unwrap(), "{\n  \"a\": [\n    1,\n    null\n  ],\n  \"b\": \"\\u003c\\u0026\\u003e\"\n}");
    }

    #[test]
    fn parses_json_numbers_as_floats() {
        let v = from_json(r#"{"a": 1, "d": 10000000, "s": "x\u00e9"}"#).unwrap();
        assert_eq!(gotmpl::fmt::sprint_value(&v), "map[a:1 d:1e+07 s:xé]");
        assert_eq!(from_json("{").unwrap_err().0, "unexpected end of JSON input");
    }
}
