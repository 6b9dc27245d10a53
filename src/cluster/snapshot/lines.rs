//! The fastest way through a share of a `kubectl get -o yaml` List's items: each item's lines
//! scanned by hand into the events granit-parser would give for them, and built by the same
//! [`fast::Reader`] (so typing, duplicate keys and pruning are the fast path's). A YAML scanner
//! is general; `kubectl`'s YAML is a small part of YAML, read here line by line at several
//! times the speed: block mappings and sequences (sequences at their key's indentation or
//! deeper), plain scalars on one line, single- and double-quoted scalars on one line (the common
//! escapes), literal block scalars (`|`, `|-`, `|+`), `{}` and `[]`.
//!
//! Anything else in an item — a tab, a carriage return or another control character, a comment
//! or multi-line scalar where it could belong to a value, a flow collection with content, a
//! folded scalar, a tag, anchor or alias, a quoted key, an empty value, an unknown escape, an
//! indentation that is not plainly structure — and the item is handed to granit-parser
//! ([`fast::read_items`] on its text alone: an entry of a block sequence at column 0, the
//! context it has in the whole file). The scanner gives up rather than guess, and is compared
//! with granit-parser on random and real items in the tests.

use std::borrow::Cow;
use std::collections::VecDeque;

use serde_saphyr::granit_parser::{Event, ScalarStyle, StructureStyle};

use super::fast::{self, Reader};
use super::{Doc, Items};

/// Nesting the scanner follows (the reader gives up deeper still, at 128).
const MAX_DEPTH: usize = 100;

/// Longest plain key (YAML's implicit keys stop at 1024 characters).
const MAX_KEY: usize = 1000;

/// The items of `text` (a block sequence at column 0, as [`super::shares`] cuts it), each
/// scanned here or, when the scanner gives up on it, read by granit-parser. None when
/// granit-parser gives up too, or an item is refused: the caller reads the file another way.
pub(super) fn read_items(text: &str, budget: &serde_saphyr::Budget) -> Option<Doc> {
    let mut doc = Doc { kind: String::new(), items: Vec::new(), info: None, seen: 0, object: None };
    let mut reader = Reader::new(VecDeque::new());
    let mut scan = Scan { lines: Vec::new(), at: 0 };
    for chunk in chunks(text)? {
        let mut take = Items { kept: &mut doc.items, info: &mut doc.info, seen: &mut doc.seen };
        let scanned = scan.item(chunk, &mut reader.events).and_then(|()| {
            let first = reader.next()?;
            let item = reader.item(first)?;
            reader.events.is_empty().then_some(item)
        });
        match scanned {
            Some(item) => take.take(item).ok()?,
            None => {
                reader.reset();
                reader.events.clear();
                let part = fast::read_items(chunk, budget)?;
                doc.seen += part.seen;
                if part.info.is_some() {
                    doc.info = part.info;
                }
                doc.items.extend(part.items);
            }
        }
    }
    Some(doc)
}

/// The text of each item: from a line that starts an entry at column 0 (`- …` or `-`) to the
/// next. None when something before the first entry is not a blank or comment line.
fn chunks(text: &str) -> Option<Vec<&str>> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i + 1);
        let line = text[at..end].trim_end_matches('\n');
        if entry(line) {
            starts.push(at);
        } else if starts.is_empty() && !(line.trim_start_matches(' ').is_empty() || line.trim_start_matches(' ').starts_with('#')) {
            return None;
        }
        // Only entries start at column 0 inside a share: skip the indented lines quickly.
        at = end;
        while at < text.len() && text.as_bytes()[at] == b' ' {
            at = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i + 1);
        }
    }
    starts.push(text.len());
    Some(starts.windows(2).map(|w| &text[w[0]..w[1]]).collect())
}

/// A line that is a sequence entry: `- …` or a lone `-`.
fn entry(text: &str) -> bool {
    text.starts_with("- ") || text == "-"
}

/// One line: its indentation (spaces) and what follows it, without the line break.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

impl Line<'_> {
    /// Blank, or a comment: nothing to structure (outside a block scalar).
    fn empty(&self) -> bool {
        self.text.is_empty() || self.text.starts_with('#')
    }
}

