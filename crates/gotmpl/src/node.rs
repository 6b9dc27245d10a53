//! The parse tree of a template, with Go's positions and `String()` forms: execution errors
//! quote nodes exactly as text/template prints them (`<eq .Values.a 1>`, `{{template "x" .}}`).

use std::fmt::{self, Write};
use std::rc::Rc;

/// Byte offset in the template text.
pub type Pos = usize;

#[derive(Debug)]
pub enum Node {
    Text(Rc<str>),
    Action { pos: Pos, pipe: Pipe },
    If(Branch),
    With(Branch),
    Range(Branch),
    Template { pos: Pos, name: String, pipe: Option<Pipe> },
    Break { pos: Pos },
    Continue { pos: Pos },
}

/// The shared shape of `if`, `with` and `range`.
#[derive(Debug)]
pub struct Branch {
    pub pos: Pos,
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Debug)]
pub struct Pipe {
    pub pos: Pos,
    pub is_assign: bool,
    pub decl: Vec<String>,
    pub cmds: Vec<Command>,
}

#[derive(Debug)]
pub struct Command {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone, Copy)]
pub struct Number {
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub is_complex: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
}

#[derive(Debug)]
pub enum Arg {
    Field { pos: Pos, ident: Vec<String> },
    Variable { pos: Pos, ident: Vec<String> },
    Dot { pos: Pos },
    Nil { pos: Pos },
    Bool { pos: Pos, value: bool },
    Number { pos: Pos, text: String, number: Number },
    String { pos: Pos, quoted: String, text: Rc<str> },
    Identifier { pos: Pos, name: String },
    Chain { pos: Pos, node: Box<Arg>, fields: Vec<String> },
    Pipe(Box<Pipe>),
}

impl Arg {
    pub fn pos(&self) -> Pos {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Chain { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

/// A node that execution can point at in an error.
#[derive(Clone, Copy)]
pub enum NodeRef<'a> {
    Arg(&'a Arg),
    Command(&'a Command),
    Pipe(&'a Pipe),
    Node(&'a Node),
}

impl NodeRef<'_> {
    pub fn pos(&self) -> Pos {
        match self {
            NodeRef::Arg(a) => a.pos(),
            NodeRef::Command(c) => c.pos,
            NodeRef::Pipe(p) => p.pos,
            NodeRef::Node(n) => match n {
                Node::Text(_) => 0,
                Node::Action { pos, .. } | Node::Template { pos, .. } | Node::Break { pos } | Node::Continue { pos } => *pos,
                Node::If(b) | Node::With(b) | Node::Range(b) => b.pos,
            },
        }
    }
}

impl fmt::Display for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        match self {
            NodeRef::Arg(a) => write_arg(&mut s, a),
            NodeRef::Command(c) => write_command(&mut s, c),
            NodeRef::Pipe(p) => write_pipe(&mut s, p),
            NodeRef::Node(n) => write_node(&mut s, n),
        }
        f.write_str(&s)
    }
}

fn write_list(s: &mut String, list: &[Node]) {
    for n in list {
        write_node(s, n);
    }
}

fn write_node(s: &mut String, n: &Node) {
    match n {
        Node::Text(t) => s.push_str(t),
        Node::Action { pipe, .. } => {
            s.push_str("{{");
            write_pipe(s, pipe);
            s.push_str("}}");
        }
        Node::If(b) => write_branch(s, "if", b),
        Node::With(b) => write_branch(s, "with", b),
        Node::Range(b) => write_branch(s, "range", b),
        Node::Template { name, pipe, .. } => {
            let _ = write!(s, "{{{{template {}", super::fmt::go_quote(name));
            if let Some(p) = pipe {
                s.push(' ');
                write_pipe(s, p);
            }
            s.push_str("}}");
        }
        Node::Break { .. } => s.push_str("{{break}}"),
        Node::Continue { .. } => s.push_str("{{continue}}"),
    }
}

fn write_branch(s: &mut String, name: &str, b: &Branch) {
    let _ = write!(s, "{{{{{name} ");
    write_pipe(s, &b.pipe);
    s.push_str("}}");
    write_list(s, &b.list);
    if let Some(e) = &b.else_list {
        s.push_str("{{else}}");
        write_list(s, e);
    }
    s.push_str("{{end}}");
}

fn write_pipe(s: &mut String, p: &Pipe) {
    if !p.decl.is_empty() {
        s.push_str(&p.decl.join(", "));
        s.push_str(if p.is_assign { " = " } else { " := " });
    }
    for (i, c) in p.cmds.iter().enumerate() {
        if i > 0 {
            s.push_str(" | ");
        }
        write_command(s, c);
    }
}

fn write_command(s: &mut String, c: &Command) {
    for (i, a) in c.args.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        if let Arg::Pipe(p) = a {
            s.push('(');
            write_pipe(s, p);
            s.push(')');
        } else {
            write_arg(s, a);
        }
    }
}

fn write_arg(s: &mut String, a: &Arg) {
    match a {
        Arg::Field { ident, .. } => {
            for i in ident {
                s.push('.');
                s.push_str(i);
            }
        }
        Arg::Variable { ident, .. } => s.push_str(&ident.join(".")),
        Arg::Dot { .. } => s.push('.'),
        Arg::Nil { .. } => s.push_str("nil"),
        Arg::Bool { value, .. } => s.push_str(if *value { "true" } else { "false" }),
        Arg::Number { text, .. } => s.push_str(text),
        Arg::String { quoted, .. } => s.push_str(quoted),
        Arg::Identifier { name, .. } => s.push_str(name),
        Arg::Chain { node, fields, .. } => {
            if let Arg::Pipe(p) = node.as_ref() {
                s.push('(');
                write_pipe(s, p);
                s.push(')');
            } else {
                write_arg(s, node);
            }
            for f in fields {
                s.push('.');
                s.push_str(f);
            }
        }
        Arg::Pipe(p) => write_pipe(s, p),
    }
}

/// True for a list that prints nothing: whitespace text only (Go's `IsEmptyTree`).
pub fn is_empty_tree(list: &[Node]) -> bool {
    list.iter().all(|n| matches!(n, Node::Text(t) if t.trim_matches([' ', '\t', '\r', '\n', '\x0B', '\x0C']).is_empty()))
}
