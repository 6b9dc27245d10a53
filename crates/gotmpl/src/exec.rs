//! Template execution with text/template's semantics: `missingkey=zero`, Go truthiness, the
//! distinction between values held in `interface {}` slots and concrete ones (it shows in error
//! messages), variable scoping, `break`/`continue`, typed argument checks, and errors located at
//! the node Go would have been visiting. Budgets bound steps, output and recursion.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::error::GoError;
use super::fmt::{go_quote, sprint_value};
use super::funcs::{Context, FnError, FuncMap, Function, Param, TextError};
use super::node::{Arg, Branch, Command, Node, NodeRef, Pipe};
use super::parse::{parse, ParseError, Tree};
use super::value::{ListKind, MapKind, Value};

/// Bounds that turn runaway templates into errors instead of hangs or exhausted memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Evaluation steps (actions, commands, iterations) for one render.
    pub max_steps: u64,
    /// Bytes one template execution may write.
    pub max_output: usize,
    /// Nested `{{template}}` calls (text/template's own limit).
    pub max_template_depth: usize,
    /// Nested `include`s of one name (Helm's `recursionMaxNums`).
    pub max_include_depth: usize,
    /// Bytes one render may produce in all (template output plus string-building function
    /// results), however they are nested.
    pub max_total_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // The Trainer charts take about 4,000 steps; large public charts a few hundred
            // thousand. Five million stops runaway templates within seconds.
            max_steps: 5_000_000,
            max_output: 64 * 1024 * 1024,
            max_template_depth: 100_000,
            max_include_depth: 1000,
            max_total_bytes: 512 * 1024 * 1024,
        }
    }
}

/// Shared counters of one render.
#[derive(Debug, Default)]
pub struct Budget {
    pub limits: Limits,
    steps: Cell<u64>,
    pub(crate) included: RefCell<HashMap<String, usize>>,
    /// Nesting of include/tpl executions.
    pub(crate) nesting: Cell<usize>,
    /// Nesting of template calls and executions together (native stack in use).
    pub(crate) total_depth: Cell<usize>,
}

impl Budget {
    pub fn new(limits: Limits) -> Budget {
        TOTAL_BYTES.with(|t| t.set((0, limits.max_total_bytes)));
        EXPENSIVE_UNITS.with(|c| c.set(0));
        Budget { limits, ..Budget::default() }
    }
}

thread_local! {
    /// (bytes produced so far, limit) of the render running on this thread.
    static TOTAL_BYTES: Cell<(usize, usize)> = const { Cell::new((0, usize::MAX)) };
}

/// Work units (about 50 ms of CPU each: one scrypt key derivation, a quarter of an RSA-2048 key)
/// that functions far more costly than a step may spend in one render.
pub const MAX_EXPENSIVE_UNITS: u32 = 256;

thread_local! {
    static EXPENSIVE_UNITS: Cell<u32> = const { Cell::new(0) };
}

/// A render ran out of budget: a runaway template asked for more work or output than one render
/// may spend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// `what` (a key derivation or generation) would pass `MAX_EXPENSIVE_UNITS`.
    #[error("{what}: this render asked for more key derivation or generation than one render allows (a runaway template?)")]
    ExpensiveWork { what: &'static str },
    /// The render's output passed its byte budget.
    #[error("the render produced more than {limit} bytes (a runaway template?)")]
    Output { limit: usize },
}

impl From<BudgetError> for FnError {
    fn from(e: BudgetError) -> FnError {
        FnError::new(e.to_string())
    }
}

/// Charges `units` of expensive work to the current render; an error once `MAX_EXPENSIVE_UNITS` are spent.
pub fn charge_expensive_call(what: &'static str, units: u32) -> Result<(), BudgetError> {
    EXPENSIVE_UNITS.with(|c| {
        let used = c.get().saturating_add(units);
        c.set(used);
        if used > MAX_EXPENSIVE_UNITS {
            Err(BudgetError::ExpensiveWork { what })
        } else {
            Ok(())
        }
    })
}

/// Charges `n` produced bytes to the current render; an error once its budget is spent.
pub fn charge_bytes(n: usize) -> Result<(), BudgetError> {
    TOTAL_BYTES.with(|t| {
        let (used, limit) = t.get();
        let used = used.saturating_add(n);
        t.set((used, limit));
        if used > limit {
            Err(BudgetError::Output { limit })
        } else {
            Ok(())
        }
    })
}

/// Named templates, possibly layered over a parent set (as `tpl` layers over the chart's).
pub struct Scope<'p> {
    trees: HashMap<String, Rc<Tree>>,
    parent: Option<&'p Scope<'p>>,
}

