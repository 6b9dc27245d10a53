//! The text/template lexer: text, `{{ }}` actions with `{{- `/` -}}` trim markers, comments,
//! strings, raw strings, character constants, every Go number form, and newlines inside
//! actions. Errors become an `Error` item, as in Go, so the parser words them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords (Go orders them after itemKeyword; `String()` prints them as <word>).
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl ItemKind {
    pub fn is_keyword(self) -> bool {
        matches!(
            self,
            ItemKind::Block
                | ItemKind::Break
                | ItemKind::Continue
                | ItemKind::Dot
                | ItemKind::Define
                | ItemKind::Else
                | ItemKind::End
                | ItemKind::If
                | ItemKind::Nil
                | ItemKind::Range
                | ItemKind::Template
                | ItemKind::With
        )
    }
}

#[derive(Debug, Clone)]
pub struct Item {
    pub kind: ItemKind,
    /// Byte offset in the template text.
    pub pos: usize,
    pub val: String,
    /// 1-based line where the item starts.
    pub line: usize,
}

impl Item {
    /// Go's `item.String()`, used in "unexpected X in Y" errors.
    pub fn describe(&self) -> String {
        match self.kind {
            ItemKind::Eof => "EOF".into(),
            ItemKind::Error => self.val.clone(),
            k if k.is_keyword() => format!("<{}>", self.val),
            _ => {
                if self.val.chars().count() > 10 {
                    let head: String = self.val.chars().take(10).collect();
                    format!("{}...", super::fmt::go_quote(&head))
                } else {
                    super::fmt::go_quote(&self.val)
                }
            }
        }
    }
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

pub struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    items: Vec<Item>,
    paren_depth: i32,
    /// Line numbers are computed from offsets; this caches the last count for speed.
    line_cache: (usize, usize),
}

/// Lexes the whole input; the last item is `Eof` or `Error`.
pub fn lex(input: &str) -> Vec<Item> {
    let mut lexer = Lexer { input, pos: 0, start: 0, items: Vec::new(), paren_depth: 0, line_cache: (0, 1) };
    lexer.run();
    lexer.items
}

impl<'a> Lexer<'a> {
    fn line_at(&mut self, pos: usize) -> usize {
        let (cached_pos, cached_line) = self.line_cache;
        let line = if pos >= cached_pos {
            cached_line + memchr::memchr_iter(b'\n', &self.input.as_bytes()[cached_pos..pos]).count()
        } else {
            1 + memchr::memchr_iter(b'\n', &self.input.as_bytes()[..pos]).count()
        };
        self.line_cache = (pos, line);
        line
    }

    fn emit(&mut self, kind: ItemKind) {
        let val = self.input[self.start..self.pos].to_string();
        self.emit_val(kind, val);
    }

    fn emit_val(&mut self, kind: ItemKind, val: String) {
        let line = self.line_at(self.start);
        self.items.push(Item { kind, pos: self.start, val, line });
        self.start = self.pos;
    }

    fn error(&mut self, message: String) {
        let line = self.line_at(self.start);
        self.items.push(Item { kind: ItemKind::Error, pos: self.start, val: message, line });
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn run(&mut self) {
        // Each state returns whether lexing continues.
        let mut in_action = false;
        loop {
            let go_on = if in_action { self.inside_action(&mut in_action) } else { self.text(&mut in_action) };
            if !go_on {
                return;
            }
        }
    }

    /// Text up to the next left delimiter, honouring a `{{- ` trim marker.
    fn text(&mut self, in_action: &mut bool) -> bool {
        match memchr::memmem::find(self.rest().as_bytes(), LEFT.as_bytes()) {
            Some(offset) => {
                let delim_at = self.pos + offset;
                let after = &self.input[delim_at + LEFT.len()..];
                let trim = has_left_trim_marker(after);
                let mut text_end = delim_at;
                if trim {
                    text_end = self.input[..delim_at].trim_end_matches([' ', '\t', '\r', '\n']).len().max(self.pos);
                }
                self.pos = text_end;
                if self.pos > self.start {
                    self.emit(ItemKind::Text);
                }
                self.pos = delim_at;
                self.start = delim_at;
                self.left_delim(trim, in_action)
            }
            None => {
                self.pos = self.input.len();
                if self.pos > self.start {
                    self.emit(ItemKind::Text);
                }
                self.emit_val(ItemKind::Eof, String::new());
                false
            }
        }
    }

    fn left_delim(&mut self, trim: bool, in_action: &mut bool) -> bool {
        self.pos += LEFT.len();
        let trim_len = if trim { 2 } else { 0 };
        if self.input[self.pos + trim_len..].starts_with("/*") {
            self.pos += trim_len;
            self.start = self.pos;
            return self.comment();
        }
        self.emit(ItemKind::LeftDelim);
        self.pos += trim_len;
        self.start = self.pos;
        self.paren_depth = 0;
        *in_action = true;
        true
    }

    fn comment(&mut self) -> bool {
        let Some(end) = self.rest().find("*/") else {
            self.error("unclosed comment".into());
            return false;
        };
        self.pos += end + 2;
        let (delim, trim) = self.at_right_delim();
        if !delim {
            self.error("comment ends before closing delimiter".into());
            return false;
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            self.skip_leading_space();
        }
        self.start = self.pos;
        true
    }

    fn skip_leading_space(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        self.pos += rest.len() - trimmed.len();
    }

    /// Whether a right delimiter (optionally ` -}}`) is next.
    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest[2..].starts_with(RIGHT) {
            return (true, true);
        }
        (rest.starts_with(RIGHT), false)
    }

