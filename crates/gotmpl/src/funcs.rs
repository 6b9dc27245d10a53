//! Function signatures and the call interface. Go checks template function arguments against
//! the function's parameter types (`expected string; found 1`, `wrong type for value; expected
//! int; got float64`); [`Param`] carries exactly the distinctions those checks make.

use std::collections::HashMap;

use super::error::GoError;
use super::parse::ParseError;
use super::value::Value;

/// What functions see of the running engine: a host's template functions (Helm's `include` and
/// `tpl`) are built on these primitives and word their own errors. The executor implements it,
/// so the function map does not depend on the executor.
pub trait Context {
    /// Executes the named template (Go's `ExecuteTemplate`) while counting how deep executions
    /// of that name are nested; `None` when the count would pass `Limits::max_include_depth`.
    fn execute_named_bounded(&mut self, name: &str, data: Value) -> Option<Result<String, GoError>>;

    /// Parses `text` under the root template's name in a layer over the current templates (its
    /// `define`s see and shadow them, and vanish afterwards) and executes it with `data`.
    fn execute_text(&mut self, text: &str, data: Value) -> Result<String, TextError>;
}

/// Why [`Context::execute_text`] failed: the text did not parse, or its execution failed.
#[derive(Debug)]
pub enum TextError {
    Parse(ParseError),
    Exec(GoError),
}

/// A parameter's Go type, as far as argument checking cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `interface{}`: anything; no value becomes nil.
    Any,
    /// `reflect.Value` (text/template builtins): the value exactly as evaluated.
    Reflect,
    Str,
    /// Go `int`.
    Int,
    Float,
    Bool,
    /// `map[string]interface{}`.
    Map,
    /// `[]interface{}`.
    List,
    /// `time.Time` (Sprig date functions).
    Time,
    /// A named struct type a function library defines (e.g. `sprig.certificate`): only an
    /// object of that type is assignable.
    Struct(&'static str),
}

impl Param {
    pub fn go_type(self) -> &'static str {
        match self {
            Param::Any => "interface {}",
            Param::Reflect => "reflect.Value",
            Param::Str => "string",
            Param::Int => "int",
            Param::Float => "float64",
            Param::Bool => "bool",
            Param::Map => "map[string]interface {}",
            Param::List => "[]interface {}",
            Param::Time => "time.Time",
            Param::Struct(name) => name,
        }
    }
}

/// What a failing function returns. `wrapped` keeps a template error it passes through (from
/// `include`), so Helm can print the whole trace.
#[derive(Debug, Clone)]
pub struct FnError {
    pub message: String,
    pub wrapped: Option<GoError>,
}

impl FnError {
    pub fn new(message: impl Into<String>) -> FnError {
        FnError { message: message.into(), wrapped: None }
    }
}

impl From<String> for FnError {
    fn from(message: String) -> FnError {
        FnError::new(message)
    }
}

impl From<&str> for FnError {
    fn from(message: &str) -> FnError {
        FnError::new(message)
    }
}

pub type FnResult = Result<Value, FnError>;
pub type NativeFn = fn(&mut dyn Context, Vec<Value>) -> FnResult;

#[derive(Clone)]
pub struct Function {
    pub params: &'static [Param],
    pub variadic: Option<Param>,
    pub imp: NativeFn,
}

/// Name → function; the parser asks it which identifiers exist.
#[derive(Clone, Default)]
pub struct FuncMap {
    map: HashMap<&'static str, Function>,
}

impl FuncMap {
    pub fn new() -> FuncMap {
        FuncMap::default()
    }

    pub fn add(&mut self, name: &'static str, params: &'static [Param], variadic: Option<Param>, imp: NativeFn) {
        self.map.insert(name, Function { params, variadic, imp });
    }

    pub fn remove(&mut self, name: &str) {
        self.map.remove(name);
    }

    pub fn get(&self, name: &str) -> Option<&Function> {
        self.map.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &&'static str> {
        self.map.keys()
    }
}
