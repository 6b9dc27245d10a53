//! Sprig's dictionary functions. `set`, `unset`, `merge` and `mergeOverwrite` mutate their map
//! argument in place (shared with every other holder), exactly as Go maps behave.

use super::convert::strval;
use super::strings::{s, string_list};
use gotmpl::{FnError, FuncMap, Map, MapKind, Param, Value};

fn map_of(v: &Value) -> Option<&std::rc::Rc<gotmpl::value::MapCell>> {
    match v {
        Value::Map(m) => Some(m),
        _ => None,
    }
}

const NIL_MAP: &str = "assignment to entry in nil map";

pub(super) fn add(map: &mut FuncMap) {
    use Param::{Any, Str};
    map.add("dict", &[], Some(Any), |_, a| {
        let mut m = Map::new();
        let mut i = 0;
        while i < a.len() {
            let key = strval(&a[i]);
            m.insert(key, a.get(i + 1).cloned().unwrap_or_else(|| Value::str("")));
            i += 2;
        }
        Ok(Value::map(m))
    });
    map.add("get", &[Param::Map, Str], None, |_, a| {
        Ok(map_of(&a[0]).and_then(|m| m.entries.borrow().get(s(&a[1])).cloned()).unwrap_or_else(|| Value::str("")))
    });
    map.add("set", &[Param::Map, Str, Any], None, |_, a| {
        let m = map_of(&a[0]).ok_or(NIL_MAP)?;
        m.entries.borrow_mut().insert(s(&a[1]).to_string(), a[2].clone());
        Ok(a[0].clone())
    });
    map.add("unset", &[Param::Map, Str], None, |_, a| {
        if let Some(m) = map_of(&a[0]) {
            m.entries.borrow_mut().remove(s(&a[1]));
        }
        Ok(a[0].clone())
    });
    map.add("hasKey", &[Param::Map, Str], None, |_, a| {
        Ok(Value::Bool(map_of(&a[0]).is_some_and(|m| m.entries.borrow().contains_key(s(&a[1])))))
    });
    map.add("pluck", &[Str], Some(Param::Map), |_, a| {
        let key = s(&a[0]);
        Ok(Value::list(a[1..].iter().filter_map(map_of).filter_map(|m| m.entries.borrow().get(key).cloned()).collect()))
    });
    // Go iterates maps in random order; sorted keys make the output reproducible.
    map.add("keys", &[], Some(Param::Map), |_, a| {
        let mut keys: Vec<String> =
            a.iter().filter_map(map_of).flat_map(|m| m.entries.borrow().keys().cloned().collect::<Vec<_>>()).collect();
        keys.sort();
        Ok(string_list(keys))
    });
    map.add("values", &[Param::Map], None, |_, a| {
        Ok(Value::list(map_of(&a[0]).map(|m| m.entries.borrow().values().cloned().collect()).unwrap_or_default()))
    });
    map.add("pick", &[Param::Map], Some(Str), |_, a| {
        let m = map_of(&a[0]).map(|m| m.entries.borrow().clone()).unwrap_or_default();
        let picked: Map = a[1..].iter().filter_map(|k| m.get(s(k)).map(|v| (s(k).to_string(), v.clone()))).collect();
        Ok(Value::map(picked))
    });
    map.add("omit", &[Param::Map], Some(Str), |_, a| {
        let mut m = map_of(&a[0]).map(|m| m.entries.borrow().clone()).unwrap_or_default();
        for k in &a[1..] {
            m.remove(s(k));
        }
        Ok(Value::map(m))
    });
    for name in ["merge", "mustMerge"] {
        map.add(name, &[Param::Map], Some(Param::Map), |_, a| merge_all(&a, false));
    }
    for name in ["mergeOverwrite", "mustMergeOverwrite"] {
        map.add(name, &[Param::Map], Some(Param::Map), |_, a| merge_all(&a, true));
    }
    for name in ["deepCopy", "mustDeepCopy"] {
        map.add(name, &[Any], None, |_, a| Ok(a[0].deep_copy()));
    }
    map.add("dig", &[], Some(Any), |_, a| {
        if a.len() < 3 {
            return Err("dig needs at least three arguments".into());
        }
        let mut current = match &a[a.len() - 1] {
            Value::Map(m) => m.clone(),
            other => {
                return Err(FnError::new(format!(
                    "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                    other.type_name()
                )))
            }
        };
        let default = a[a.len() - 2].clone();
        let keys = &a[..a.len() - 2];
        for (i, key) in keys.iter().enumerate() {
            let key = match key {
                Value::String(k) => k.to_string(),
                other => return Err(FnError::new(format!("interface conversion: interface {{}} is {}, not string", other.type_name()))),
            };
            let step = current.entries.borrow().get(&key).cloned();
            match step {
                None => return Ok(default),
                Some(v) if i + 1 == keys.len() => return Ok(v),
                Some(Value::Map(m)) => current = m,
                Some(other) => {
                    return Err(FnError::new(format!(
                        "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                        other.type_name()
                    )))
                }
            }
        }
        Ok(default)
    });
}

/// `merge`/`mergeOverwrite`: every source into the first map, which is mutated and returned.
fn merge_all(a: &[Value], overwrite: bool) -> Result<Value, FnError> {
    let dst = map_of(&a[0]).ok_or(NIL_MAP)?;
    for src in a[1..].iter().filter_map(map_of) {
        if std::rc::Rc::ptr_eq(dst, src) {
            continue;
        }
        let snapshot = src.entries.borrow().clone();
        merge_into(&mut dst.entries.borrow_mut(), &snapshot, overwrite, 0);
    }
    Ok(a[0].clone())
}

/// mergo semantics: without overwrite, a destination key is filled when missing or holding a
/// zero value; nested maps merge recursively either way.
fn merge_into(dst: &mut Map, src: &Map, overwrite: bool, depth: usize) {
    // A map that contains itself (via `set`) would otherwise recurse forever.
    if depth > 1000 {
        return;
    }
    for (k, sv) in src {
        match dst.get(k) {
            Some(Value::Map(dm)) if matches!(sv, Value::Map(_)) => {
                if let Value::Map(sm) = sv {
                    if !std::rc::Rc::ptr_eq(dm, sm) {
                        let dm = dm.clone();
                        let snapshot = sm.entries.borrow().clone();
                        let borrowed = dm.entries.try_borrow_mut();
                        if let Ok(mut entries) = borrowed {
                            merge_into(&mut entries, &snapshot, overwrite, depth + 1);
                        }
                    }
                }
            }
            Some(dv) if !overwrite && dv.truth() => {}
            Some(_) if overwrite && sv.is_nil() => {}
            _ => {
                let value = match sv {
                    Value::Map(m) if m.kind == MapKind::String => sv.clone(),
                    other => other.clone(),
                };
                dst.insert(k.clone(), value);
            }
        }
    }
}