    fn inside_action(&mut self, in_action: &mut bool) -> bool {
        let (delim, trim) = self.at_right_delim();
        if delim {
            if self.paren_depth != 0 {
                self.error("unclosed left paren".into());
                return false;
            }
            if trim {
                self.pos += 2;
                self.start = self.pos;
            }
            self.pos += RIGHT.len();
            self.emit(ItemKind::RightDelim);
            if trim {
                self.skip_leading_space();
                self.start = self.pos;
            }
            *in_action = false;
            return true;
        }
        let Some(c) = self.next() else {
            self.error("unclosed action".into());
            return false;
        };
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                self.pos -= 1;
                self.space();
            }
            '=' => self.emit(ItemKind::Assign),
            ':' => {
                if self.next() != Some('=') {
                    self.error("expected :=".into());
                    return false;
                }
                self.emit(ItemKind::Declare);
            }
            '|' => self.emit(ItemKind::Pipe),
            '"' => return self.quote(),
            '`' => return self.raw_quote(),
            '$' => return self.variable(),
            '\'' => return self.char_constant(),
            '.' => {
                if let Some(n) = self.peek() {
                    if !n.is_ascii_digit() {
                        return self.field_or_variable(ItemKind::Field);
                    }
                }
                self.pos -= 1;
                return self.number();
            }
            '+' | '-' | '0'..='9' => {
                self.pos -= 1;
                return self.number();
            }
            c if is_alnum(c) => {
                self.pos -= c.len_utf8();
                return self.identifier();
            }
            '(' => {
                self.emit(ItemKind::LeftParen);
                self.paren_depth += 1;
            }
            ')' => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    self.error("unexpected right paren".into());
                    return false;
                }
                self.emit(ItemKind::RightParen);
            }
            c if c.is_ascii() && (c.is_ascii_graphic() || c == ' ') => self.emit(ItemKind::Char),
            c => {
                self.error(format!("unrecognized character in action: {}", unicode_repr(c)));
                return false;
            }
        }
        true
    }

    fn space(&mut self) {
        let mut count = 0;
        while self.peek().is_some_and(|c| c.is_ascii() && is_space(c as u8)) {
            self.pos += 1;
            count += 1;
        }
        // A trim-marked right delimiter: the space before '-' belongs to it.
        let back = &self.input[self.pos - 1..];
        if has_right_trim_marker(back) && back[2..].starts_with(RIGHT) {
            self.pos -= 1;
            if count == 1 {
                self.start = self.pos;
                return;
            }
        }
        self.emit(ItemKind::Space);
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if c.is_ascii() && is_space(c as u8) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT),
        }
    }

    fn identifier(&mut self) -> bool {
        while self.peek().is_some_and(is_alnum) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek().unwrap_or('\0');
            self.error(format!("bad character {}", unicode_repr(c)));
            return false;
        }
        let word = &self.input[self.start..self.pos];
        let kind = match word {
            "block" => ItemKind::Block,
            "break" => ItemKind::Break,
            "continue" => ItemKind::Continue,
            "define" => ItemKind::Define,
            "else" => ItemKind::Else,
            "end" => ItemKind::End,
            "if" => ItemKind::If,
            "range" => ItemKind::Range,
            "nil" => ItemKind::Nil,
            "template" => ItemKind::Template,
            "with" => ItemKind::With,
            "true" | "false" => ItemKind::Bool,
            w if w.starts_with('.') => ItemKind::Field,
            _ => ItemKind::Identifier,
        };
        self.emit(kind);
        true
    }

    fn variable(&mut self) -> bool {
        if self.at_terminator() {
            self.emit(ItemKind::Variable);
            return true;
        }
        self.field_or_variable(ItemKind::Variable)
    }

    fn field_or_variable(&mut self, kind: ItemKind) -> bool {
        if self.at_terminator() {
            self.emit(if kind == ItemKind::Variable { ItemKind::Variable } else { ItemKind::Dot });
            return true;
        }
        while self.peek().is_some_and(is_alnum) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek().unwrap_or('\0');
            self.error(format!("bad character {}", unicode_repr(c)));
            return false;
        }
        self.emit(kind);
        true
    }

    fn char_constant(&mut self) -> bool {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        self.error("unterminated character constant".into());
                        return false;
                    }
                }
                None | Some('\n') => {
                    self.error("unterminated character constant".into());
                    return false;
                }
                Some('\'') => break,
                _ => {}
            }
        }
        self.emit(ItemKind::CharConstant);
        true
    }

    fn number(&mut self) -> bool {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_string();
            self.error(format!("bad number syntax: {}", super::fmt::go_quote(&text)));
            return false;
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_string();
                self.error(format!("bad number syntax: {}", super::fmt::go_quote(&text)));
                return false;
            }
            self.emit(ItemKind::Complex);
        } else {
            self.emit(ItemKind::Number);
        }
        true
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alnum) {
            self.next();
            return false;
        }
        true
    }

    fn quote(&mut self) -> bool {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        self.error("unterminated quoted string".into());
                        return false;
                    }
                }
                None | Some('\n') => {
                    self.error("unterminated quoted string".into());
                    return false;
                }
                Some('"') => break,
                _ => {}
            }
        }
        self.emit(ItemKind::String);
        true
    }

    fn raw_quote(&mut self) -> bool {
        match self.rest().find('`') {
            Some(end) => {
                self.pos += end + 1;
                self.emit(ItemKind::RawString);
                true
            }
            None => {
                self.error("unterminated raw quoted string".into());
                false
            }
        }
    }
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1])
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0]) && b[1] == b'-'
}

