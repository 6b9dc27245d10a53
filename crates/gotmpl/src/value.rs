//! The dynamic values templates compute with, keeping the Go distinctions that change output:
//! `int` vs `int64` vs `float64`, "no value" vs a nil interface, `[]string` vs `[]interface {}`,
//! and maps shared by reference (Sprig's `set` and `merge` mutate them in place, visibly to every
//! holder, exactly as Go maps are shared).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use super::error::GoError;

/// Element type of a Go slice, for `%T`, `kindOf` and assignability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `[]interface {}`
    Any,
    /// `[]string`
    String,
    /// `[]int`
    Int,
}

/// Go type of a map with string keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `map[string]interface {}`
    Any,
    /// Helm's named `common.Values` (same underlying type as `Any`).
    Values,
    /// `map[string]string`
    String,
}

pub type Map = BTreeMap<String, Value>;

#[derive(Debug)]
pub struct MapCell {
    pub kind: MapKind,
    pub entries: RefCell<Map>,
}

/// A struct, pointer or other Go value with fields or methods (Capabilities, Files, semver
/// versions, times…). Implemented by the Helm layer.
pub trait Object: fmt::Debug {
    /// `%T`.
    fn type_name(&self) -> String;
    /// `kindOf`: `struct`, `ptr`, `slice`, `map`…
    fn kind(&self) -> &'static str;
    /// A field or a method without arguments; None when it has no such member.
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    /// A method with arguments: None when there is no such method; a failing method returns
    /// its Go `error`, which the executor wraps as `error calling NAME: …`.
    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, GoError>> {
        None
    }
    /// True when `name` is a method (methods take arguments; fields do not).
    fn has_method(&self, _name: &str) -> bool {
        false
    }
    /// `%v` printing (a `String()` method, or Go's struct syntax).
    fn display(&self) -> String;
    /// `%+v`, when it differs from `%v`.
    fn display_plus(&self) -> String {
        self.display()
    }
    /// JSON encoding as `encoding/json` would produce it (for toJson/toYaml): by default the
    /// struct's exported fields.
    fn to_json(&self) -> Value {
        Value::map(self.json_fields().unwrap_or_default().into_iter().collect())
    }
    /// Struct fields in declaration order, which `encoding/json` keeps (maps it sorts).
    fn json_fields(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    /// A slice-like object's items (for `range`, `len`, …), e.g. `common.VersionSet`.
    fn items(&self) -> Option<Vec<Value>> {
        None
    }
    /// Byte map objects (`.Files`): ranging yields names.
    fn map_entries(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    fn as_any(&self) -> &dyn std::any::Any;
}

#[derive(Clone)]
pub enum Value {
    /// Go's invalid `reflect.Value`: "no value" (prints `<no value>`).
    Invalid,
    /// A nil `interface {}` (prints `<nil>`).
    Nil,
    Bool(bool),
    /// Go `int`.
    Int(i64),
    /// Go `int64`.
    Int64(i64),
    /// Go `uint64` (rare: only from explicit conversions).
    Uint(u64),
    Float(f64),
    String(Rc<str>),
    Bytes(Rc<[u8]>),
    List(Rc<ListValue>),
    Map(Rc<MapCell>),
    Object(Rc<dyn Object>),
}

#[derive(Debug)]
pub struct ListValue {
    pub kind: ListKind,
    pub items: Vec<Value>,
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Invalid => f.write_str("Invalid"),
            Value::Nil => f.write_str("Nil"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Int(i) => write!(f, "Int({i})"),
            Value::Int64(i) => write!(f, "Int64({i})"),
            Value::Uint(i) => write!(f, "Uint({i})"),
            Value::Float(x) => write!(f, "Float({x})"),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Bytes(b) => write!(f, "Bytes({b:?})"),
            Value::List(l) => f.debug_list().entries(l.items.iter()).finish(),
            Value::Map(m) => f.debug_map().entries(m.entries.borrow().iter()).finish(),
            Value::Object(o) => write!(f, "Object({})", o.type_name()),
        }
    }
}

/// Maps can contain themselves (Sprig's `set` stores a map into itself, as Go allows); every
/// recursive walk over values is bounded by depth so such cycles end instead of exhausting memory.
pub const MAX_VALUE_DEPTH: usize = 1_000;

/// Nodes one top-level walk may visit (a map shared twice at every level doubles each step).
pub const MAX_WALK_NODES: usize = 4_000_000;

thread_local! {
    static WALK_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static WALK_NODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `f` one level deeper; None when the walk is already `MAX_VALUE_DEPTH` deep.
pub fn deeper<R>(f: impl FnOnce() -> R) -> Option<R> {
    let depth = WALK_DEPTH.with(|d| d.get());
    if depth == 0 {
        WALK_NODES.with(|n| n.set(0));
    }
    let nodes = WALK_NODES.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    if depth >= MAX_VALUE_DEPTH || nodes > MAX_WALK_NODES {
        return None;
    }
    WALK_DEPTH.with(|d| d.set(depth + 1));
    let result = stacker::maybe_grow(64 * 1024, 1024 * 1024, f);
    WALK_DEPTH.with(|d| d.set(depth));
    Some(result)
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(Rc::from(s))
    }

    pub fn string(s: String) -> Value {
        Value::String(Rc::from(s))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(ListValue { kind: ListKind::Any, items }))
    }