struct Scan<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
}

type Out<'a> = VecDeque<Event<'a>>;

fn scalar<'a>(text: Cow<'a, str>, style: ScalarStyle) -> Event<'a> {
    Event::Scalar(text, style, 0, None)
}

impl<'a> Scan<'a> {
    /// The events of the one item in `chunk`, or None (`out` then holds part of them).
    fn item(&mut self, chunk: &'a str, out: &mut Out<'a>) -> Option<()> {
        // Characters whose reading the scanner does not reproduce: tabs (indentation or
        // separation), carriage returns, other controls, and non-ASCII text that may hold C1
        // controls, byte order marks or non-characters (checked one by one).
        let bytes = chunk.as_bytes();
        if !chunk.ends_with('\n') || bytes.iter().any(|&b| (b < 0x20 && b != b'\n') || b == 0x7f) {
            return None;
        }
        if !chunk.is_ascii() && chunk.chars().any(|c| matches!(c, '\u{80}'..='\u{9f}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')) {
            return None;
        }
        self.lines.clear();
        self.at = 0;
        for raw in chunk.split_terminator('\n') {
            let text = raw.trim_start_matches(' ');
            // A whitespace-only line may belong to a scalar the scanner does not read.
            if text.is_empty() && !raw.is_empty() {
                return None;
            }
            self.lines.push(Line { indent: raw.len() - text.len(), text });
        }
        self.entry(0, out)?;
        self.peek().is_none().then_some(())
    }

    /// The next line with structure, past blank and comment lines.
    fn peek(&mut self) -> Option<Line<'a>> {
        while let Some(line) = self.lines.get(self.at) {
            if !line.empty() {
                return Some(*line);
            }
            self.at += 1;
        }
        None
    }

    /// A block collection starting at the current line, at its indentation.
    fn block(&mut self, depth: usize, out: &mut Out<'a>) -> Option<()> {
        let line = self.peek()?;
        if entry(line.text) {
            self.seq(line.indent, depth, out)
        } else {
            self.map(line.indent, depth, out)
        }
    }

    /// A block mapping whose keys sit at `indent`.
    fn map(&mut self, indent: usize, depth: usize, out: &mut Out<'a>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        out.push_back(Event::MappingStart(StructureStyle::Block, 0, None));
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent || entry(line.text) {
                return None;
            }
            let (key, rest) = split_key(line.text)?;
            out.push_back(scalar(Cow::Borrowed(key), ScalarStyle::Plain));
            self.at += 1;
            if rest.is_empty() {
                match self.peek()? {
                    next if next.indent > indent => self.block(depth + 1, out)?,
                    next if next.indent == indent && entry(next.text) => self.seq(indent, depth + 1, out)?,
                    _ => return None,
                }
            } else if let Some(chomp) = block_header(rest) {
                self.literal(indent, chomp, out)?;
            } else {
                inline(rest, out)?;
            }
        }
        out.push_back(Event::MappingEnd);
        Some(())
    }

    /// A block sequence whose entries sit at `indent`.
    fn seq(&mut self, indent: usize, depth: usize, out: &mut Out<'a>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        out.push_back(Event::SequenceStart(StructureStyle::Block, 0, None));
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !entry(line.text)) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            self.entry(depth + 1, out)?;
        }
        out.push_back(Event::SequenceEnd);
        Some(())
    }

    /// The entry on the current line (`- …`): a compact mapping (`- key: value` and the keys
    /// under it) or a scalar on the line. Anything after it more indented than the dash is
    /// not structure the scanner knows.
    fn entry(&mut self, depth: usize, out: &mut Out<'a>) -> Option<()> {
        let line = self.peek()?;
        let after = line.text.strip_prefix("- ")?;
        let rest = after.trim_start_matches(' ');
        let column = line.indent + 2 + (after.len() - rest.len());
        if rest.is_empty() || entry(rest) || rest.starts_with('#') {
            return None;
        }
        if !rest.starts_with(['"', '\'']) && separator(rest).is_some() {
            self.lines[self.at] = Line { indent: column, text: rest };
            self.map(column, depth, out)?;
        } else {
            self.at += 1;
            inline(rest, out)?;
        }
        match self.peek() {
            Some(next) if next.indent > line.indent => None,
            _ => Some(()),
        }
    }

    /// A literal block scalar whose key sits at `indent`, from the current line on.
    fn literal(&mut self, indent: usize, chomp: Chomp, out: &mut Out<'a>) -> Option<()> {
        let mut body = String::new();
        let mut blanks = 0;
        let mut content: Option<usize> = None;
        while let Some(line) = self.lines.get(self.at) {
            if line.text.is_empty() {
                blanks += 1;
                self.at += 1;
                continue;
            }
            let m = match content {
                None if line.indent <= indent => break,
                None => *content.insert(line.indent),
                Some(m) if line.indent < m => {
                    if line.indent > indent {
                        return None;
                    }
                    break;
                }
                Some(m) => m,
            };
            body.extend(std::iter::repeat_n('\n', blanks));
            blanks = 0;
            body.extend(std::iter::repeat_n(' ', line.indent - m));
            body.push_str(line.text);
            body.push('\n');
            self.at += 1;
        }
        content?;
        match chomp {
            Chomp::Clip => {}
            Chomp::Strip => {
                body.pop();
            }
            Chomp::Keep => body.extend(std::iter::repeat_n('\n', blanks)),
        }
        out.push_back(scalar(Cow::Owned(body), ScalarStyle::Literal));
        match self.peek() {
            Some(next) if next.indent > indent => None,
            _ => Some(()),
        }
    }
}

