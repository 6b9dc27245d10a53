//! Helm's `--set` syntax (pkg/strvals): `a.b=v`, `a[0].b=v`, `a={x,y}`, `\` escapes, commas between
//! assignments, and its typing: `true`/`false`/`null`, `0` and integers not starting with `0` as
//! int64, everything else a string. `--set-string` keeps strings, `--set-json` parses JSON values,
//! `--set-literal` takes the rest verbatim.

use gotmpl::{Map, Value};

const MAX_NESTED: usize = 30;
const MAX_INDEX: usize = 65536;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Typed,
    Strings,
    Json,
}

/// Why a `--set`-style assignment does not parse; the texts are Helm's strvals errors, with the
/// key, index or token they name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    #[error("key {key:?} has no value")]
    NoValue { key: String },
    #[error("key {key:?} has no value (cannot end with ,)")]
    TrailingComma { key: String },
    #[error("value name nested level is greater than maximum supported nested level of {}", MAX_NESTED)]
    TooDeep,
    /// `a.b.` and the like: a table that receives no key.
    #[error("key map {key:?} has no value")]
    EmptyTable { key: String },
    /// `a[x]=…`: the index as written is not an integer.
    #[error("error parsing index: strconv.Atoi: parsing {index:?}: invalid syntax")]
    IndexSyntax { index: String },
    #[error("error parsing index: negative {0} index not allowed")]
    NegativeIndex(i64),
    #[error("error parsing index: index of {0} is greater than maximum supported index of {max}", max = MAX_INDEX)]
    IndexTooLarge(i64),
    /// After `name[i]`, neither `=`, `.` nor `[` (None: the text ended).
    #[error("parse error: unexpected token {0:?}")]
    UnexpectedToken(Option<char>),
    /// `a={x,y` without the closing brace.
    #[error("list must terminate with '}}'")]
    UnterminatedList,
    /// `--set-json`: the value is not JSON.
    #[error("{0}")]
    Json(#[source] crate::json::JsonError),
}

/// Parses `text` and sets its assignments into `data` (`strvals.ParseInto`).
pub fn parse_into(text: &str, data: &mut Map, mode: Mode) -> Result<(), SetError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { chars, pos: 0, mode };
    while p.pos < p.chars.len() {
        p.key(data, 0)?;
    }
    Ok(())
}

/// `--set-literal key=rest-of-string`: the value is everything after the first `=`.
pub fn parse_literal(text: &str, data: &mut Map) -> Result<(), SetError> {
    let (key, value) = text.split_once('=').ok_or_else(|| SetError::NoValue { key: text.to_string() })?;
    let parts: Vec<&str> = key.split('.').collect();
    set_path(data, &parts, Value::str(value));
    Ok(())
}

/// Sets a dotted path, creating (or replacing non-map) intermediate tables.
pub fn set_path(data: &mut Map, parts: &[&str], value: Value) {
    if parts.len() == 1 {
        data.insert(parts[0].to_string(), value);
        return;
    }
    let mut inner = match data.get(parts[0]) {
        Some(Value::Map(m)) => m.entries.borrow().clone(),
        _ => Map::new(),
    };
    set_path(&mut inner, &parts[1..], value);
    data.insert(parts[0].to_string(), Value::map(inner));
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    mode: Mode,
}

fn typed(v: &str, mode: Mode) -> Value {
    if mode == Mode::Strings {
        return Value::str(v);
    }
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if v == "0" {
        return Value::Int64(0);
    }
    if !v.is_empty() && !v.starts_with('0') {
        if let Ok(i) = v.parse::<i64>() {
            return Value::Int64(i);
        }
    }
    Value::str(v)
}