/// Go's `%#U`: `U+0041 'A'`.
fn unicode_repr(c: char) -> String {
    if super::fmt::is_go_printable(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(ItemKind, String)> {
        lex(s).into_iter().map(|i| (i.kind, i.val)).collect()
    }

    #[test]
    fn trims_and_numbers() {
        use ItemKind::*;
        assert_eq!(
            kinds("a  {{- 1 -}}  b"),
            vec![
                (Text, "a".into()),
                (LeftDelim, "{{".into()),
                (Number, "1".into()),
                (RightDelim, "}}".into()),
                (Text, "b".into()),
                (Eof, "".into())
            ]
        );
        assert_eq!(kinds("{{-3}}")[1], (Number, "-3".into()));
        assert_eq!(kinds("x{{/* c */}}y"), vec![(Text, "x".into()), (Text, "y".into()), (Eof, "".into())]);
    }

    #[test]
    fn fields_variables_and_errors() {
        use ItemKind::*;
        let k = kinds("{{ $x := .a.b | f $ . }}");
        let got: Vec<ItemKind> = k.iter().map(|(k, _)| *k).filter(|k| *k != Space).collect();
        assert_eq!(got, vec![LeftDelim, Variable, Declare, Field, Field, Pipe, Identifier, Variable, Dot, RightDelim, Eof]);
        assert_eq!(lex("{{ .x ").last().unwrap().val, "unclosed action");
        assert_eq!(lex("{{ 1x }}").last().unwrap().val, "bad number syntax: \"1x\"");
        assert_eq!(lex("{{/* x */ }}").last().unwrap().val, "comment ends before closing delimiter");
    }
}
