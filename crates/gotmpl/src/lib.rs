//! Go's text/template, nothing Helm-specific: lexing, parsing, execution over [`Value`]s, and
//! Go `fmt` printing. Templates are parsed once into a [`Templates`] set and executed many
//! times; function maps are built on [`builtins::add_builtins`].

pub mod builtins;
pub mod error;
pub mod exec;
pub mod fmt;
pub mod funcs;
pub mod lex;
pub mod node;
pub mod parse;
pub mod value;

pub use error::GoError;
pub use exec::{Budget, Env, Limits, Scope};
pub use funcs::{Context, FnError, FuncMap, Param, TextError};
pub use parse::ParseError;
pub use value::{ListKind, Map, MapKind, Object, Value};

/// A parsed set of named templates sharing one function map.
pub struct Templates {
    pub funcs: FuncMap,
    pub scope: Scope<'static>,
    /// Name of the root template (`gotpl` in Helm), used by `tpl` and in some errors.
    pub root_name: String,
}

impl Templates {
    pub fn new(funcs: FuncMap, root_name: &str) -> Templates {
        Templates { funcs, scope: Scope::new(), root_name: root_name.to_string() }
    }

    /// Parses one file's text under `name`; later definitions of a name replace earlier ones.
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), ParseError> {
        self.scope.parse(name, text, &self.funcs).map(|_| ())
    }

    /// Executes template `name` with `data` as dot.
    pub fn execute(&self, name: &str, data: Value, budget: &Budget) -> Result<String, GoError> {
        let env = Env { funcs: &self.funcs, scope: &self.scope, budget, root_name: &self.root_name };
        exec::execute_named(&env, name, data)
    }
}