impl Parser {
    /// Runes up to one of `stop` (consumed and returned), honouring `\` escapes.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut out = String::new();
        while self.pos < self.chars.len() {
            let c = self.chars[self.pos];
            self.pos += 1;
            if stop.contains(&c) {
                return (out, Some(c));
            }
            if c == '\\' {
                if self.pos < self.chars.len() {
                    out.push(self.chars[self.pos]);
                    self.pos += 1;
                }
                continue;
            }
            out.push(c);
        }
        (out, None)
    }

    fn key(&mut self, data: &mut Map, level: usize) -> Result<(), SetError> {
        let (k, last) = self.until(&['=', '[', ',', '.']);
        match last {
            None => {
                if k.is_empty() {
                    return Ok(());
                }
                Err(SetError::NoValue { key: k })
            }
            Some('[') => {
                let index = self.index()?;
                let mut list = match data.get(&k) {
                    Some(Value::List(l)) => l.items.clone(),
                    _ => Vec::new(),
                };
                self.list_item(&mut list, index, level)?;
                data.insert(k, Value::list(list));
                Ok(())
            }
            Some('=') => {
                let value = self.value()?;
                data.insert(k, value);
                Ok(())
            }
            Some(',') => {
                data.insert(k.clone(), Value::str(""));
                Err(SetError::TrailingComma { key: k })
            }
            Some(_) => {
                let level = level + 1;
                if level > MAX_NESTED {
                    return Err(SetError::TooDeep);
                }
                let mut inner = match data.get(&k) {
                    Some(Value::Map(m)) => m.entries.borrow().clone(),
                    _ => Map::new(),
                };
                let result = self.key(&mut inner, level);
                if result.is_ok() && inner.is_empty() {
                    return Err(SetError::EmptyTable { key: k });
                }
                if !inner.is_empty() {
                    data.insert(k, Value::map(inner));
                }
                result
            }
        }
    }

    fn index(&mut self) -> Result<usize, SetError> {
        let (v, _) = self.until(&[']']);
        let i: i64 = v.trim().parse().map_err(|_| SetError::IndexSyntax { index: v.clone() })?;
        if i < 0 {
            return Err(SetError::NegativeIndex(i));
        }
        if i as usize > MAX_INDEX {
            return Err(SetError::IndexTooLarge(i));
        }
        Ok(i as usize)
    }

    fn list_item(&mut self, list: &mut Vec<Value>, index: usize, level: usize) -> Result<(), SetError> {
        if list.len() <= index {
            list.resize(index + 1, Value::Nil);
        }
        let next = self.chars.get(self.pos).copied();
        self.pos += 1;
        match next {
            Some('=') => {
                list[index] = self.value()?;
                Ok(())
            }
            Some('.') => {
                let mut inner = match &list[index] {
                    Value::Map(m) => m.entries.borrow().clone(),
                    _ => Map::new(),
                };
                let r = self.key(&mut inner, level + 1);
                list[index] = Value::map(inner);
                r
            }
            Some('[') => {
                let i = self.index()?;
                let mut inner = match &list[index] {
                    Value::List(l) => l.items.clone(),
                    _ => Vec::new(),
                };
                let r = self.list_item(&mut inner, i, level);
                list[index] = Value::list(inner);
                r
            }
            other => Err(SetError::UnexpectedToken(other)),
        }
    }

    fn value(&mut self) -> Result<Value, SetError> {
        if self.mode == Mode::Json {
            let rest: String = self.chars[self.pos..].iter().collect();
            let (json_text, consumed) = split_json_value(&rest);
            self.pos += consumed;
            if json_text.trim().is_empty() {
                return Ok(Value::Nil);
            }
            return crate::json::from_json(json_text.trim()).map_err(SetError::Json);
        }
        if self.chars.get(self.pos) == Some(&'{') {
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                let (v, last) = self.until(&[',', '}']);
                match last {
                    None => return Err(SetError::UnterminatedList),
                    Some('}') => {
                        if self.chars.get(self.pos) == Some(&',') {
                            self.pos += 1;
                        }
                        items.push(typed(&v, self.mode));
                        return Ok(Value::list(items));
                    }
                    Some(_) => items.push(typed(&v, self.mode)),
                }
            }
        }
        let (v, _) = self.until(&[',']);
        Ok(typed(&v, self.mode))
    }
}

/// The first JSON value of `text` and how many chars to consume (value plus a following comma).
fn split_json_value(text: &str) -> (&str, usize) {
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => return (&text[..i], text[..i].chars().count() + 1),
            _ => {}
        }
    }
    (text, text.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, mode: Mode) -> String {
        let mut m = Map::new();
        parse_into(text, &mut m, mode).unwrap();
        crate::json::to_json(&Value::map(m), &crate::json::COMPACT).unwrap()
    }

    #[test]
    fn typing_like_helm() {
        assert_eq!(
            parse(
                "a=1,b=1.5,c=true,d=null,e=abc,f=0777,g=1e6,h=9223372036854775808,j={a,b},l.m=1,n=,o=0x10,p=+1,q=-0,r=00,t=False",
                Mode::Typed
            ),
            r#"{"a":1,"b":"1.5","c":true,"d":null,"e":"abc","f":"0777","g":"1e6","h":"9223372036854775808","j":["a","b"],"l":{"m":1},"n":"","o":"0x10","p":1,"q":0,"r":"00","t":false}"#
        );
        assert_eq!(parse("a=1,b=true", Mode::Strings), r#"{"a":"1","b":"true"}"#);
        assert_eq!(parse(r#"a={"x":[1,2]},b="s""#, Mode::Json), r#"{"a":{"x":[1,2]},"b":"s"}"#);
        assert_eq!(parse("k[1]=x,e\\,sc=1", Mode::Typed), r#"{"e,sc":1,"k":[null,"x"]}"#);
        let mut m = Map::new();
        let refused = parse_into("x", &mut m, Mode::Typed).unwrap_err();
        assert_eq!(refused, SetError::NoValue { key: "x".into() });
        assert_eq!(refused.to_string(), "key \"x\" has no value");
    }

    /// Helm's texts, which `--set` errors print: each variant keeps its words.
    #[test]
    fn errors_say_what_helm_says() {
        let err = |text: &str, mode: Mode| parse_into(text, &mut Map::new(), mode).unwrap_err().to_string();
        assert_eq!(err("a,b=1", Mode::Typed), "key \"a\" has no value (cannot end with ,)");
        assert_eq!(err("a[x]=1", Mode::Typed), "error parsing index: strconv.Atoi: parsing \"x\": invalid syntax");
        assert_eq!(err("a[-1]=1", Mode::Typed), "error parsing index: negative -1 index not allowed");
        assert_eq!(err("a[70000]=1", Mode::Typed), "error parsing index: index of 70000 is greater than maximum supported index of 65536");
        assert_eq!(err("a={x,y", Mode::Typed), "list must terminate with '}'");
        assert_eq!(err("a[0]x", Mode::Typed), "parse error: unexpected token Some('x')");
        assert_eq!(
            err(&format!("{}=1", vec!["a"; 32].join(".")), Mode::Typed),
            "value name nested level is greater than maximum supported nested level of 30"
        );
    }
}
