//! The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library) on top of the `cel` crate:
//! lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`),
//! `matches` (with the crate's own copy compiled out: it compiled its pattern on every call, four
//! fifths of validating 50,000 TrainJobs; here each pattern is compiled once per thread), the
//! strings extension (`charAt`, `indexOf`, `lowerAscii`, … as cel-go `ext.Strings` v2), URLs,
//! quantities, IP/CIDR, semver and sets. Functions are registered on one root context per
//! validator; anything not registered here makes a rule *unevaluated* (see [`super::compat`]).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

type R = Result<Value, ExecutionError>;

fn ferr(f: &str, m: impl ToString) -> ExecutionError {
    ExecutionError::function_error(f, m)
}

fn str_of(v: &Value, f: &str) -> Result<Arc<String>, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", v.type_of())])),
    }
}

fn list_of(v: &Value, f: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(l) => Ok(l.clone()),
        _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", v.type_of())])),
    }
}

fn cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.partial_cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => x.partial_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.partial_cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.partial_cmp(y),
        (Value::Duration(x), Value::Duration(y)) => x.partial_cmp(y),
        (Value::Opaque(x), Value::Opaque(y)) => opaque_cmp(x.as_ref(), y.as_ref()),
        _ => None,
    }
}

/// Registers everything on a root context. Names the `cel` crate already declares (it refuses to
/// shadow them) keep the crate's implementation.
pub fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("isSorted", |This(l): This<Value>| -> R {
        let l = list_of(&l, "isSorted")?;
        for w in l.windows(2) {
            match cmp(&w[0], &w[1]) {
                Some(Ordering::Greater) => return Ok(Value::Bool(false)),
                None => return Err(ferr("isSorted", "list elements are not comparable")),
                _ => {}
            }
        }
        Ok(Value::Bool(true))
    });
    let _ = ctx.add_function("sum", |This(l): This<Value>| -> R {
        let l = list_of(&l, "sum")?;
        let mut acc = match l.first() {
            Some(Value::Float(_)) => Value::Float(0.0),
            Some(Value::UInt(_)) => Value::UInt(0),
            Some(Value::Duration(_)) => Value::Duration(chrono::Duration::zero()),
            _ => Value::Int(0),
        };
        for v in l.iter() {
            acc = match (acc, v) {
                (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(*b).ok_or_else(|| ferr("sum", "integer overflow"))?),
                (Value::UInt(a), Value::UInt(b)) => Value::UInt(a.checked_add(*b).ok_or_else(|| ferr("sum", "integer overflow"))?),
                (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
                (Value::Duration(a), Value::Duration(b)) => Value::Duration(a + *b),
                _ => return Err(ferr("sum", "unsupported element type")),
            };
        }
        Ok(acc)
    });
    for (name, want) in [("min", Ordering::Less), ("max", Ordering::Greater)] {
        let _ = ctx.add_function(name, move |This(l): This<Value>| -> R {
            let l = list_of(&l, name)?;
            let mut best = l.first().cloned().ok_or_else(|| ferr(name, format!("{name} called on empty list")))?;
            for v in l.iter().skip(1) {
                match cmp(v, &best) {
                    Some(o) if o == want => best = v.clone(),
                    None => return Err(ferr(name, "list elements are not comparable")),
                    _ => {}
                }
            }
            Ok(best)
        });
    }
    let _ = ctx.add_function("indexOf", |This(t): This<Value>, x: Value| -> R { index_of(&t, &x, false) });
    let _ = ctx.add_function("lastIndexOf", |This(t): This<Value>, x: Value| -> R { index_of(&t, &x, true) });
    let _ = ctx.add_function("matches", |This(s): This<Arc<String>>, re: Arc<String>| -> R {
        with_regex("matches", &re, |r| Value::Bool(r.is_match(&s)))
    });
    let _ = ctx.add_function("find", |This(s): This<Arc<String>>, re: Arc<String>| -> R {
        with_regex("find", &re, |r| Value::String(Arc::new(r.find(&s).map(|m| m.as_str().to_string()).unwrap_or_default())))
    });
    let _ = ctx.add_function("findAll", |This(s): This<Arc<String>>, re: Arc<String>| -> R {
        with_regex("findAll", &re, |r| {
            Value::List(Arc::new(r.find_iter(&s).map(|m| Value::String(Arc::new(m.as_str().to_string()))).collect()))
        })
    });
    strings(ctx);
    super::lib_types::register(ctx);
}

/// Patterns compiled so far on this thread. A CRD's rules hold a handful of literal patterns, so
/// the cache stays small; one built from object data could grow it, so it is emptied at a bound.
const REGEX_CACHE_MAX: usize = 256;