#[derive(Clone, Copy)]
enum Chomp {
    Clip,
    Strip,
    Keep,
}

fn block_header(rest: &str) -> Option<Chomp> {
    match rest {
        "|" => Some(Chomp::Clip),
        "|-" => Some(Chomp::Strip),
        "|+" => Some(Chomp::Keep),
        _ => None,
    }
}

/// Where a plain key ends: the first `: `, or a `:` ending the line.
fn separator(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b':', bytes).find(|&i| i + 1 == bytes.len() || bytes[i + 1] == b' ')
}

/// `key: rest` (rest empty for `key:`), when the key is plainly a plain scalar.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let at = separator(text)?;
    let key = &text[..at];
    if key.is_empty() || key.len() > MAX_KEY || !plain_start(key) || key.ends_with([' ', ':']) || key.contains(" #") {
        return None;
    }
    let rest = text.get(at + 2..).unwrap_or("");
    if rest.starts_with(' ') {
        return None;
    }
    Some((key, rest))
}

/// Whether a plain scalar may start so, without doubt: not with an indicator (a `-` followed
/// by something other than a space is a plain start, `-7`).
fn plain_start(text: &str) -> bool {
    match text.as_bytes() {
        [b'-', next, ..] => *next != b' ',
        [first, ..] => !b"-?:,[]{}#&*!|>'\"%@`".contains(first),
        [] => false,
    }
}

/// A value on its key's or dash's line: a quoted scalar, `{}`, `[]` or a plain scalar.
fn inline<'a>(rest: &'a str, out: &mut Out<'a>) -> Option<()> {
    match rest.as_bytes()[0] {
        b'"' => {
            let (value, tail) = double_quoted(&rest[1..])?;
            tail.is_empty().then(|| out.push_back(scalar(value, ScalarStyle::DoubleQuoted)))
        }
        b'\'' => {
            let (value, tail) = single_quoted(&rest[1..])?;
            tail.is_empty().then(|| out.push_back(scalar(value, ScalarStyle::SingleQuoted)))
        }
        _ if rest == "{}" => {
            out.push_back(Event::MappingStart(StructureStyle::Flow, 0, None));
            out.push_back(Event::MappingEnd);
            Some(())
        }
        _ if rest == "[]" => {
            out.push_back(Event::SequenceStart(StructureStyle::Flow, 0, None));
            out.push_back(Event::SequenceEnd);
            Some(())
        }
        _ => {
            let doubtful = !plain_start(rest) || rest.ends_with([' ', ':']) || rest.contains(": ") || rest.contains(" #");
            (!doubtful).then(|| out.push_back(scalar(Cow::Borrowed(rest), ScalarStyle::Plain)))
        }
    }
}

