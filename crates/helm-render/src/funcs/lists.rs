//! Sprig's list functions (`list`, `append`, `first`, `uniq`, `has`, `slice`, `chunk`, …) and
//! their `must*` variants: the plain ones turn errors into panics, which Go reports as
//! `error calling NAME: …`, so both return the error here.

use super::convert::to_int64;
use super::MAX_RESULT_ITEMS;
use gotmpl::{FnError, FuncMap, ListKind, Param, Value};

type R = Result<Value, FnError>;

const NIL_DEREF: &str = "runtime error: invalid memory address or nil pointer dereference";

/// The items of a slice argument, or Sprig's error naming the kind it got instead.
fn items<'a>(v: &'a Value, what: &str) -> Result<std::borrow::Cow<'a, [Value]>, FnError> {
    match v {
        Value::List(l) => Ok(std::borrow::Cow::Borrowed(&l.items)),
        Value::Bytes(b) => Ok(std::borrow::Cow::Owned(b.iter().map(|x| Value::Uint(*x as u64)).collect())),
        Value::Invalid | Value::Nil => Err(NIL_DEREF.into()),
        other => Err(FnError::new(format!("Cannot {what} on type {}", other.kind_name()))),
    }
}

fn list(items: Vec<Value>) -> R {
    if items.len() > MAX_RESULT_ITEMS {
        return Err(FnError::new(format!("list of {} items exceeds the {MAX_RESULT_ITEMS}-item limit", items.len())));
    }
    Ok(Value::list(items))
}

