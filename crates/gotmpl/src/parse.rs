//! The text/template parser: control structures, `define`/`block`/`template`, declarations and
//! assignments with Go's variable scoping, pipelines and chains, with errors worded as Go words
//! them (`template: NAME:LINE: MESSAGE`).

use std::rc::Rc;

use super::lex::{lex, Item, ItemKind};
use super::node::{is_empty_tree, Arg, Branch, Command, Node, Number, Pipe};

/// One named template: a file's own body, or a `define`/`block`.
#[derive(Debug)]
pub struct Tree {
    pub name: String,
    /// The file the nodes were parsed from (error locations name it).
    pub parse_name: Rc<str>,
    pub text: Rc<str>,
    pub root: Vec<Node>,
}

impl Tree {
    /// `NAME:LINE:COL` of a byte offset, as Go's `ErrorContext` prints it (column 0-based).
    pub fn location(&self, pos: usize) -> String {
        let pos = pos.min(self.text.len());
        let before = &self.text[..pos];
        let line = 1 + before.matches('\n').count();
        let col = match before.rfind('\n') {
            Some(nl) => pos - (nl + 1),
            None => pos,
        };
        format!("{}:{line}:{col}", self.parse_name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Full Go text: `template: NAME:LINE: MESSAGE`.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parses `text` as template `name`. Returns every tree of the parse: the file's own body (named
/// `name`) and each `define`/`block`, in the order Go adds them to its set.
pub fn parse(name: &str, text: &str, has_function: &dyn Fn(&str) -> bool) -> Result<Vec<Tree>, ParseError> {
    let mut parser = Parser {
        items: lex(text),
        cursor: 0,
        furthest: 0,
        vars: vec!["$".into()],
        range_depth: 0,
        action_line: 0,
        has_function,
        name: Rc::from(name),
        text: Rc::from(text),
        set: Vec::new(),
        depth: 0,
    };
    let mut root = Vec::new();
    parser.parse_top(&mut root)?;
    let main = Tree { name: name.to_string(), parse_name: parser.name.clone(), text: parser.text.clone(), root };
    parser.add(main)?;
    Ok(parser.set)
}

struct Parser<'f> {
    items: Vec<Item>,
    cursor: usize,
    /// Index of the newest item read; Go reports its line in parse errors.
    furthest: usize,
    vars: Vec<String>,
    range_depth: usize,
    action_line: usize,
    has_function: &'f dyn Fn(&str) -> bool,
    name: Rc<str>,
    text: Rc<str>,
    set: Vec<Tree>,
    /// Nesting of pipelines and control structures (Go's `maxStackDepth`).
    depth: usize,
}

/// Go's parser refuses deeper nesting than this.
const MAX_DEPTH: usize = 10_000;

type PResult<T> = Result<T, ParseError>;

/// What `textOrAction` produced.
enum Parsed {
    Node(Node),
    End,
    /// `{{else}}` at a position; `chained` when `if`/`with` follows (`else if`).
    Else {
        chained: bool,
    },
}

impl Parsed {
    fn describe(&self) -> &'static str {
        match self {
            Parsed::End => "{{end}}",
            Parsed::Else { .. } => "{{else}}",
            _ => "node",
        }
    }
}

impl Parser<'_> {
    fn item(&mut self, index: usize) -> &Item {
        let index = index.min(self.items.len() - 1);
        self.furthest = self.furthest.max(index);
        &self.items[index]
    }

    fn next(&mut self) -> Item {
        let item = self.item(self.cursor).clone();
        self.cursor += 1;
        item
    }

    fn peek(&mut self) -> Item {
        self.item(self.cursor).clone()
    }