/// A double-quoted scalar closed on its line (`text` starts after the opening quote): its value
/// and what follows the closing quote. Escapes beyond the common ones give up.
fn double_quoted(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let bytes = text.as_bytes();
    let end = memchr::memchr2(b'"', b'\\', bytes)?;
    if bytes[end] == b'"' {
        return Some((Cow::Borrowed(&text[..end]), &text[end + 1..]));
    }
    let mut value = String::from(&text[..end]);
    let mut at = end;
    loop {
        let next = memchr::memchr2(b'"', b'\\', &bytes[at..])? + at;
        value.push_str(&text[at..next]);
        if bytes[next] == b'"' {
            return Some((Cow::Owned(value), &text[next + 1..]));
        }
        let hex = |len: usize| -> Option<char> {
            let digits = text.get(next + 2..next + 2 + len)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            char::from_u32(u32::from_str_radix(digits, 16).ok()?)
        };
        let (c, len) = match *bytes.get(next + 1)? {
            b'\\' => ('\\', 2),
            b'"' => ('"', 2),
            b'/' => ('/', 2),
            b'n' => ('\n', 2),
            b't' => ('\t', 2),
            b'r' => ('\r', 2),
            b'x' => (hex(2)?, 4),
            b'u' => (hex(4)?, 6),
            b'U' => (hex(8)?, 10),
            _ => return None,
        };
        value.push(c);
        at = next + len;
    }
}