fn same_kind(original: &Value, items: Vec<Value>) -> Value {
    match original {
        Value::List(l) => Value::list_of(l.kind, items),
        _ => Value::list(items),
    }
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::*;
    for name in ["list", "tuple"] {
        map.add(name, &[], Some(Any), |_, a| list(a));
    }
    for name in ["append", "push", "mustAppend", "mustPush"] {
        map.add(name, &[Any, Any], None, |_, a| {
            let mut v = items(&a[0], "push")?.into_owned();
            v.push(a[1].clone());
            list(v)
        });
    }
    for name in ["prepend", "mustPrepend"] {
        map.add(name, &[Any, Any], None, |_, a| {
            let mut v = vec![a[1].clone()];
            v.extend(items(&a[0], "prepend")?.iter().cloned());
            list(v)
        });
    }
    map.add("concat", &[], Some(Any), |_, a| {
        let mut out = Vec::new();
        for l in &a {
            match l {
                Value::List(l) => out.extend(l.items.iter().cloned()),
                other => return Err(FnError::new(format!("Cannot concat type {} as list", other.kind_name()))),
            }
        }
        list(out)
    });
    for name in ["first", "mustFirst"] {
        map.add(name, &[Any], None, |_, a| Ok(items(&a[0], "find first")?.first().cloned().unwrap_or(Value::Nil)));
    }
    for name in ["last", "mustLast"] {
        map.add(name, &[Any], None, |_, a| Ok(items(&a[0], "find last")?.last().cloned().unwrap_or(Value::Nil)));
    }
    for name in ["rest", "mustRest"] {
        map.add(name, &[Any], None, |_, a| {
            let v = items(&a[0], "find rest")?;
            Ok(if v.is_empty() { Value::list(vec![]) } else { Value::list(v[1..].to_vec()) })
        });
    }
    for name in ["initial", "mustInitial"] {
        map.add(name, &[Any], None, |_, a| {
            let v = items(&a[0], "find initial")?;
            Ok(if v.is_empty() { Value::list(vec![]) } else { Value::list(v[..v.len() - 1].to_vec()) })
        });
    }
    for name in ["reverse", "mustReverse"] {
        map.add(name, &[Any], None, |_, a| Ok(Value::list(items(&a[0], "find reverse")?.iter().rev().cloned().collect())));
    }
    for name in ["uniq", "mustUniq"] {
        map.add(name, &[Any], None, |_, a| {
            let mut out: Vec<Value> = Vec::new();
            for item in items(&a[0], "find uniq")?.iter() {
                if !out.iter().any(|o| o.deep_equal(item)) {
                    out.push(item.clone());
                }
            }
            Ok(Value::list(out))
        });
    }
    for name in ["without", "mustWithout"] {
        map.add(name, &[Any], Some(Any), |_, a| {
            let omit = &a[1..];
            Ok(Value::list(items(&a[0], "find without")?.iter().filter(|i| !omit.iter().any(|o| o.deep_equal(i))).cloned().collect()))
        });
    }
    for name in ["has", "mustHas"] {
        map.add(name, &[Any, Any], None, |_, a| {
            if a[1].is_nil() {
                return Ok(Value::Bool(false));
            }
            Ok(Value::Bool(items(&a[1], "find has")?.iter().any(|i| i.deep_equal(&a[0]))))
        });
    }
    for name in ["compact", "mustCompact"] {
        map.add(name, &[Any], None, |_, a| Ok(Value::list(items(&a[0], "compact")?.iter().filter(|i| i.truth()).cloned().collect())));
    }
    for name in ["slice", "mustSlice"] {
        map.add(name, &[Any], Some(Any), |_, a| {
            let v = match &a[0] {
                Value::List(l) => &l.items,
                Value::Invalid | Value::Nil => return Err(NIL_DEREF.into()),
                other => return Err(FnError::new(format!("list should be type of slice or array but {}", other.kind_name()))),
            };
            if v.is_empty() {
                return Ok(Value::Nil);
            }
            let start = a.get(1).map(to_int64).unwrap_or(0);
            let end = a.get(2).map(to_int64).unwrap_or(v.len() as i64);
            if start < 0 || end > v.len() as i64 || start > end {
                return Err(FnError::new("reflect: slice index out of range"));
            }
            Ok(same_kind(&a[0], v[start as usize..end as usize].to_vec()))
        });
    }
    for name in ["chunk", "mustChunk"] {
        map.add(name, &[Int, Any], None, |_, a| {
            let size = match a[0] {
                Value::Int(n) => n,
                _ => 0,
            };
            let v = items(&a[1], "chunk")?;
            if size <= 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::list(v.chunks(size as usize).map(|c| Value::list(c.to_vec())).collect()))
        });
    }
    map.add("until", &[Int], None, |_, a| {
        let n = match a[0] {
            Value::Int(n) => n,
            _ => 0,
        };
        until_step(0, n, if n < 0 { -1 } else { 1 })
    });
    map.add("untilStep", &[Int, Int, Int], None, |_, a| {
        let v: Vec<i64> = a.iter().map(|x| if let Value::Int(n) = x { *n } else { 0 }).collect();
        until_step(v[0], v[1], v[2])
    });
    map.add("seq", &[], Some(Int), |_, a| {
        let p: Vec<i64> = a.iter().map(|x| if let Value::Int(n) = x { *n } else { 0 }).collect();
        seq(&p)
    });
}

fn until_range(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FnError> {
    if step == 0 || (stop < start && step >= 0) || (stop >= start && step <= 0) {
        return Ok(Vec::new());
    }
    let count = ((stop as i128 - start as i128) / step as i128).unsigned_abs() + 1;
    if count > MAX_RESULT_ITEMS as u128 {
        return Err(FnError::new(format!("a list of {count} numbers exceeds the {MAX_RESULT_ITEMS}-item limit")));
    }
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i);
        i += step;
    }
    Ok(out)
}

fn until_step(start: i64, stop: i64, step: i64) -> R {
    Ok(Value::list_of(ListKind::Int, until_range(start, stop, step)?.into_iter().map(Value::Int).collect()))
}

fn seq(p: &[i64]) -> R {
    let range = match p {
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            until_range(1, end + inc, inc)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_range(*start, end + step, step)?
        }
        // GNU seq order: FIRST INCREMENT LAST.
        [start, step, end] => {
            let inc = if end < start { -1 } else { 1 };
            if (end < start && *step > 0) || (end >= start && *step < 0) {
                Vec::new()
            } else {
                until_range(*start, end + inc, *step)?
            }
        }
        _ => Vec::new(),
    };
    Ok(Value::string(range.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" ")))
}
