//! text/template's built-in functions (`len`, `index`, `print*`, `html`, `js`, `urlquery`,
//! `not`, comparisons), registered as ordinary typed functions. `and`, `or` and `call` are
//! evaluated by the executor itself; they are listed here so the parser knows them.

use super::fmt::{sprint, sprintf, sprintln};
use super::funcs::{Context, FnError, FnResult, FuncMap, Param};
use super::value::{ListKind, MapKind, Value};

pub fn add_builtins(map: &mut FuncMap) {
    use Param::*;
    fn unreachable_fn(_: &mut dyn Context, _: Vec<Value>) -> FnResult {
        Err(FnError::new("evaluated by the executor"))
    }
    map.add("and", &[Reflect], Some(Reflect), unreachable_fn);
    map.add("or", &[Reflect], Some(Reflect), unreachable_fn);
    map.add("call", &[Reflect], Some(Reflect), unreachable_fn);
    map.add("not", &[Reflect], None, |_, a| Ok(Value::Bool(!a[0].truth())));
    map.add("len", &[Reflect], None, |_, a| builtin_len(&a[0]));
    map.add("index", &[Reflect], Some(Reflect), |_, a| index(&a[0], &a[1..]));
    map.add("print", &[], Some(Any), |_, a| Ok(Value::string(sprint(&a))));
    map.add("println", &[], Some(Any), |_, a| Ok(Value::string(sprintln(&a))));
    map.add("printf", &[Str], Some(Any), |_, a| Ok(Value::string(sprintf(a[0].as_str().unwrap_or(""), &a[1..]))));
    map.add("html", &[], Some(Any), |_, a| Ok(Value::string(html_escape(&eval_args(&a)))));
    map.add("js", &[], Some(Any), |_, a| Ok(Value::string(js_escape(&eval_args(&a)))));
    map.add("urlquery", &[], Some(Any), |_, a| Ok(Value::string(query_escape(&eval_args(&a)))));
    map.add("eq", &[Reflect], Some(Reflect), |_, a| eq(&a[0], &a[1..]).map(Value::Bool).map_err(FnError::from));
    map.add("ne", &[Reflect, Reflect], None, |_, a| eq(&a[0], &a[1..2]).map(|t| Value::Bool(!t)).map_err(FnError::from));
    map.add("lt", &[Reflect, Reflect], None, |_, a| lt(&a[0], &a[1]).map(Value::Bool).map_err(FnError::from));
    map.add("le", &[Reflect, Reflect], None, |_, a| le(&a[0], &a[1]).map(Value::Bool).map_err(FnError::from));
    map.add("gt", &[Reflect, Reflect], None, |_, a| le(&a[0], &a[1]).map(|t| Value::Bool(!t)).map_err(FnError::from));
    map.add("ge", &[Reflect, Reflect], None, |_, a| lt(&a[0], &a[1]).map(|t| Value::Bool(!t)).map_err(FnError::from));
}

fn builtin_len(v: &Value) -> FnResult {
    match v {
        Value::Invalid | Value::Nil => Err("len of nil pointer".into()),
        other => match other.len() {
            Some(n) => Ok(Value::Int(n as i64)),
            None => Err(format!("len of type {}", other.type_name()).into()),
        },
    }
}

fn index(item: &Value, indexes: &[Value]) -> FnResult {
    if matches!(item, Value::Invalid) {
        return Err("index of untyped nil".into());
    }
    let mut item = item.clone();
    for idx in indexes {
        item = match &item {
            Value::Nil => return Err("index of untyped nil".into()),
            Value::List(list) => list.items[index_arg(idx, list.items.len())?].clone(),
            Value::String(s) => Value::Uint(s.as_bytes()[index_arg(idx, s.len())?] as u64),
            Value::Bytes(b) => Value::Uint(b[index_arg(idx, b.len())?] as u64),
            Value::Map(map) => {
                let key = match idx {
                    Value::String(k) => k.to_string(),
                    Value::Invalid | Value::Nil => return Err("value is nil; should be of type string".into()),
                    other => return Err(format!("value has type {}; should be string", other.type_name()).into()),
                };
                match map.entries.borrow().get(&key) {
                    Some(v) => v.clone(),
                    None if map.kind == MapKind::String => Value::str(""),
                    None => Value::Nil,
                }
            }
            Value::Object(o) => match o.items() {
                Some(items) => items[index_arg(idx, items.len())?].clone(),
                None => return Err(format!("can't index item of type {}", item.type_name()).into()),
            },
            other => return Err(format!("can't index item of type {}", other.type_name()).into()),
        };
    }
    Ok(item)
}

fn index_arg(idx: &Value, len: usize) -> Result<usize, FnError> {
    let x: i128 = match idx {
        Value::Int(n) | Value::Int64(n) => *n as i128,
        Value::Uint(n) => *n as i128,
        Value::Invalid | Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => return Err(format!("cannot index slice/array with type {}", other.type_name()).into()),
    };
    if x < 0 || x > len as i128 {
        return Err(format!("index out of range: {x}").into());
    }
    if x == len as i128 {
        return Err("reflect: slice index out of range".into());
    }
    Ok(x as usize)
}