thread_local! {
    static REGEXES: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

/// Runs `f` with `pattern` compiled (RE2 syntax, which Rust's `regex` shares), or the error the
/// cel crate's `matches` gave for a bad pattern.
fn with_regex(function: &str, pattern: &str, f: impl FnOnce(&regex::Regex) -> Value) -> R {
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(r) = cache.get(pattern) {
            return Ok(f(r));
        }
        let r = regex::Regex::new(pattern).map_err(|e| ferr(function, format!("'{pattern}' not a valid regex:\n{e}")))?;
        if cache.len() >= REGEX_CACHE_MAX {
            cache.clear();
        }
        let v = f(&r);
        cache.insert(pattern.to_string(), r);
        Ok(v)
    })
}

fn index_of(t: &Value, x: &Value, last: bool) -> R {
    match t {
        Value::String(s) => {
            let sub = str_of(x, "indexOf")?;
            let chars: Vec<char> = s.chars().collect();
            let subc: Vec<char> = sub.chars().collect();
            if subc.is_empty() {
                return Ok(Value::Int(if last { chars.len() as i64 } else { 0 }));
            }
            let positions = (0..=chars.len().saturating_sub(subc.len())).filter(|i| chars[*i..].starts_with(&subc));
            let mut positions = positions;
            let found = if last { positions.next_back() } else { positions.next() };
            Ok(Value::Int(found.map_or(-1, |i| i as i64)))
        }
        Value::List(l) => {
            let mut it = l.iter().enumerate();
            let found = if last { it.rev().find(|(_, v)| *v == x) } else { it.find(|(_, v)| *v == x) };
            Ok(Value::Int(found.map_or(-1, |(i, _)| i as i64)))
        }
        other => Err(ExecutionError::no_such_overload("indexOf", vec![format!("{:?}", other.type_of())])),
    }
}

fn strings(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("charAt", |This(s): This<Arc<String>>, i: i64| -> R {
        let chars: Vec<char> = s.chars().collect();
        if i < 0 || i as usize > chars.len() {
            return Err(ferr("charAt", format!("index out of range: {i}")));
        }
        Ok(Value::String(Arc::new(chars.get(i as usize).map(|c| c.to_string()).unwrap_or_default())))
    });
    let _ = ctx.add_function("lowerAscii", |This(s): This<Arc<String>>| -> R { Ok(Value::String(Arc::new(s.to_ascii_lowercase()))) });
    let _ = ctx.add_function("upperAscii", |This(s): This<Arc<String>>| -> R { Ok(Value::String(Arc::new(s.to_ascii_uppercase()))) });
    let _ = ctx.add_function("trim", |This(s): This<Arc<String>>| -> R { Ok(Value::String(Arc::new(s.trim().to_string()))) });
    let _ = ctx.add_function("replace", |This(s): This<Arc<String>>, from: Arc<String>, to: Arc<String>| -> R {
        Ok(Value::String(Arc::new(s.replace(from.as_str(), &to))))
    });
    let _ = ctx.add_function("split", |This(s): This<Arc<String>>, sep: Arc<String>| -> R {
        let parts: Vec<Value> = if sep.is_empty() {
            s.chars().map(|c| Value::String(Arc::new(c.to_string()))).collect()
        } else {
            s.split(sep.as_str()).map(|p| Value::String(Arc::new(p.to_string()))).collect()
        };
        Ok(Value::List(Arc::new(parts)))
    });
    let _ = ctx.add_function("substring", |This(s): This<Arc<String>>, a: i64, b: i64| -> R {
        let chars: Vec<char> = s.chars().collect();
        if a < 0 || b < a || b as usize > chars.len() {
            return Err(ferr("substring", format!("index out of range: {a}, {b}")));
        }
        Ok(Value::String(Arc::new(chars[a as usize..b as usize].iter().collect())))
    });
    let _ = ctx.add_function("join", |This(l): This<Value>, sep: Value| -> R {
        let l = list_of(&l, "join")?;
        let sep = match sep {
            Value::String(s) => s.to_string(),
            _ => String::new(),
        };
        let parts: Result<Vec<String>, ExecutionError> = l.iter().map(|v| str_of(v, "join").map(|s| s.to_string())).collect();
        Ok(Value::String(Arc::new(parts?.join(&sep))))
    });
}

/// Ordering of the Kubernetes opaque types (quantity, semver) for `isSorted`/`min`/`max`.
fn opaque_cmp(a: &dyn Opaque, b: &dyn Opaque) -> Option<Ordering> {
    super::lib_types::opaque_cmp(a, b)
}