impl<'p> Scope<'p> {
    pub fn new() -> Scope<'static> {
        Scope { trees: HashMap::new(), parent: None }
    }

    pub fn child(parent: &'p Scope<'p>) -> Scope<'p> {
        Scope { trees: HashMap::new(), parent: Some(parent) }
    }

    pub fn lookup(&self, name: &str) -> Option<Rc<Tree>> {
        self.trees.get(name).cloned().or_else(|| self.parent.and_then(|p| p.lookup(name)))
    }

    /// text/template's `AddParseTree`/`associate`: a new tree replaces the old one, except that
    /// an empty tree never replaces an existing one.
    pub fn add(&mut self, tree: Tree) {
        if super::node::is_empty_tree(&tree.root) && self.lookup(&tree.name).is_some() {
            return;
        }
        self.trees.insert(tree.name.clone(), Rc::new(tree));
    }

    /// Parses `text` as template `name` and adds every tree it defines. Returns the file's own tree.
    pub fn parse(&mut self, name: &str, text: &str, funcs: &FuncMap) -> Result<Rc<Tree>, ParseError> {
        let trees = parse(name, text, &|f| funcs.contains(f) || BUILTIN_NAMES.contains(&f))?;
        let mut own = None;
        for tree in trees {
            if tree.name == name {
                let rc = Rc::new(tree);
                own = Some(rc.clone());
                if !(super::node::is_empty_tree(&rc.root) && self.lookup(name).is_some()) {
                    self.trees.insert(name.to_string(), rc);
                }
            } else {
                self.add(tree);
            }
        }
        Ok(own.expect("parse always returns the file's own tree"))
    }
}

impl Default for Scope<'static> {
    fn default() -> Self {
        Scope::new()
    }
}

/// Builtins text/template resolves before the function map (Sprig replaces `slice`).
pub const BUILTIN_NAMES: &[&str] = &[
    "and", "call", "html", "index", "js", "len", "not", "or", "print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
    "slice",
];

/// Everything an execution needs besides the tree.
pub struct Env<'a> {
    pub funcs: &'a FuncMap,
    pub scope: &'a Scope<'a>,
    pub budget: &'a Budget,
    /// The root template's name (`gotpl` in Helm): `tpl` parses under it.
    pub root_name: &'a str,
}

/// The running engine as a function sees it ([`Context`]).
struct Running<'a, 'b> {
    env: &'a Env<'b>,
}

impl Context for Running<'_, '_> {
    fn execute_named_bounded(&mut self, name: &str, data: Value) -> Option<Result<String, GoError>> {
        let budget = self.env.budget;
        {
            let mut included = budget.included.borrow_mut();
            let count = included.entry(name.to_string()).or_insert(0);
            if *count > budget.limits.max_include_depth {
                return None;
            }
            *count += 1;
        }
        let result = execute_named(self.env, name, data);
        if let Some(count) = budget.included.borrow_mut().get_mut(name) {
            *count -= 1;
        }
        Some(result)
    }

    fn execute_text(&mut self, text: &str, data: Value) -> Result<String, TextError> {
        let mut layer = Scope::child(self.env.scope);
        let root = self.env.root_name;
        let tree = layer.parse(root, text, self.env.funcs).map_err(TextError::Parse)?;
        let env = Env { funcs: self.env.funcs, scope: &layer, budget: self.env.budget, root_name: root };
        execute_tree(&env, &tree, data).map_err(TextError::Exec)
    }
}

/// Executes a named template (`ExecuteTemplate`).
pub fn execute_named(env: &Env<'_>, name: &str, data: Value) -> Result<String, GoError> {
    match env.scope.lookup(name) {
        Some(tree) => execute_tree(env, &tree, data),
        None => {
            Err(GoError::plain(format!("template: no template {} associated with template {}", go_quote(name), go_quote(env.root_name))))
        }
    }
}

/// Executes one tree with `data` as dot and `$`.
pub fn execute_tree(env: &Env<'_>, tree: &Tree, data: Value) -> Result<String, GoError> {
    let nesting = env.budget.nesting.get();
    let total = env.budget.total_depth.get();
    if nesting >= MAX_NESTED_EXECUTIONS || total >= MAX_TOTAL_DEPTH {
        return Err(GoError::plain(format!(
            "template: {}: exceeded maximum template depth ({})",
            tree.name, env.budget.limits.max_template_depth
        )));
    }
    env.budget.total_depth.set(total + 1);
    env.budget.nesting.set(nesting + 1);
    // An execution (include, tpl, template call) costs far more than one action: charge it,
    // so exponential fan-out through includes exhausts the budget as fast as a loop would.
    env.budget.steps.set(env.budget.steps.get() + EXECUTION_STEPS);
    let mut state = State { env, tree, vars: vec![("$".into(), data.clone(), false)], depth: 0, node: None };
    let mut out = String::new();
    let result = grow_stack(|| state.walk_list(&Dot { value: data, boxed: false }, &tree.root, &mut out));
    env.budget.nesting.set(nesting);
    env.budget.total_depth.set(total);
    result.map(|_| out)
}