/// A single-quoted scalar closed on its line (`text` starts after the opening quote).
fn single_quoted(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let bytes = text.as_bytes();
    let mut value: Option<String> = None;
    let mut from = 0;
    loop {
        let at = memchr::memchr(b'\'', &bytes[from..])? + from;
        if bytes.get(at + 1) == Some(&b'\'') {
            value.get_or_insert_with(String::new).push_str(&text[from..=at]);
            from = at + 2;
            continue;
        }
        let value = match value {
            None => Cow::Borrowed(&text[..at]),
            Some(mut v) => {
                v.push_str(&text[from..at]);
                Cow::Owned(v)
            }
        };
        return Some((value, &text[at + 1..]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> serde_saphyr::Budget {
        super::super::yaml_budget()
    }

    /// granit-parser's events for one item (the node inside `- …`), the reference.
    fn reference(chunk: &str) -> Option<Vec<Event<'static>>> {
        use serde_saphyr::granit_parser::Parser;
        let mut parser = Parser::new_from_str_with_options(chunk, fast::options(&budget()));
        let mut events = Vec::new();
        for next in parser.by_ref() {
            events.push(owned(next.ok()?.0));
        }
        // StreamStart, DocumentStart, SequenceStart … SequenceEnd, DocumentEnd, StreamEnd.
        Some(events[3..events.len() - 3].to_vec())
    }

    fn owned(event: Event<'_>) -> Event<'static> {
        match event {
            Event::Scalar(t, s, a, None) => Event::Scalar(Cow::Owned(t.into_owned()), s, a, None),
            Event::SequenceStart(s, a, None) => Event::SequenceStart(s, a, None),
            Event::MappingStart(s, a, None) => Event::MappingStart(s, a, None),
            Event::SequenceEnd => Event::SequenceEnd,
            Event::MappingEnd => Event::MappingEnd,
            // Tags, anchors, aliases: nothing the scanner emits; a stand-in that never matches.
            _ => Event::Alias(usize::MAX),
        }
    }

    fn scanned(chunk: &str) -> Option<Vec<Event<'static>>> {
        let mut out = VecDeque::new();
        Scan { lines: Vec::new(), at: 0 }.item(chunk, &mut out)?;
        Some(out.into_iter().map(owned).collect())
    }

    /// Compares scalars by value and plain-ness only: the reader looks at nothing else.
    fn same(a: &[Event], b: &[Event]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Event::Scalar(t, s, a, _), Event::Scalar(u, r, b, _)) => {
                    t == u && a == b && (*s == ScalarStyle::Plain) == (*r == ScalarStyle::Plain)
                }
                (Event::SequenceStart(_, a, _), Event::SequenceStart(_, b, _))
                | (Event::MappingStart(_, a, _), Event::MappingStart(_, b, _)) => a == b,
                _ => x == y,
            })
    }

    #[test]
    fn items_it_reads_are_read_as_granit_parser_reads_them() {
        let cases = [
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels: {}\n  data:\n    script: |\n      #!/bin/sh\n        indented\n\n      echo \"x\" # not a comment\n    stripped: |-\n      one\n      two\n\n    kept: |+\n      one\n\n\n    quoted: \"a \\\"b\\\" \\\\ \\n \\t \\/ \\u00e9 \\x41 \\U0001F600\"\n    single: 'it''s: fine # here'\n    url: http://x.y/z?a=b#c\n    empty: \"\"\n    list: []\n",
            "- kind: TrainJob\n  spec:\n    podTemplateOverrides:\n    - targetJobs:\n      - name: node\n      spec:\n        tolerations: []\n    -   deep: 1\n        deeper: 2\n    - plain scalar\n    - \"quoted\"\n    - -7\n# a comment between keys\n  status: {}\n",
            "- name: x\n  list:\n    - a\n    - b: c\n      d: e\n  after: 1\n",
            "- a: b\n\n# trailing comment\n\n",
            "- just a scalar\n",
            "- a:\n  - x\n  b: y\n",
            "- k: v:x\n  k2: a,b]c}\n  k3: -foo\n  nvidia.com/gpu: 4\n",
        ];
        for chunk in cases {
            let got = scanned(chunk).unwrap_or_else(|| panic!("the scanner gave up on {chunk:?}"));
            let want = reference(chunk).expect("granit-parser reads it");
            assert!(same(&got, &want), "{chunk:?}\nscanned {got:?}\ngranit  {want:?}");
        }
    }

    #[test]
    fn gives_up_on_what_it_does_not_reproduce() {
        for chunk in [
            "- a: b\n  c\n",
            "- a: b\n   c: d\n",
            "- a: b # comment\n",
            "- a: &x 1\n",
            "- a: *x\n",
            "- a: !!str 1\n",
            "- a:\n",
            "- a: \n",
            "- a:  b\n",
            "- a: [1, 2]\n",
            "- a: {b: c}\n",
            "- a: >\n    folded\n",
            "- a: |2\n    x\n",
            "- a: |\n  b: c\n",
            "- a: |\n    x\n   y\n",
            "- a: \"open\n    close\"\n",
            "- a: 'open\n    close'\n",
            "- a: \"\\e\"\n",
            "- a: \"x\" y\n",
            "- \"q\": v\n",
            "- ? k\n  : v\n",
            "- a:\tb\n",
            "- a: b\r\n",
            "- a: b\n  \n  c: d\n",
            "- - nested\n",
            "-\n  a: b\n",
            "- a: b\n- c: d\n",
            "- a: b:\n",
            "- a: x\u{85}y\n",
        ] {
            assert!(scanned(chunk).is_none(), "{chunk:?}");
        }
        let deep = (0..MAX_DEPTH + 2).fold(String::from("- "), |mut s, i| {
            s.push_str(&format!("k:\n{}", " ".repeat(2 * i + 4)));
            s
        }) + "v: 1\n";
        assert!(scanned(&deep).is_none(), "nesting past MAX_DEPTH");
    }

    /// Random items (the pieces of `fast`'s differential test and then some): whenever the
    /// scanner answers, granit-parser gives the same events, and both outcomes occur.
    #[test]
    fn whenever_it_answers_granit_parser_agrees() {
        const VALUES: &[&str] = &[
            "x",
            "Running",
            "1Gi",
            "-7",
            "0.5",
            "null",
            "~",
            "\"yes\"",
            "\"a\\\"b\"",
            "\"\\u00e9\"",
            "'a: b'",
            "'it''s'",
            "\"\"",
            "''",
            "a b c",
            "[]",
            "{}",
            "http://a/b#c",
            "a,b",
            "x]",
            "-foo",
            "|",
            "|-",
            "|+",
            "",
            " x",
            "x ",
            "x # c",
            "&a 1",
            "[1]",
            "{a: 1}",
            ">",
            "\"open",
            "'open",
            "a: b",
            "?x",
            ":x",
            "%x",
            "@x",
            "\"\\q\"",
        ];
        const KEYS: &[&str] = &["a", "kind", "spec", "nvidia.com/gpu", "k:x", "\"q\"", "-k", "a b", "a #b", "?", "1", "<<"];
        let mut next = fast::xorshift(0x2545_F491_4F6C_DD1D);
        fn body(out: &mut String, indent: usize, depth: usize, next: &mut dyn FnMut(usize) -> usize) {
            let pad = " ".repeat(indent);
            for _ in 0..1 + next(3) {
                let key = KEYS[next(KEYS.len())];
                match next(8) {
                    0 if depth < 4 => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        body(out, indent + 2 + next(2), depth + 1, next);
                    }
                    1 if depth < 4 => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        let at = indent + 2 * next(2);
                        for _ in 0..1 + next(3) {
                            if next(2) == 0 {
                                out.push_str(&format!("{}- {}\n", " ".repeat(at), VALUES[next(VALUES.len())]));
                            } else {
                                out.push_str(&format!("{}- k{}: {}\n", " ".repeat(at), next(3), VALUES[next(VALUES.len())]));
                                body(out, at + 2, depth + 1, next);
                            }
                        }
                    }
                    2 => {
                        out.push_str(&format!("{pad}{key}: |{}\n", ["", "-", "+"][next(3)]));
                        for _ in 0..1 + next(3) {
                            match next(5) {
                                0 => out.push('\n'),
                                1 => out.push_str(&format!("{pad}    more\n")),
                                _ => out.push_str(&format!("{pad}  line: # x\n")),
                            }
                        }
                    }
                    3 => out.push_str(&format!("{}# comment\n", " ".repeat(next(6)))),
                    4 => out.push_str(&format!("{pad}  continued\n")),
                    _ => out.push_str(&format!("{pad}{key}: {}\n", VALUES[next(VALUES.len())])),
                }
            }
        }
        let (mut answered, total) = (0, 8000);
        for _ in 0..total {
            let mut chunk = String::from("- kind: TrainJob\n");
            body(&mut chunk, 2, 0, &mut next);
            if let Some(got) = scanned(&chunk) {
                answered += 1;
                let want = reference(&chunk);
                assert!(want.as_ref().is_some_and(|w| same(&got, w)), "{chunk}\nscanned {got:?}\ngranit  {want:?}");
            }
        }
        assert!(answered > total / 10 && answered < total * 9 / 10, "the scanner answered {answered} of {total}");
    }

    /// The items of a share, scanned or handed to granit-parser one by one, are what
    /// granit-parser reads from the whole share, and the scenario snapshots are scanned.
    #[test]
    fn shares_read_as_the_fast_path_reads_them() {
        let text = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: flow}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: plain\n  data:\n    a: |\n      x\n# between\n\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n  data:\n    b: 'q'\n";
        assert_eq!(read_items(text, &budget()), fast::read_items(text, &budget()));
        assert_eq!(read_items(text, &budget()).expect("read").seen, 3);
        assert!(read_items("x: 1\n- a: b\n", &budget()).is_none(), "not a sequence");
        assert_eq!(read_items("# lead\n\n- a: b\n", &budget()), fast::read_items("# lead\n\n- a: b\n", &budget()));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
        for path in std::fs::read_dir(&dir).expect("snapshots/").map(|e| e.expect("entry").path()) {
            let text = std::fs::read_to_string(&path).expect("text");
            let Some((start, end)) = super::super::shares::items_lines(&text) else { continue };
            let items = &text[start..end];
            assert_eq!(read_items(items, &budget()), fast::read_items(items, &budget()), "{}", path.display());
            let chunks = chunks(items).expect("items");
            let scanned = chunks.iter().filter(|c| scanned(c).is_some()).count();
            assert!(scanned * 10 >= chunks.len() * 9, "{}: {scanned} of {} items scanned", path.display(), chunks.len());
        }
    }
}