    fn backup(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let item = self.next();
            if item.kind != ItemKind::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn error_msg(&self, message: &str) -> ParseError {
        let line = self.items[self.furthest.min(self.items.len() - 1)].line;
        ParseError { message: format!("template: {}:{line}: {message}", self.name) }
    }

    fn error<T>(&self, message: &str) -> PResult<T> {
        Err(self.error_msg(message))
    }

    fn unexpected<T>(&self, item: &Item, context: &str) -> PResult<T> {
        if item.kind == ItemKind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != item.line {
                extra = format!(" in action started at {}:{}", self.name, self.action_line);
                if item.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.error(&format!("{}{extra}", item.describe()));
        }
        self.error(&format!("unexpected {} in {context}", item.describe()))
    }

    fn expect(&mut self, kind: ItemKind, context: &str) -> PResult<Item> {
        let item = self.next_non_space();
        if item.kind != kind {
            return self.unexpected(&item, context);
        }
        Ok(item)
    }

    /// Go's `Tree.add` within one parse: a second non-empty definition is an error; an empty
    /// one never replaces a non-empty one.
    fn add(&mut self, tree: Tree) -> PResult<()> {
        match self.set.iter().position(|t| t.name == tree.name) {
            None => self.set.push(tree),
            Some(i) if is_empty_tree(&self.set[i].root) => self.set[i] = tree,
            Some(_) if !is_empty_tree(&tree.root) => {
                return self.error(&format!("template: multiple definition of template {}", super::fmt::go_quote(&tree.name)));
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn unquote(&self, quoted: &str) -> PResult<String> {
        unquote(quoted).ok_or_else(|| self.error_msg("invalid syntax"))
    }

    fn parse_top(&mut self, root: &mut Vec<Node>) -> PResult<()> {
        while self.peek().kind != ItemKind::Eof {
            if self.peek().kind == ItemKind::LeftDelim {
                let delim_at = self.cursor;
                self.next();
                if self.next_non_space().kind == ItemKind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.cursor = delim_at;
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                p @ (Parsed::End | Parsed::Else { .. }) => return self.error(&format!("unexpected {}", p.describe())),
            }
        }
        Ok(())
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let name_item = self.next_non_space();
        if !matches!(name_item.kind, ItemKind::String | ItemKind::RawString) {
            return self.unexpected(&name_item, context);
        }
        let name = self.unquote(&name_item.val)?;
        self.expect(ItemKind::RightDelim, context)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (root, end) = self.item_list()?;
        self.vars = saved_vars;
        if !matches!(end, Parsed::End) {
            return self.error(&format!("unexpected {} in {context}", end.describe()));
        }
        let tree = Tree { name, parse_name: self.name.clone(), text: self.text.clone(), root };
        self.add(tree)
    }

    /// Nodes up to `{{end}}` or `{{else}}` (returned as the second value).
    fn item_list(&mut self) -> PResult<(Vec<Node>, Parsed)> {
        let mut list = Vec::new();
        while self.peek_non_space().kind != ItemKind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
        self.error("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            ItemKind::Text => Ok(Parsed::Node(Node::Text(Rc::from(token.val.as_str())))),
            ItemKind::LeftDelim => {
                self.action_line = token.line;
                let result = self.action();
                self.action_line = 0;
                result
            }
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            ItemKind::Block => return self.block_control(),
            ItemKind::Break | ItemKind::Continue => {
                let name = if token.kind == ItemKind::Break { "break" } else { "continue" };
                let next = self.next_non_space();
                if next.kind != ItemKind::RightDelim {
                    return self.unexpected(&next, &format!("{{{{{name}}}}}"));
                }
                if self.range_depth == 0 {
                    return self.error(&format!("{{{{{name}}}}} outside {{{{range}}}}"));
                }
                return Ok(Parsed::Node(if name == "break" { Node::Break { pos: token.pos } } else { Node::Continue { pos: token.pos } }));
            }
            ItemKind::Else => {
                let peek = self.peek_non_space();
                if matches!(peek.kind, ItemKind::If | ItemKind::With) {
                    return Ok(Parsed::Else { chained: true });
                }
                self.expect(ItemKind::RightDelim, "else")?;
                return Ok(Parsed::Else { chained: false });
            }
            ItemKind::End => {
                self.expect(ItemKind::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemKind::If => return self.branch("if").map(|b| Parsed::Node(Node::If(b))),
            ItemKind::Range => return self.branch("range").map(|b| Parsed::Node(Node::Range(b))),
            ItemKind::With => return self.branch("with").map(|b| Parsed::Node(Node::With(b))),
            ItemKind::Template => return self.template_control(),
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pipe = self.pipeline("command", ItemKind::RightDelim)?;
        Ok(Parsed::Node(Node::Action { pos: token.pos, pipe }))
    }

    /// `if`, `with` and `range`, including `else if` / `else with` chains.
    fn branch(&mut self, context: &str) -> PResult<Branch> {
        self.enter()?;
        let saved = self.vars.len();
        let result = stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || self.branch_inner(context));
        self.vars.truncate(saved);
        self.depth -= 1;
        result
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return self.error("max nesting depth exceeded");
        }
        self.depth += 1;
        Ok(())
    }

    fn branch_inner(&mut self, context: &str) -> PResult<Branch> {
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if context == "range" {
            self.range_depth -= 1;
        }
        let (list, next) = listed?;
        let mut else_list = None;
        if let Parsed::Else { chained, .. } = next {
            let peek = self.peek().kind;
            if chained && context == "if" && peek == ItemKind::If {
                self.next();
                else_list = Some(vec![Node::If(self.branch("if")?)]);
            } else if chained && context == "with" && peek == ItemKind::With {
                self.next();
                else_list = Some(vec![Node::With(self.branch("with")?)]);
            } else {
                if chained {
                    // `{{else if}}` inside range: the if/with token is still pending; Go then
                    // expects a right delimiter after else.
                    self.expect(ItemKind::RightDelim, "else")?;
                }
                let (list, end) = self.item_list()?;
                if !matches!(end, Parsed::End) {
                    return self.error(&format!("expected end; found {}", end.describe()));
                }
                else_list = Some(list);
            }
        }
        Ok(Branch { pos: pipe.pos, pipe, list, else_list })
    }

    fn template_control(&mut self) -> PResult<Parsed> {
        let context = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = if self.next_non_space().kind != ItemKind::RightDelim {
            self.backup();
            Some(self.pipeline(context, ItemKind::RightDelim)?)
        } else {
            None
        };
        Ok(Parsed::Node(Node::Template { pos: token.pos, name, pipe }))
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.kind {
            ItemKind::String | ItemKind::RawString => self.unquote(&token.val),
            _ => self.unexpected(token, context),
        }
    }

    fn block_control(&mut self) -> PResult<Parsed> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let saved_depth = std::mem::replace(&mut self.range_depth, 0);
        let listed = self.item_list();
        self.vars = saved_vars;
        self.range_depth = saved_depth;
        let (root, end) = listed?;
        if !matches!(end, Parsed::End) {
            return self.error(&format!("unexpected {} in {context}", end.describe()));
        }
        let tree = Tree { name: name.clone(), parse_name: self.name.clone(), text: self.text.clone(), root };
        self.add(tree)?;
        Ok(Parsed::Node(Node::Template { pos: token.pos, name, pipe: Some(pipe) }))
    }

    fn pipeline(&mut self, context: &str, end: ItemKind) -> PResult<Pipe> {
        let token = self.peek_non_space();
        let mut pipe = Pipe { pos: token.pos, is_assign: false, decl: Vec::new(), cmds: Vec::new() };
        'decls: loop {
            let v = self.peek_non_space();
            if v.kind != ItemKind::Variable {
                break;
            }
            let var_at = self.cursor;
            self.next();
            let after_var = self.peek();
            let next = self.peek_non_space();
            match next.kind {
                ItemKind::Assign | ItemKind::Declare => {
                    pipe.is_assign = next.kind == ItemKind::Assign;
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val.clone());
                    break 'decls;
                }
                ItemKind::Char if next.val == "," => {
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val.clone());
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            ItemKind::Variable | ItemKind::RightDelim | ItemKind::RightParen => continue 'decls,
                            _ => return self.error("range can only initialize variables"),
                        }
                    }
                    return self.error(&format!("too many declarations in {context}"));
                }
                _ => {
                    let _ = after_var;
                    self.cursor = var_at;
                    break 'decls;
                }
            }
        }
        loop {
            let token = self.next_non_space();
            if token.kind == end {
                self.check_pipeline(&pipe, context)?;
                return Ok(pipe);
            }
            match token.kind {
                ItemKind::Bool
                | ItemKind::CharConstant
                | ItemKind::Complex
                | ItemKind::Dot
                | ItemKind::Field
                | ItemKind::Identifier
                | ItemKind::Number
                | ItemKind::Nil
                | ItemKind::RawString
                | ItemKind::String
                | ItemKind::Variable
                | ItemKind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.error(&format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(c.args[0], Arg::Bool { .. } | Arg::Dot { .. } | Arg::Nil { .. } | Arg::Number { .. } | Arg::String { .. }) {
                return self.error(&format!("non executable command in pipeline stage {}", i + 1));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut cmd = Command { pos, args: Vec::new() };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let token = self.next();
            match token.kind {
                ItemKind::Space => continue,
                ItemKind::RightDelim | ItemKind::RightParen => self.backup(),
                ItemKind::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return self.error("empty command");
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else { return Ok(None) };
        if self.peek().kind != ItemKind::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().kind == ItemKind::Field {
            let f = self.next();
            fields.push(f.val[1..].to_string());
        }
        Ok(Some(match node {
            Arg::Field { mut ident, .. } => {
                ident.extend(fields);
                Arg::Field { pos: chain_pos, ident }
            }
            Arg::Variable { mut ident, .. } => {
                ident.extend(fields);
                Arg::Variable { pos: chain_pos, ident }
            }
            Arg::Bool { .. } | Arg::String { .. } | Arg::Number { .. } | Arg::Nil { .. } | Arg::Dot { .. } => {
                let printed = super::node::NodeRef::Arg(&node).to_string();
                return self.error(&format!("unexpected . after term {}", super::fmt::go_quote(&printed)));
            }
            other => Arg::Chain { pos: chain_pos, node: Box::new(other), fields },
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        let pos = token.pos;
        Ok(Some(match token.kind {
            ItemKind::Identifier => {
                if !(self.has_function)(&token.val) {
                    return self.error(&format!("function {} not defined", super::fmt::go_quote(&token.val)));
                }
                Arg::Identifier { pos, name: token.val }
            }
            ItemKind::Dot => Arg::Dot { pos },
            ItemKind::Nil => Arg::Nil { pos },
            ItemKind::Variable => {
                let ident: Vec<String> = token.val.split('.').map(str::to_string).collect();
                if !self.vars.iter().any(|v| *v == ident[0]) {
                    return self.error(&format!("undefined variable {}", super::fmt::go_quote(&ident[0])));
                }
                Arg::Variable { pos, ident }
            }
            ItemKind::Field => Arg::Field { pos, ident: vec![token.val[1..].to_string()] },
            ItemKind::Bool => Arg::Bool { pos, value: token.val == "true" },
            ItemKind::CharConstant | ItemKind::Complex | ItemKind::Number => {
                let number = parse_number(&token.val, token.kind).map_err(|e| self.error_msg(&e.to_string()))?;
                Arg::Number { pos, text: token.val, number }
            }
            ItemKind::LeftParen => {
                self.enter()?;
                let pipe =
                    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || self.pipeline("parenthesized pipeline", ItemKind::RightParen));
                self.depth -= 1;
                Arg::Pipe(Box::new(pipe?))
            }
            ItemKind::String | ItemKind::RawString => {
                let text = self.unquote(&token.val)?;
                Arg::String { pos, quoted: token.val, text: Rc::from(text) }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

/// Go's `strconv.Unquote` for "…" and `…` literals.
pub fn unquote(quoted: &str) -> Option<String> {
    if let Some(raw) = quoted.strip_prefix('`').and_then(|q| q.strip_suffix('`')) {
        return Some(raw.replace('\r', ""));
    }
    let body = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let mut pending_bytes: Vec<u8> = Vec::new();
    let flush = |out: &mut String, bytes: &mut Vec<u8>| {
        if !bytes.is_empty() {
            out.push_str(&String::from_utf8_lossy(bytes));
            bytes.clear();
        }
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut out, &mut pending_bytes);
            if c == '"' || c == '\n' {
                return None;
            }
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0C'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0B'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            'x' => {
                let hex: String = (0..2).filter_map(|_| chars.next()).collect();
                pending_bytes.push(u8::from_str_radix(&hex, 16).ok()?);
                continue;
            }
            '0'..='7' => {
                let mut oct = e.to_string();
                for _ in 0..2 {
                    oct.push(chars.next()?);
                }
                let v = u32::from_str_radix(&oct, 8).ok()?;
                if v > 255 {
                    return None;
                }
                pending_bytes.push(v as u8);
                continue;
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let hex: String = (0..n).filter_map(|_| chars.next()).collect();
                if hex.len() != n {
                    return None;
                }
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
        flush(&mut out, &mut pending_bytes);
    }
    flush(&mut out, &mut pending_bytes);
    Some(out)
}

/// Why a number literal in a template is not one text/template accepts (Go's texts); each
/// variant carries the literal as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("malformed character constant: {0}")]
    MalformedChar(String),
    /// Go's parser reads complex literals; this executor has no complex values.
    #[error("complex numbers are not supported: {0}")]
    Complex(String),
    /// An integer literal outside every integer type (shown quoted, as Go does).
    #[error("integer overflow: {}", super::fmt::go_quote(.0))]
    IntegerOverflow(String),
    #[error("illegal number syntax: {}", super::fmt::go_quote(.0))]
    IllegalSyntax(String),
}

/// Go's `parse.newNumber`: which of int/uint/float/complex a literal can be.
pub fn parse_number(text: &str, kind: ItemKind) -> Result<Number, NumberError> {
    let mut n = Number { is_int: false, is_uint: false, is_float: false, is_complex: false, int: 0, uint: 0, float: 0.0 };
    if kind == ItemKind::CharConstant {
        let inner = &text[1..text.len() - 1];
        let c = unquote_char(inner).ok_or_else(|| NumberError::MalformedChar(text.to_string()))?;
        let v = c as i64;
        n.is_int = true;
        n.int = v;
        n.is_uint = true;
        n.uint = v as u64;
        n.is_float = true;
        n.float = v as f64;
        return Ok(n);
    }
    if kind == ItemKind::Complex {
        return Err(NumberError::Complex(text.to_string()));
    }
    if let Some(imag) = text.strip_suffix('i') {
        if go_parse_float(imag).is_some() {
            return Err(NumberError::Complex(text.to_string()));
        }
    }
    if let Some(u) = go_parse_int(text).filter(|(neg, _)| !neg).map(|(_, m)| m) {
        if u <= u64::MAX as u128 {
            n.is_uint = true;
            n.uint = u as u64;
        }
    }
    if let Some((neg, m)) = go_parse_int(text) {
        let signed: i128 = if neg { -(m as i128) } else { m as i128 };
        if signed >= i64::MIN as i128 && signed <= i64::MAX as i128 {
            n.is_int = true;
            n.int = signed as i64;
            if n.int == 0 {
                n.is_uint = true;
                n.uint = 0;
            }
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float = n.int as f64;
    } else if n.is_uint {
        n.is_float = true;
        n.float = n.uint as f64;
    } else if let Some(f) = go_parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(NumberError::IntegerOverflow(text.to_string()));
        }
        n.is_float = true;
        n.float = f;
        if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
            n.is_int = true;
            n.int = f as i64;
        }
        if f.fract() == 0.0 && f >= 0.0 && f < u64::MAX as f64 {
            n.is_uint = true;
            n.uint = f as u64;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(NumberError::IllegalSyntax(text.to_string()));
    }
    Ok(n)
}

fn unquote_char(inner: &str) -> Option<char> {
    let mut chars = inner.chars();
    let first = chars.next()?;
    if first != '\\' {
        return if chars.next().is_none() { Some(first) } else { None };
    }
    let decoded = unquote(&format!("\"{}\"", inner.replace('"', "\\\"")))?;
    if inner == "\\'" {
        return Some('\'');
    }
    let mut it = decoded.chars();
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

/// `strconv.ParseInt(s, 0, …)` magnitude and sign: base prefixes, leading-0 octal, `_` separators.
fn go_parse_int(text: &str) -> Option<(bool, u128)> {
    let (neg, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let (base, digits, prefixed) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string(), true)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string(), true)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string(), true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string(), true)
    } else {
        (10, lower.clone(), false)
    };
    if !underscores_ok(&lower, prefixed) {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() {
        return if base == 8 && !lower.starts_with("0o") { Some((neg, 0)) } else { None };
    }
    u128::from_str_radix(&clean, base).ok().filter(|v| *v <= u64::MAX as u128 + 1).map(|v| (neg, v))
}

/// Go's `underscoreOK`: underscores only between digits (or after a base prefix).
fn underscores_ok(s: &str, prefixed: bool) -> bool {
    if !s.contains('_') {
        return true;
    }
    let mut saw = '^';
    let bytes: Vec<char> = s.chars().collect();
    let mut i = 0;
    if prefixed && bytes.len() >= 2 && bytes[0] == '0' && matches!(bytes[1], 'x' | 'o' | 'b') {
        i = 2;
        saw = '0';
    } else if prefixed && !bytes.is_empty() && bytes[0] == '0' {
        saw = '0';
        i = 1;
    }
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_hexdigit() {
            saw = '0';
        } else if c == '_' {
            if saw != '0' {
                return false;
            }
            saw = '_';
        } else {
            if saw == '_' {
                return false;
            }
            saw = '!';
        }
        i += 1;
    }
    saw != '_'
}

/// `strconv.ParseFloat(s, 64)` for decimal forms (hex floats are rare in templates).
pub fn go_parse_float(text: &str) -> Option<f64> {
    if text.is_empty() || text.contains("__") || text.starts_with('_') || text.ends_with('_') {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if body.starts_with("0x") {
        return parse_hex_float(&lower);
    }
    if lower.contains('_') {
        return None;
    }
    if !body.chars().next().is_some_and(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    lower.parse::<f64>().ok().filter(|f| f.is_finite())
}

fn parse_hex_float(lower: &str) -> Option<f64> {
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, lower.trim_start_matches('+')),
    };
    let body = body.strip_prefix("0x")?.replace('_', "");
    let (mantissa, exp) = match body.split_once('p') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().ok()?),
        None => (body.clone(), 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
    let mut value = 0f64;
    for c in int_part.chars() {
        value = value * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let v = value * 2f64.powi(exp);
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn funcs(name: &str) -> bool {
        matches!(name, "printf" | "eq" | "include" | "upper")
    }

    fn err(text: &str) -> String {
        parse("t", text, &funcs).unwrap_err().message
    }

    #[test]
    fn parse_errors_are_worded_as_go() {
        assert_eq!(err("a\n{{ if true }}"), "template: t:2: unexpected EOF");
        assert_eq!(err("a\n b {{ .x "), "template: t:2: unclosed action");
        assert_eq!(err("a\n{{ nofunc 1 }}"), "template: t:2: function \"nofunc\" not defined");
        assert_eq!(err("{{ end }}"), "template: t:1: unexpected {{end}}");
        assert_eq!(err("{{ $x }}"), "template: t:1: undefined variable \"$x\"");
        assert_eq!(err("{{ break }}"), "template: t:1: {{break}} outside {{range}}");
        assert_eq!(err("{{ 1 | 2 }}"), "template: t:1: non executable command in pipeline stage 2");
        assert_eq!(err("{{ }}"), "template: t:1: missing value for command");
    }

    #[test]
    fn defines_and_blocks_join_the_set() {
        let trees = parse("f", "{{ define \"a\" }}A{{ end }}x{{ block \"b\" . }}B{{ end }}", &funcs).unwrap();
        let names: Vec<&str> = trees.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "f"]);
        assert!(parse("f", "{{define \"a\"}}1{{end}}{{define \"a\"}}2{{end}}", &funcs)
            .unwrap_err()
            .message
            .contains("multiple definition"));
    }

    #[test]
    fn numbers() {
        let n = parse_number("0x10", ItemKind::Number).unwrap();
        assert!(n.is_int && n.int == 16);
        let n = parse_number("1e3", ItemKind::Number).unwrap();
        assert!(n.is_float && n.is_int && n.int == 1000);
        let n = parse_number("1_000", ItemKind::Number).unwrap();
        assert_eq!(n.int, 1000);
        let n = parse_number("0o17", ItemKind::Number).unwrap();
        assert_eq!(n.int, 15);
        let n = parse_number("'a'", ItemKind::CharConstant).unwrap();
        assert_eq!(n.int, 97);
        assert!(parse_number("99999999999999999999", ItemKind::Number).is_err());
    }

    #[test]
    fn unquotes_go_strings() {
        assert_eq!(unquote("\"a\\tb\\u00e9\\x41\"").unwrap(), "a\tbéA");
        assert_eq!(unquote("`raw\\n`").unwrap(), "raw\\n");
    }
}