/// Steps one execution (include, tpl, named template) is charged up front.
const EXECUTION_STEPS: u64 = 50;

/// Nested include/tpl executions. Helm stops one name at 1000 nested includes; chains through
/// several names stop here. Each level wraps the inner error's text (as Go's error chain does),
/// so this also bounds the size of the final message.
const MAX_NESTED_EXECUTIONS: usize = 1_100;

/// `{{template}}` calls and executions together. Go allows 100000 template levels, but each
/// costs native stack (grown on the heap here); past this the render fails with Go's own
/// message, which for runaway recursion (the only way to get here) is what Helm prints too.
const MAX_TOTAL_DEPTH: usize = 2_000;

#[derive(Clone)]
struct Dot {
    value: Value,
    /// Held in an `interface {}` slot (a map value or `[]interface {}` element).
    boxed: bool,
}

enum Flow {
    Normal,
    Break,
    Continue,
}

type ExecResult<T> = Result<T, GoError>;

struct State<'e, 't> {
    env: &'e Env<'e>,
    tree: &'t Tree,
    vars: Vec<(String, Value, bool)>,
    depth: usize,
    node: Option<NodeRef<'t>>,
}

impl<'e, 't> State<'e, 't> {
    fn at(&mut self, node: NodeRef<'t>) {
        self.node = Some(node);
    }

    fn step(&mut self) -> ExecResult<()> {
        let steps = self.env.budget.steps.get() + 1;
        self.env.budget.steps.set(steps);
        if steps > self.env.budget.limits.max_steps {
            return Err(
                self.error(&format!("evaluation budget of {} steps exhausted (a runaway template?)", self.env.budget.limits.max_steps))
            );
        }
        Ok(())
    }

    /// text/template's `errorf`: `template: LOC: executing "NAME" at <NODE>: MSG`.
    fn error(&self, message: &str) -> GoError {
        self.error_wrapping(message, None)
    }

    fn error_wrapping(&self, message: &str, cause: Option<GoError>) -> GoError {
        let text = match self.node {
            Some(node) => {
                format!("template: {}: executing {} at <{}>: {}", self.tree.location(node.pos()), go_quote(&self.tree.name), node, message)
            }
            None => format!("template: {}: {}", self.tree.name, message),
        };
        GoError { text, exec: true, cause: cause.map(Box::new) }
    }