    pub fn list_of(kind: ListKind, items: Vec<Value>) -> Value {
        Value::List(Rc::new(ListValue { kind, items }))
    }

    pub fn map(entries: Map) -> Value {
        Value::map_of(MapKind::Any, entries)
    }

    pub fn map_of(kind: MapKind, entries: Map) -> Value {
        Value::Map(Rc::new(MapCell { kind, entries: RefCell::new(entries) }))
    }

    pub fn empty_map() -> Value {
        Value::map(Map::new())
    }

    /// No value, or a nil interface.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Invalid | Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Go `%T`.
    pub fn type_name(&self) -> String {
        match self {
            Value::Invalid | Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Uint(_) => "uint64".into(),
            Value::Float(_) => "float64".into(),
            Value::String(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(l) => match l.kind {
                ListKind::Any => "[]interface {}".into(),
                ListKind::String => "[]string".into(),
                ListKind::Int => "[]int".into(),
            },
            Value::Map(m) => match m.kind {
                MapKind::Any => "map[string]interface {}".into(),
                MapKind::Values => "common.Values".into(),
                MapKind::String => "map[string]string".into(),
            },
            Value::Object(o) => o.type_name(),
        }
    }

    /// `reflect.Kind` as Sprig's `kindOf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint(_) => "uint64",
            Value::Float(_) => "float64",
            Value::String(_) => "string",
            Value::Bytes(_) | Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(o) => o.kind(),
        }
    }

    /// text/template truthiness (`if`, `with`, `and`, `or`, `not`).
    pub fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.items.is_empty(),
            Value::Map(m) => !m.entries.borrow().is_empty(),
            Value::Object(o) => match (o.items(), o.map_entries()) {
                (Some(items), _) => !items.is_empty(),
                (_, Some(entries)) => !entries.is_empty(),
                _ => true,
            },
        }
    }

    /// True for an empty string, list or map (and for values without a length).
    pub fn is_empty(&self) -> bool {
        self.len().is_none_or(|n| n == 0)
    }

    /// Length for `len` and friends, when the value has one.
    pub fn len(&self) -> Option<usize> {
        match self {
            Value::String(s) => Some(s.len()),
            Value::Bytes(b) => Some(b.len()),
            Value::List(l) => Some(l.items.len()),
            Value::Map(m) => Some(m.entries.borrow().len()),
            Value::Object(o) => o.items().map(|i| i.len()).or_else(|| o.map_entries().map(|e| e.len())),
            _ => None,
        }
    }

    /// Deep copy of maps and lists (copystructure): shared maps become independent.
    pub fn deep_copy(&self) -> Value {
        deeper(|| self.deep_copy_inner()).unwrap_or(Value::Nil)
    }

    fn deep_copy_inner(&self) -> Value {
        match self {
            Value::List(l) => Value::list_of(l.kind, l.items.iter().map(Value::deep_copy).collect()),
            Value::Map(m) => Value::map_of(m.kind, m.entries.borrow().iter().map(|(k, v)| (k.clone(), v.deep_copy())).collect()),
            other => other.clone(),
        }
    }

    /// `reflect.DeepEqual`.
    pub fn deep_equal(&self, other: &Value) -> bool {
        deeper(|| self.deep_equal_inner(other)).unwrap_or(false)
    }

    fn deep_equal_inner(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Invalid, Value::Invalid) | (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) | (Value::Int64(a), Value::Int64(b)) => a == b,
            (Value::Uint(a), Value::Uint(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.kind == b.kind && a.items.len() == b.items.len() && a.items.iter().zip(&b.items).all(|(x, y)| x.deep_equal(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                if Rc::ptr_eq(a, b) {
                    return true;
                }
                let (a, b) = (a.entries.borrow(), b.entries.borrow());
                a.len() == b.len() && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| ka == kb && va.deep_equal(vb))
            }
            (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b) || (a.type_name() == b.type_name() && a.display() == b.display()),
            _ => false,
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::string(s)
    }
}