/// text/template's `evalArgs`: one string is used as is; otherwise Sprint, with no value shown
/// as `<no value>`.
fn eval_args(args: &[Value]) -> String {
    if let [Value::String(s)] = args {
        return s.to_string();
    }
    let printable: Vec<Value> = args.iter().map(|a| if a.is_nil() { Value::str("<no value>") } else { a.clone() }).collect();
    sprint(&printable)
}

pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if (c as u32) < 0x80 => out.push(c),
            c if super::fmt::is_go_printable(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basic {
    Bool,
    Int,
    Uint,
    Float,
    String,
    None,
}

fn basic(v: &Value) -> Basic {
    match v {
        Value::Bool(_) => Basic::Bool,
        Value::Int(_) | Value::Int64(_) => Basic::Int,
        Value::Uint(_) => Basic::Uint,
        Value::Float(_) => Basic::Float,
        Value::String(_) => Basic::String,
        _ => Basic::None,
    }
}

fn int_of(v: &Value) -> i64 {
    match v {
        Value::Int(n) | Value::Int64(n) => *n,
        _ => 0,
    }
}

fn uint_of(v: &Value) -> u64 {
    match v {
        Value::Uint(n) => *n,
        _ => 0,
    }
}

/// Why text/template's `eq`/`ne`/`lt`/`le`/`gt`/`ge` refused their arguments (Go's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// `eq` with nothing to compare against.
    #[error("missing argument for comparison")]
    MissingArgument,
    /// The operands' basic kinds differ (`int` against `string`, …); carries their `%T`.
    #[error("incompatible types for comparison: {left} and {right}")]
    Incompatible { left: String, right: String },
    /// A map, slice or byte slice given to `eq`: `shown` is its `%s`, `type_name` its `%T`.
    #[error("non-comparable type {shown}: {type_name}")]
    NonComparable { shown: String, type_name: String },
    /// An ordering asked of a kind without one (bool, map, nil, …).
    #[error("invalid type for comparison")]
    InvalidType,
}

impl From<CompareError> for FnError {
    fn from(e: CompareError) -> FnError {
        FnError::new(e.to_string())
    }
}

fn incompatible(a: &Value, b: &Value) -> CompareError {
    CompareError::Incompatible { left: a.type_name(), right: b.type_name() }
}

fn non_comparable(v: &Value) -> CompareError {
    CompareError::NonComparable { shown: super::fmt::sprintf("%s", std::slice::from_ref(v)), type_name: v.type_name() }
}

fn comparable(v: &Value) -> bool {
    !matches!(v, Value::Map(_) | Value::List(_) | Value::Bytes(_))
}

pub fn eq(a: &Value, others: &[Value]) -> Result<bool, CompareError> {
    if others.is_empty() {
        return Err(CompareError::MissingArgument);
    }
    let ka = basic(a);
    for b in others {
        let kb = basic(b);
        let truth = if ka != kb {
            match (ka, kb) {
                (Basic::Int, Basic::Uint) => int_of(a) >= 0 && int_of(a) as u64 == uint_of(b),
                (Basic::Uint, Basic::Int) => int_of(b) >= 0 && uint_of(a) == int_of(b) as u64,
                _ => {
                    if !a.is_nil() && !b.is_nil() {
                        return Err(incompatible(a, b));
                    }
                    false
                }
            }
        } else {
            match ka {
                Basic::Bool => a.truth() == b.truth(),
                Basic::Float => matches!((a, b), (Value::Float(x), Value::Float(y)) if x == y),
                Basic::Int => int_of(a) == int_of(b),
                Basic::Uint => uint_of(a) == uint_of(b),
                Basic::String => a.as_str() == b.as_str(),
                Basic::None => {
                    if a.is_nil() || b.is_nil() {
                        a.is_nil() == b.is_nil()
                    } else if !comparable(b) {
                        return Err(non_comparable(b));
                    } else if !comparable(a) {
                        return Err(non_comparable(a));
                    } else if a.type_name() != b.type_name() {
                        return Err(incompatible(a, b));
                    } else {
                        a.deep_equal(b)
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

pub fn lt(a: &Value, b: &Value) -> Result<bool, CompareError> {
    let (ka, kb) = (basic(a), basic(b));
    if ka == Basic::None || kb == Basic::None {
        return Err(CompareError::InvalidType);
    }
    if ka != kb {
        return match (ka, kb) {
            (Basic::Int, Basic::Uint) => Ok(int_of(a) < 0 || (int_of(a) as u64) < uint_of(b)),
            (Basic::Uint, Basic::Int) => Ok(int_of(b) >= 0 && uint_of(a) < int_of(b) as u64),
            _ => Err(incompatible(a, b)),
        };
    }
    Ok(match (a, b) {
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::String(x), Value::String(y)) => x.as_bytes() < y.as_bytes(),
        (Value::Uint(x), Value::Uint(y)) => x < y,
        (Value::Bool(_), _) => return Err(CompareError::InvalidType),
        _ => int_of(a) < int_of(b),
    })
}

pub fn le(a: &Value, b: &Value) -> Result<bool, CompareError> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq(a, std::slice::from_ref(b))
}

/// Element kinds a list can hold, for functions that build `[]string`.
pub fn strings_list(items: Vec<String>) -> Value {
    Value::list_of(ListKind::String, items.into_iter().map(Value::string).collect())
}