    fn walk_list(&mut self, dot: &Dot, list: &'t [Node], out: &mut String) -> ExecResult<Flow> {
        for node in list {
            match self.walk(dot, node, out)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, dot: &Dot, node: &'t Node, out: &mut String) -> ExecResult<Flow> {
        self.step()?;
        match node {
            Node::Text(text) => {
                out.push_str(text);
                charge_bytes(text.len()).map_err(|e| self.error(&e.to_string()))?;
                self.check_output(out)?;
            }
            Node::Action { pipe, .. } => {
                let (value, _) = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.at(NodeRef::Node(node));
                    self.print(&value, out)?;
                }
            }
            Node::If(branch) | Node::With(branch) => {
                let mark = self.vars.len();
                let result = grow_stack(|| self.walk_if_or_with(dot, branch, matches!(node, Node::With(_)), out));
                self.vars.truncate(mark);
                return result;
            }
            Node::Range(branch) => {
                self.at(NodeRef::Node(node));
                let mark = self.vars.len();
                let result = grow_stack(|| self.walk_range(dot, branch, out));
                self.vars.truncate(mark);
                return result;
            }
            Node::Template { name, pipe, .. } => {
                self.at(NodeRef::Node(node));
                let Some(tree) = self.env.scope.lookup(name) else {
                    return Err(self.error(&format!("template {} not defined", go_quote(name))));
                };
                if self.depth >= self.env.budget.limits.max_template_depth || self.env.budget.total_depth.get() >= MAX_TOTAL_DEPTH {
                    return Err(self.error(&format!("exceeded maximum template depth ({})", self.env.budget.limits.max_template_depth)));
                }
                let new_dot = match pipe {
                    Some(p) => self.eval_pipeline(dot, p)?.0,
                    None => Value::Invalid,
                };
                let mut inner = State {
                    env: self.env,
                    tree: &tree,
                    vars: vec![("$".into(), new_dot.clone(), false)],
                    depth: self.depth + 1,
                    node: None,
                };
                let total = self.env.budget.total_depth.get();
                self.env.budget.total_depth.set(total + 1);
                let flow = grow_stack(|| inner.walk_list(&Dot { value: new_dot, boxed: false }, &tree.root, out));
                self.env.budget.total_depth.set(total);
                flow?;
            }
            Node::Break { .. } => return Ok(Flow::Break),
            Node::Continue { .. } => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    fn check_output(&self, out: &str) -> ExecResult<()> {
        if out.len() > self.env.budget.limits.max_output {
            return Err(self.error(&format!("output exceeds {} bytes (a runaway template?)", self.env.budget.limits.max_output)));
        }
        Ok(())
    }

    fn print(&mut self, value: &Value, out: &mut String) -> ExecResult<()> {
        let before = out.len();
        match value {
            Value::Invalid => out.push_str("<no value>"),
            Value::Nil => out.push_str("<nil>"),
            other => out.push_str(&sprint_value(other)),
        }
        charge_bytes(out.len() - before).map_err(|e| self.error(&e.to_string()))?;
        self.check_output(out)
    }

    fn walk_if_or_with(&mut self, dot: &Dot, branch: &'t Branch, is_with: bool, out: &mut String) -> ExecResult<Flow> {
        let (value, _) = self.eval_pipeline(dot, &branch.pipe)?;
        if value.truth() {
            if is_with {
                self.walk_list(&Dot { value, boxed: false }, &branch.list, out)
            } else {
                self.walk_list(dot, &branch.list, out)
            }
        } else if let Some(else_list) = &branch.else_list {
            self.walk_list(dot, else_list, out)
        } else {
            Ok(Flow::Normal)
        }
    }

    fn walk_range(&mut self, dot: &Dot, branch: &'t Branch, out: &mut String) -> ExecResult<Flow> {
        let (value, _) = self.eval_pipeline(dot, &branch.pipe)?;
        let mark = self.vars.len();
        let pipe = &branch.pipe;
        let (items, elem_boxed): (Vec<(Value, Value)>, bool) = match &value {
            Value::List(list) => {
                let boxed = list.kind == ListKind::Any;
                (list.items.iter().enumerate().map(|(i, v)| (Value::Int(i as i64), v.clone())).collect(), boxed)
            }
            Value::Bytes(bytes) => (bytes.iter().enumerate().map(|(i, b)| (Value::Int(i as i64), Value::Uint(*b as u64))).collect(), false),
            Value::Map(map) => {
                let boxed = map.kind != MapKind::String;
                (map.entries.borrow().iter().map(|(k, v)| (Value::str(k), v.clone())).collect(), boxed)
            }
            Value::Invalid | Value::Nil => (Vec::new(), false),
            Value::Int(n) | Value::Int64(n) => {
                if pipe.decl.len() > 1 {
                    return Err(self.error(&format!("can't use {} to iterate over more than one variable", sprint_value(&value))));
                }
                let make = |i: i64| if matches!(value, Value::Int(_)) { Value::Int(i) } else { Value::Int64(i) };
                ((0..(*n).max(0)).map(|i| (make(i), make(i))).collect(), false)
            }
            Value::Object(o) => match (o.items(), o.map_entries()) {
                (Some(items), _) => (items.into_iter().enumerate().map(|(i, v)| (Value::Int(i as i64), v)).collect(), false),
                (_, Some(entries)) => (entries.into_iter().map(|(k, v)| (Value::str(&k), v)).collect(), false),
                _ => return Err(self.error(&format!("range can't iterate over {}", sprint_value(&value)))),
            },
            other => return Err(self.error(&format!("range can't iterate over {}", sprint_value(other)))),
        };
        if items.is_empty() {
            if let Some(else_list) = &branch.else_list {
                return self.walk_list(dot, else_list, out);
            }
            return Ok(Flow::Normal);
        }
        for (index, elem) in items {
            self.step()?;
            if !pipe.decl.is_empty() {
                if pipe.is_assign {
                    let target = if pipe.decl.len() > 1 { index.clone() } else { elem.clone() };
                    self.set_var(&pipe.decl[0], target, pipe.decl.len() == 1 && elem_boxed)?;
                } else {
                    self.set_top_var(1, elem.clone(), elem_boxed);
                }
            }
            if pipe.decl.len() > 1 {
                if pipe.is_assign {
                    self.set_var(&pipe.decl[1], elem.clone(), elem_boxed)?;
                } else {
                    self.set_top_var(2, index.clone(), false);
                }
            }
            let flow = self.walk_list(&Dot { value: elem, boxed: elem_boxed }, &branch.list, out);
            self.vars.truncate(mark);
            match flow? {
                Flow::Break => break,
                Flow::Continue | Flow::Normal => {}
            }
        }
        Ok(Flow::Normal)
    }

    fn set_top_var(&mut self, n: usize, value: Value, boxed: bool) {
        let len = self.vars.len();
        if let Some(slot) = self.vars.get_mut(len - n) {
            slot.1 = value;
            slot.2 = boxed;
        }
    }

    fn set_var(&mut self, name: &str, value: Value, boxed: bool) -> ExecResult<()> {
        for slot in self.vars.iter_mut().rev() {
            if slot.0 == name {
                slot.1 = value;
                slot.2 = boxed;
                return Ok(());
            }
        }
        Err(self.error(&format!("undefined variable: {name}")))
    }

    fn var_value(&self, name: &str) -> ExecResult<(Value, bool)> {
        for slot in self.vars.iter().rev() {
            if slot.0 == name {
                return Ok((slot.1.clone(), slot.2));
            }
        }
        Err(self.error(&format!("undefined variable: {name}")))
    }

    /// Evaluates a pipeline; the result is "dug out" of any interface, as Go does after each
    /// command (so a nil interface becomes no value).
    fn eval_pipeline(&mut self, dot: &Dot, pipe: &'t Pipe) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Pipe(pipe));
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let (v, _) = self.eval_command(dot, cmd, value.take())?;
            value = Some(unbox(v));
        }
        let value = value.unwrap_or(Value::Invalid);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone(), false)?;
            } else {
                self.vars.push((name.clone(), value.clone(), false));
            }
        }
        Ok((value, false))
    }

    fn eval_command(&mut self, dot: &Dot, cmd: &'t Command, fin: Option<Value>) -> ExecResult<(Value, bool)> {
        self.step()?;
        let first = &cmd.args[0];
        match first {
            Arg::Field { ident, .. } => {
                self.at(NodeRef::Arg(first));
                return self.eval_field_chain(dot, dot.value.clone(), dot.boxed, first, ident, &cmd.args, fin);
            }
            Arg::Chain { node, fields, .. } => return self.eval_chain(dot, first, node, fields, &cmd.args, fin),
            Arg::Identifier { name, .. } => return self.eval_function(dot, first, name, cmd, &cmd.args, fin),
            Arg::Pipe(pipe) => {
                self.not_a_function(&cmd.args, &fin)?;
                return self.eval_pipeline(dot, pipe);
            }
            Arg::Variable { ident, .. } => return self.eval_variable(dot, first, ident, &cmd.args, fin),
            _ => {}
        }
        self.at(NodeRef::Arg(first));
        self.not_a_function(&cmd.args, &fin)?;
        match first {
            Arg::Bool { value, .. } => Ok((Value::Bool(*value), false)),
            Arg::Dot { .. } => Ok((dot.value.clone(), dot.boxed)),
            Arg::Nil { .. } => Err(self.error("nil is not a command")),
            Arg::Number { text, number, .. } => self.ideal_constant(text, number).map(|v| (v, false)),
            Arg::String { text, .. } => Ok((Value::String(text.clone()), false)),
            _ => Err(self.error(&format!("can't evaluate command {}", go_quote(&NodeRef::Arg(first).to_string())))),
        }
    }

    fn not_a_function(&self, args: &[Arg], fin: &Option<Value>) -> ExecResult<()> {
        if args.len() > 1 || fin.is_some() {
            return Err(self.error(&format!("can't give argument to non-function {}", NodeRef::Arg(&args[0]))));
        }
        Ok(())
    }

    fn ideal_constant(&self, text: &str, n: &super::node::Number) -> ExecResult<Value> {
        let is_hex_int = text.len() > 2 && text.starts_with('0') && matches!(text.as_bytes()[1], b'x' | b'X') && !text.contains(['p', 'P']);
        let is_rune = text.starts_with('\'');
        if n.is_complex {
            return Err(self.error("complex numbers are not supported"));
        }
        if n.is_float && !is_hex_int && !is_rune && text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Value::Float(n.float));
        }
        if n.is_int {
            return Ok(Value::Int(n.int));
        }
        if n.is_uint {
            return Err(self.error(&format!("{text} overflows int")));
        }
        Ok(Value::Invalid)
    }

    fn eval_chain(
        &mut self,
        dot: &Dot,
        chain: &'t Arg,
        node: &'t Arg,
        fields: &[String],
        args: &'t [Arg],
        fin: Option<Value>,
    ) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Arg(chain));
        if matches!(node, Arg::Nil { .. }) {
            return Err(self.error(&format!("indirection through explicit nil in {}", NodeRef::Arg(chain))));
        }
        let (receiver, boxed) = self.eval_arg_any(dot, node)?;
        self.eval_field_chain(dot, receiver, boxed, chain, fields, args, fin)
    }

    fn eval_variable(
        &mut self,
        dot: &Dot,
        node: &'t Arg,
        ident: &[String],
        args: &'t [Arg],
        fin: Option<Value>,
    ) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Arg(node));
        let (value, boxed) = self.var_value(&ident[0])?;
        if ident.len() == 1 {
            self.not_a_function(args, &fin)?;
            return Ok((value, boxed));
        }
        self.eval_field_chain(dot, value, boxed, node, &ident[1..], args, fin)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain(
        &mut self,
        dot: &Dot,
        mut receiver: Value,
        mut boxed: bool,
        node: &'t Arg,
        ident: &[String],
        args: &'t [Arg],
        fin: Option<Value>,
    ) -> ExecResult<(Value, bool)> {
        let n = ident.len();
        for name in &ident[..n - 1] {
            let (v, b) = self.eval_field(dot, name, node, &[], None, receiver, boxed)?;
            receiver = v;
            boxed = b;
        }
        self.eval_field(dot, &ident[n - 1], node, args, fin, receiver, boxed)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field(
        &mut self,
        dot: &Dot,
        name: &str,
        node: &'t Arg,
        args: &'t [Arg],
        fin: Option<Value>,
        receiver: Value,
        boxed: bool,
    ) -> ExecResult<(Value, bool)> {
        let static_type = if boxed { "interface {}".to_string() } else { receiver.type_name() };
        match &receiver {
            Value::Invalid => return Ok((Value::Invalid, false)),
            Value::Nil => return Err(self.error(&format!("nil pointer evaluating {static_type}.{name}"))),
            _ => {}
        }
        let has_args = args.len() > 1 || fin.is_some();
        if let Value::Object(object) = &receiver {
            if object.has_method(name) {
                let mut argv = Vec::new();
                for arg in args.iter().skip(1) {
                    argv.push(self.eval_arg_any(dot, arg)?.0);
                }
                if let Some(f) = fin {
                    argv.push(f);
                }
                return match object.call(name, &argv) {
                    Some(Ok(v)) => Ok((v, false)),
                    Some(Err(e)) => {
                        self.at(NodeRef::Arg(node));
                        Err(self.error_wrapping(&format!("error calling {name}: {e}"), Some(e)))
                    }
                    None => Err(self.error(&format!("can't evaluate field {name} in type {static_type}"))),
                };
            }
            if let Some(v) = object.field(name) {
                if has_args {
                    return Err(self.error(&format!("{name} has arguments but cannot be invoked as function")));
                }
                return Ok((v, false));
            }
        }
        if let Value::Map(map) = &receiver {
            if has_args {
                return Err(self.error(&format!("{name} is not a method but has arguments")));
            }
            let found = map.entries.borrow().get(name).cloned();
            return Ok(match (found, map.kind) {
                (Some(v), MapKind::String) => (v, false),
                (Some(v), _) => (v, true),
                (None, MapKind::String) => (Value::str(""), false),
                (None, _) => (Value::Nil, true),
            });
        }
        Err(self.error(&format!("can't evaluate field {name} in type {static_type}")))
    }

    fn eval_function(
        &mut self,
        dot: &Dot,
        ident: &'t Arg,
        name: &str,
        cmd: &'t Command,
        args: &'t [Arg],
        fin: Option<Value>,
    ) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Arg(ident));
        if let Some(result) = self.eval_builtin(dot, name, cmd, args, &fin)? {
            return Ok((result, false));
        }
        let funcs = self.env.funcs;
        let Some(function) = funcs.get(name) else {
            return Err(self.error(&format!("{} is not a defined function", go_quote(name))));
        };
        let argv = self.eval_args(dot, name, function, args, fin)?;
        let mut ctx = Running { env: self.env };
        match (function.imp)(&mut ctx, argv).and_then(charge_result) {
            Ok(v) => Ok((v, false)),
            Err(e) => {
                self.at(NodeRef::Command(cmd));
                let cause = match e.wrapped {
                    Some(w) => w,
                    None => GoError::plain(e.message.clone()),
                };
                let message = format!("error calling {name}: {}", cause.text);
                Err(self.error_wrapping(&message, Some(cause)))
            }
        }
    }

    /// Evaluates call arguments against the function's parameter types, as `evalCall` does.
    fn eval_args(&mut self, dot: &Dot, name: &str, function: &Function, args: &'t [Arg], fin: Option<Value>) -> ExecResult<Vec<Value>> {
        let args = &args[1..];
        let num_in = args.len() + fin.is_some() as usize;
        let fixed = function.params.len();
        if function.variadic.is_some() {
            if num_in < fixed {
                return Err(self.error(&format!("wrong number of args for {name}: want at least {fixed} got {}", args.len())));
            }
        } else if num_in != fixed {
            return Err(self.error(&format!("wrong number of args for {name}: want {fixed} got {num_in}")));
        }
        let mut argv = Vec::with_capacity(num_in);
        for (i, arg) in args.iter().enumerate() {
            let param = if i < fixed { function.params[i] } else { function.variadic.unwrap_or(Param::Any) };
            argv.push(self.eval_arg(dot, param, arg)?);
        }
        if let Some(f) = fin {
            let param = if num_in - 1 < fixed { function.params[num_in - 1] } else { function.variadic.unwrap_or(Param::Any) };
            argv.push(self.validate_type(f, false, param)?);
        }
        Ok(argv)
    }

    /// One argument against one parameter type (`evalArg`).
    fn eval_arg(&mut self, dot: &Dot, param: Param, arg: &'t Arg) -> ExecResult<Value> {
        self.at(NodeRef::Arg(arg));
        match arg {
            Arg::Dot { .. } => return self.validate_type(dot.value.clone(), dot.boxed, param),
            Arg::Nil { .. } => {
                return if matches!(param, Param::Any | Param::Reflect | Param::Map | Param::List) {
                    Ok(if param == Param::Reflect { Value::Invalid } else { Value::Nil })
                } else {
                    Err(self.error(&format!("cannot assign nil to {}", param.go_type())))
                };
            }
            Arg::Field { .. } | Arg::Variable { .. } | Arg::Pipe(_) | Arg::Identifier { .. } | Arg::Chain { .. } => {
                let (v, boxed) = self.eval_arg_any(dot, arg)?;
                return self.validate_type(v, boxed, param);
            }
            _ => {}
        }
        match param {
            Param::Bool => match arg {
                Arg::Bool { value, .. } => Ok(Value::Bool(*value)),
                _ => Err(self.error(&format!("expected bool; found {}", NodeRef::Arg(arg)))),
            },
            Param::Float => match arg {
                Arg::Number { number, .. } if number.is_float => Ok(Value::Float(number.float)),
                _ => Err(self.error(&format!("expected float; found {}", NodeRef::Arg(arg)))),
            },
            Param::Int => match arg {
                Arg::Number { number, .. } if number.is_int => Ok(Value::Int(number.int)),
                Arg::Number { number, .. } if number.is_uint => Err(self.error(&format!("overflow: {}", number.float))),
                _ => Err(self.error(&format!("expected integer; found {}", NodeRef::Arg(arg)))),
            },
            Param::Str => match arg {
                Arg::String { text, .. } => Ok(Value::String(text.clone())),
                _ => Err(self.error(&format!("expected string; found {}", NodeRef::Arg(arg)))),
            },
            Param::Any | Param::Reflect => Ok(self.eval_arg_any(dot, arg)?.0),
            Param::Map | Param::List | Param::Time | Param::Struct(_) => {
                Err(self.error(&format!("can't handle {} for arg of type {}", NodeRef::Arg(arg), param.go_type())))
            }
        }
    }

    /// `evalEmptyInterface`: an argument with no type constraint.
    fn eval_arg_any(&mut self, dot: &Dot, arg: &'t Arg) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Arg(arg));
        match arg {
            Arg::Bool { value, .. } => Ok((Value::Bool(*value), false)),
            Arg::Dot { .. } => Ok((dot.value.clone(), dot.boxed)),
            Arg::Field { ident, .. } => {
                self.eval_field_chain(dot, dot.value.clone(), dot.boxed, arg, ident, std::slice::from_ref(arg), None)
            }
            Arg::Identifier { name, .. } => {
                // A function used as an argument is called with no arguments.
                let cmd_args = std::slice::from_ref(arg);
                self.eval_function_bare(dot, arg, name, cmd_args)
            }
            Arg::Nil { .. } => Ok((Value::Nil, true)),
            Arg::Number { text, number, .. } => self.ideal_constant(text, number).map(|v| (v, false)),
            Arg::String { text, .. } => Ok((Value::String(text.clone()), false)),
            Arg::Variable { ident, .. } => self.eval_variable(dot, arg, ident, std::slice::from_ref(arg), None),
            Arg::Pipe(pipe) => grow_stack(|| self.eval_pipeline(dot, pipe)),
            Arg::Chain { node, fields, .. } => self.eval_chain(dot, arg, node, fields, std::slice::from_ref(arg), None),
        }
    }

    fn eval_function_bare(&mut self, dot: &Dot, ident: &'t Arg, name: &str, args: &'t [Arg]) -> ExecResult<(Value, bool)> {
        self.at(NodeRef::Arg(ident));
        if matches!(name, "and" | "or" | "call") {
            return Err(self.error(&format!("wrong number of args for {name}: want at least 1 got 0")));
        }
        let Some(function) = self.env.funcs.get(name) else {
            return Err(self.error(&format!("{} is not a defined function", go_quote(name))));
        };
        let argv = self.eval_args(dot, name, function, args, None)?;
        let mut ctx = Running { env: self.env };
        match (function.imp)(&mut ctx, argv).and_then(charge_result) {
            Ok(v) => Ok((v, false)),
            Err(e) => {
                self.at(NodeRef::Arg(ident));
                let cause = e.wrapped.unwrap_or_else(|| GoError::plain(e.message.clone()));
                let message = format!("error calling {name}: {}", cause.text);
                Err(self.error_wrapping(&message, Some(cause)))
            }
        }
    }

    /// `validateType`: a computed value against a parameter type.
    fn validate_type(&self, value: Value, boxed: bool, param: Param) -> ExecResult<Value> {
        if matches!(value, Value::Invalid) {
            return match param {
                Param::Any | Param::Map | Param::List => Ok(Value::Nil),
                Param::Reflect => Ok(Value::Invalid),
                _ => Err(self.error(&format!("invalid value; expected {}", param.go_type()))),
            };
        }
        if param == Param::Reflect || param == Param::Any {
            return Ok(value);
        }
        let assignable = match (&value, param) {
            (Value::String(_), Param::Str) => true,
            (Value::Int(_), Param::Int) => true,
            (Value::Float(_), Param::Float) => true,
            (Value::Bool(_), Param::Bool) => true,
            (Value::Map(m), Param::Map) => m.kind != MapKind::String,
            (Value::List(l), Param::List) => l.kind == ListKind::Any,
            (Value::Object(o), Param::Time) => o.type_name() == "time.Time",
            (Value::Object(o), Param::Struct(name)) => o.type_name() == name,
            _ => false,
        };
        if assignable {
            return Ok(value);
        }
        let got = if matches!(value, Value::Nil) || (boxed && value.is_nil()) { "interface {}".to_string() } else { value.type_name() };
        Err(self.error(&format!("wrong type for value; expected {}; got {got}", param.go_type())))
    }

    /// `and`/`or` short-circuit and return the deciding operand; `call` names its callee.
    fn eval_builtin(&mut self, dot: &Dot, name: &str, cmd: &'t Command, args: &'t [Arg], fin: &Option<Value>) -> ExecResult<Option<Value>> {
        match name {
            "and" | "or" => {}
            "call" => {
                let operands = &args[1..];
                if operands.is_empty() && fin.is_none() {
                    return Err(self.error("wrong number of args for call: want at least 1 got 0"));
                }
                let callee = operands.first().map(|a| NodeRef::Arg(a).to_string()).unwrap_or_default();
                let value = match operands.first() {
                    Some(a) => self.eval_arg_any(dot, a)?.0,
                    None => fin.clone().unwrap_or(Value::Invalid),
                };
                self.at(NodeRef::Command(cmd));
                let message =
                    if value.is_nil() { "call of nil".to_string() } else { format!("non-function {callee} of type {}", value.type_name()) };
                return Err(self.error_wrapping(&format!("error calling call: {message}"), Some(GoError::plain(message))));
            }
            _ => return Ok(None),
        }
        let operands = &args[1..];
        let num_in = operands.len() + fin.is_some() as usize;
        if num_in < 1 {
            return Err(self.error(&format!("wrong number of args for {name}: want at least 1 got 0")));
        }
        let want = name == "or";
        let mut last = Value::Invalid;
        for arg in operands {
            let (v, _) = self.eval_arg_any(dot, arg)?;
            if v.truth() == want {
                return Ok(Some(v));
            }
            last = v;
        }
        if let Some(f) = fin {
            last = f.clone();
        }
        Ok(Some(last))
    }
}

/// Function results that are strings count against the render's byte budget.
fn charge_result(v: Value) -> Result<Value, FnError> {
    if let Value::String(s) = &v {
        charge_bytes(s.len())?;
    }
    Ok(v)
}

/// Runs `f` with at least 256 KiB of native stack left, growing the stack on the heap when
/// needed: Go allows 100000 nested `{{template}}` calls, far more than a thread's stack holds.
fn grow_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, f)
}

/// After each command Go digs a value out of its interface: a nil interface becomes no value.
fn unbox(v: Value) -> Value {
    match v {
        Value::Nil => Value::Invalid,
        other => other,
    }
}
