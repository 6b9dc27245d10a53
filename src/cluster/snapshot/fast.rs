//! The fast way through a YAML snapshot: granit-parser's events (the parser serde-saphyr itself
//! runs, with the same options) turned straight into JSON, each List item handed to
//! normalisation as soon as it is complete. Going through serde-saphyr's `Deserializer` costs
//! about three times as much on a 30 MB `kubectl get -o yaml` List (docs/benchmarks.md), and
//! none of its extras (spans, budgets per node, comments, merges) matter for this data.
//!
//! serde-saphyr stays the reference. This reader only answers when it is certain to build what
//! serde-saphyr would: block and flow collections, quoted and block scalars, and plain scalars
//! whose type is beyond doubt (`null`, `true`, `12`, `-3`, `0.5`, `Running`, `1Gi`, `10.0.0.1`,
//! a UID). On anything else — a tag, an anchor or alias, a key that is not plainly a string,
//! a duplicate key, a plain scalar such as `yes`, `0x1F`, `1e3`, `+1` or `.inf`, nesting or a
//! document count near serde-saphyr's limits, a syntax error, an item `take` refuses — it gives
//! up (`None`) and the caller reads the text with serde-saphyr, which gives the answer or the
//! error message. `kubectl` quotes every string that could read as another type, so its output
//! never needs the slow path.

use serde_json::{Map, Value as Json};
use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, StrInput};

use super::{Doc, Items};
use crate::cluster::trim::{Shape, CONDITIONS, MANAGERS};

/// Nesting (collections inside a document) past which the reader leaves the document to
/// serde-saphyr, whose own limit (`max_depth`, 200 for snapshots) decides. Kubernetes objects
/// nest a few dozen levels at most.
const MAX_DEPTH: usize = 128;

type Events<'a> = Parser<'a, StrInput<'a>>;

/// The parser and two stacks the collections being built keep their children on, so that each
/// array and map is allocated once at its final size: 50,000 TrainJobs are millions of small
/// maps, and growing each one cost a third of the memory.
struct Reader<'a> {
    events: Events<'a>,
    values: Vec<Json>,
    entries: Vec<(String, Json)>,
}

/// Every document of `text`, or None when serde-saphyr must read it (see the module doc).
pub(super) fn read(text: &str, budget: &serde_saphyr::Budget) -> Option<Vec<Doc>> {
    let mut reader = Reader { events: Parser::new_from_str_with_options(text, options(budget)), values: Vec::new(), entries: Vec::new() };
    let mut docs = Vec::new();
    loop {
        match reader.next()? {
            Event::StreamStart => {}
            Event::StreamEnd => return Some(docs),
            Event::DocumentStart(..) => {
                // serde-saphyr refuses streams of more documents than its budget allows.
                if docs.len() + 1 >= budget.max_documents {
                    return None;
                }
                docs.push(reader.document()?);
                if !matches!(reader.next()?, Event::DocumentEnd) {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// One share of a List's items cut out by [`super::shares`]: a document that is a block
/// sequence (`- a\n- b\n`), each element taken as the List's items are (`seen`, `info`, `kept`),
/// or None when serde-saphyr must read the whole file.
pub(super) fn read_items(text: &str, budget: &serde_saphyr::Budget) -> Option<Doc> {
    let mut reader = Reader { events: Parser::new_from_str_with_options(text, options(budget)), values: Vec::new(), entries: Vec::new() };
    let mut doc = empty_doc();
    let mut take = Items { kept: &mut doc.items, info: &mut doc.info, seen: &mut doc.seen };
    if !matches!(reader.next()?, Event::StreamStart)
        || !matches!(reader.next()?, Event::DocumentStart(..))
        || !matches!(reader.next()?, Event::SequenceStart(_, 0, None))
    {
        return None;
    }
    loop {
        match reader.next()? {
            Event::SequenceEnd => break,
            event => take.take(reader.item(event)?).ok()?,
        }
    }
    match (reader.next()?, reader.next()?) {
        (Event::DocumentEnd, Event::StreamEnd) => Some(doc),
        _ => None,
    }
}

/// The parser options serde-saphyr derives from the same budget, so both parsers accept and
/// refuse the same text.
fn options(budget: &serde_saphyr::Budget) -> Options {
    let mut options = Options::default();
    options.simple_key_max_lookahead = budget.simple_key_max_lookahead;
    options.flow_nesting_limit = budget.flow_nesting_limit;
    options.block_nesting_limit = options.block_nesting_limit.max(budget.max_depth.saturating_add(1));
    options.emit_comments = false;
    options
}

fn empty_doc() -> Doc {
    Doc { kind: String::new(), items: Vec::new(), info: None, seen: 0, object: None }
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Option<Event<'a>> {
        match self.events.next() {
            Some(Ok((event, _))) => Some(event),
            _ => None,
        }
    }

    /// One document: empty, or a mapping whose `items` are taken one by one (as `Doc`'s
    /// `Deserialize` does) while its other keys are kept.
    fn document(&mut self) -> Option<Doc> {
        match self.next()? {
            Event::Scalar(text, ScalarStyle::Plain, 0, None) if matches!(plain(&text)?, Json::Null) => return Some(empty_doc()),
            Event::MappingStart(_, 0, None) => {}
            _ => return None,
        }
        let mut doc = empty_doc();
        let mut has_items = false;
        let mut rest = Map::new();
        loop {
            let key = match self.next()? {
                Event::MappingEnd => break,
                event => key(event)?,
            };
            if key == "items" {
                if has_items {
                    return None;
                }
                has_items = true;
                let mut take = Items { kept: &mut doc.items, info: &mut doc.info, seen: &mut doc.seen };
                match self.next()? {
                    Event::SequenceStart(_, 0, None) => loop {
                        match self.next()? {
                            Event::SequenceEnd => break,
                            event => take.take(self.item(event)?).ok()?,
                        }
                    },
                    Event::Scalar(text, ScalarStyle::Plain, 0, None) if matches!(plain(&text)?, Json::Null) => {}
                    _ => return None,
                }
            } else {
                let first = self.next()?;
                let value = self.node(first, 1)?;
                if rest.insert(key, value).is_some() {
                    return None;
                }
            }
        }
        doc.kind = rest.get("kind").and_then(Json::as_str).unwrap_or("").to_string();
        doc.object = (!has_items || !doc.kind.ends_with("List")).then_some(Json::Object(rest));
        Some(doc)
    }

    /// The node that starts with `event`, `depth` collections deep.
    fn node(&mut self, event: Event<'a>, depth: usize) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        match event {
            Event::Scalar(text, ScalarStyle::Plain, 0, None) => plain(&text),
            Event::Scalar(text, _, 0, None) => Some(Json::String(text.into_owned())),
            Event::SequenceStart(_, 0, None) => {
                let start = self.values.len();
                loop {
                    match self.next()? {
                        Event::SequenceEnd => return Some(Json::Array(self.values.drain(start..).collect())),
                        event => {
                            let value = self.node(event, depth + 1)?;
                            self.values.push(value);
                        }
                    }
                }
            }
            Event::MappingStart(_, 0, None) => {
                let start = self.entries.len();
                loop {
                    let key = match self.next()? {
                        Event::MappingEnd => break,
                        event => key(event)?,
                    };
                    let first = self.next()?;
                    let value = self.node(first, depth + 1)?;
                    self.entries.push((key, value));
                }
                let mut map = Map::with_capacity(self.entries.len() - start);
                for (key, value) in self.entries.drain(start..) {
                    if map.insert(key, value).is_some() {
                        return None;
                    }
                }
                Some(Json::Object(map))
            }
            _ => None,
        }
    }
}

impl<'a> Reader<'a> {
    /// One List item (two collections deep), built without what normalisation drops: once its
    /// kind is read (kubectl writes `apiVersion` and `kind` first), each later key is built as
    /// [`crate::cluster::prune`] says. An item whose apiVersion or kind is not read first is
    /// built whole.
    fn item(&mut self, event: Event<'a>) -> Option<Json> {
        if !matches!(event, Event::MappingStart(_, 0, None)) {
            return self.node(event, 2);
        }
        let (mut api_version, mut kind) = (false, None::<String>);
        let start = self.entries.len();
        let mut names: Vec<String> = Vec::new();
        loop {
            let key = match self.next()? {
                Event::MappingEnd => break,
                event => key(event)?,
            };
            if names.contains(&key) {
                return None;
            }
            let first = self.next()?;
            let prune = match &kind {
                Some(kind) if api_version => crate::cluster::prune(kind, &key),
                _ => crate::cluster::Prune::Keep,
            };
            let value = match prune {
                crate::cluster::Prune::Keep => self.node(first, 3)?,
                crate::cluster::Prune::Drop => {
                    self.skip(first, 3)?;
                    names.push(key);
                    continue;
                }
                crate::cluster::Prune::Conditions => self.shaped(first, 3, &CONDITIONS)?,
                crate::cluster::Prune::Managers => self.shaped(first, 3, &MANAGERS)?,
            };
            match (key.as_str(), &value) {
                ("apiVersion", Json::String(v)) => api_version = !v.is_empty(),
                ("kind", Json::String(k)) if !k.is_empty() => kind = Some(k.clone()),
                _ => {}
            }
            names.push(key.clone());
            self.entries.push((key, value));
        }
        let map: Map<String, Json> = self.entries.drain(start..).collect();
        Some(Json::Object(map))
    }

    /// The node that starts with `event`, `depth` collections deep, built in `shape`.
    fn shaped(&mut self, event: Event<'a>, depth: usize, shape: &Shape) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        match (shape, &event) {
            (Shape::Only(keys) | Shape::Except(keys), Event::MappingStart(_, 0, None)) => {
                let only = matches!(shape, Shape::Only(_));
                let start = self.entries.len();
                let mut names: Vec<String> = Vec::new();
                loop {
                    let key = match self.next()? {
                        Event::MappingEnd => break,
                        event => key(event)?,
                    };
                    if names.contains(&key) {
                        return None;
                    }
                    let first = self.next()?;
                    match keys.iter().find(|(k, _)| *k == key) {
                        Some((_, sub)) => {
                            let value = self.shaped(first, depth + 1, sub)?;
                            self.entries.push((key.clone(), value));
                        }
                        None if only => self.skip(first, depth + 1)?,
                        None => {
                            let value = self.node(first, depth + 1)?;
                            self.entries.push((key.clone(), value));
                        }
                    }
                    names.push(key);
                }
                let map: Map<String, Json> = self.entries.drain(start..).collect();
                Some(Json::Object(map))
            }
            (Shape::Each(sub), Event::SequenceStart(_, 0, None)) => {
                let start = self.values.len();
                loop {
                    match self.next()? {
                        Event::SequenceEnd => return Some(Json::Array(self.values.drain(start..).collect())),
                        event => {
                            let value = self.shaped(event, depth + 1, sub)?;
                            self.values.push(value);
                        }
                    }
                }
            }
            _ => self.node(event, depth),
        }
    }

    /// Reads past the node that starts with `event` as [`Reader::node`] reads it, giving up
    /// where it gives up (tags, anchors, doubtful plain scalars, duplicate keys, depth), without
    /// building it.
    fn skip(&mut self, event: Event<'a>, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match event {
            Event::Scalar(text, ScalarStyle::Plain, 0, None) => plain(&text).map(drop),
            Event::Scalar(_, _, 0, None) => Some(()),
            Event::SequenceStart(_, 0, None) => loop {
                match self.next()? {
                    Event::SequenceEnd => return Some(()),
                    event => self.skip(event, depth + 1)?,
                }
            },
            Event::MappingStart(_, 0, None) => {
                let mut names: Vec<String> = Vec::new();
                loop {
                    let key = match self.next()? {
                        Event::MappingEnd => return Some(()),
                        event => key(event)?,
                    };
                    if names.contains(&key) {
                        return None;
                    }
                    let first = self.next()?;
                    self.skip(first, depth + 1)?;
                    names.push(key);
                }
            }
            _ => None,
        }
    }
}

/// A mapping key: a scalar that is certainly a string, and not the merge key.
fn key(event: Event) -> Option<String> {
    match event {
        Event::Scalar(text, ScalarStyle::Plain, 0, None) => match plain(&text)? {
            Json::String(s) if s != "<<" => Some(s),
            _ => None,
        },
        Event::Scalar(text, _, 0, None) => Some(text.into_owned()),
        _ => None,
    }
}

/// A plain scalar as serde-saphyr types it for `serde_json::Value`, when that is certain.
fn plain(text: &str) -> Option<Json> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Json::Null),
        "true" => return Some(Json::Bool(true)),
        "false" => return Some(Json::Bool(false)),
        _ => {}
    }
    let bytes = text.as_bytes();
    if !matches!(bytes[0], b'0'..=b'9' | b'-' | b'+' | b'.') {
        // No number starts with anything else; YAML 1.1 booleans (serde-saphyr reads `yes`,
        // `On`, `n`… as booleans) and the float words are left to it.
        const WORDS: &[&str] = &["y", "yes", "n", "no", "on", "off", "true", "false", "null", "inf", "infinity", "nan"];
        return (!WORDS.iter().any(|w| text.eq_ignore_ascii_case(w))).then(|| Json::String(text.to_string()));
    }
    if let Some(n) = integer(text) {
        return Some(n);
    }
    if let Some(n) = decimal(text) {
        return Some(n);
    }
    certainly_text(bytes).then(|| Json::String(text.to_string()))
}

/// `0`, `42`, `-7`: decimal integers without sign `+`, leading zeros or underscores, short
/// enough for 64 bits (serde-saphyr reads them as u64, or i64 when negative).
fn integer(text: &str) -> Option<Json> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let ok = !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if !ok {
        return None;
    }
    if text.starts_with('-') {
        text.parse::<i64>().ok().map(Json::from)
    } else {
        text.parse::<u64>().ok().map(Json::from)
    }
}

/// `0.5`, `-12.25`: decimals with digits on both sides of one dot, no exponent, within what
/// an f64 holds exactly enough to round the same way in any correct parser.
fn decimal(text: &str) -> Option<Json> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.')?;
    let ok = !whole.is_empty()
        && !fraction.is_empty()
        && whole.len() + fraction.len() <= 15
        && whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        && (whole == "0" || !whole.starts_with('0'));
    if !ok {
        return None;
    }
    serde_json::Number::from_f64(text.parse::<f64>().ok()?).map(Json::Number)
}

/// Whether a plain scalar starting like a number cannot be one under any of serde-saphyr's
/// readings (integers in any radix with underscores, Rust's float syntax, `.inf`, `.nan`): it
/// holds a byte no number has, a second dot, or a sign that neither starts it nor follows an
/// exponent (`10.0.0.1`, `1Gi`, `500m`, `6c5e2f0a-…`, `2024-01-01`).
fn certainly_text(bytes: &[u8]) -> bool {
    let numeric = |b: u8| b.is_ascii_hexdigit() || b"xXoObBiInNtTyY+-._".contains(&b);
    bytes.iter().any(|&b| !numeric(b))
        || bytes.iter().filter(|&&b| b == b'.').count() > 1
        || bytes.iter().enumerate().skip(1).any(|(i, &b)| matches!(b, b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde-saphyr's reading of one plain scalar, the reference (None: it refuses it).
    fn reference(text: &str) -> Option<Json> {
        let doc: Map<String, Json> = serde_saphyr::from_str(&format!("v: {text}\n")).ok()?;
        doc.get("v").cloned()
    }

    #[test]
    fn plain_scalars_are_typed_as_serde_saphyr_types_them_or_left_to_it() {
        let cases = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nULL",
            "true",
            "false",
            "True",
            "FALSE",
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "N",
            "0",
            "7",
            "-7",
            "42",
            "-0",
            "007",
            "1_000",
            "123456789012345678",
            "1234567890123456789",
            "99999999999999999999",
            "0.5",
            "-12.25",
            "1.",
            ".5",
            "1e3",
            "1E3",
            "1.5e-3",
            "+1",
            "+1.5",
            "0x1F",
            "0X1F",
            "0o17",
            "0b101",
            ".inf",
            "-.inf",
            ".nan",
            "-.nan",
            "inf",
            "Infinity",
            "nan",
            "1Gi",
            "500m",
            "10.0.0.1",
            "1.2.3",
            "v1",
            "2024-01-01",
            "2026-06-21T08:00:00Z",
            "12:30",
            "-foo",
            "6c5e2f0a-1b2c-4d5e-8f90-123456789abc",
            "6c5e2f0e-1b2e-4d5e-8f9e-1234",
            "ee-1",
            "1e-",
            "1-e",
            "e5",
            "_1",
            "/usr/bin",
            "Running",
            "a b",
            "25%",
            "0.0.0.0/0",
            "1.5Gi",
            "3.14159265358979",
            "0.1234567890123456789",
            "1e999",
            "-1e999",
        ];
        for text in cases {
            // None: left to serde-saphyr.
            if let Some(got) = plain(text) {
                assert_eq!(Some(got), reference(text), "plain scalar {text:?}");
            }
        }
        // What kubectl writes must not need the slow path.
        for text in ["0", "42", "-7", "0.5", "Running", "1Gi", "500m", "10.0.0.1", "6c5e2f0a-1b2c-4d5e-8f90-123456789abc", "/usr/bin"] {
            assert!(plain(text).is_some(), "{text:?} should be read by the fast path");
        }
        for text in ["yes", "On", "0x1F", "1e3", "+1", ".inf", "-0", "007", "1_000", "1234567890123456789"] {
            assert!(plain(text).is_none(), "{text:?} should be left to serde-saphyr");
        }
    }

    fn budget() -> serde_saphyr::Budget {
        let mut budget = serde_saphyr::Budget::default();
        budget.max_depth = 200;
        budget
    }

    /// Random YAML built from pieces that mix what the fast path reads with what it must leave
    /// to serde-saphyr: whenever it answers, serde-saphyr reads the same documents.
    #[test]
    fn whenever_it_answers_serde_saphyr_agrees() {
        const SAFE: &[&str] = &[
            "x",
            "Running",
            "1Gi",
            "500m",
            "10.0.0.1",
            "0",
            "42",
            "-7",
            "0.5",
            "~",
            "null",
            "true",
            "\"yes\"",
            "'a: b'",
            "\"x\\ny\"",
            "\"\"",
            "''",
            "a b c",
            "2024-01-01",
            "[]",
            "{}",
            "[1, two, 3.5]",
            "{k: v, n: 1}",
            "\"multi\n  line\"",
            "e5",
            "nan",
            "-5m",
        ];
        const TRICKY: &[&str] =
            &["007", "1e3", "+1", ".inf", "yes", "No", "FALSE", "0x1F", "-0", "1_000", "12:30", "!!str 5", "&a 1", "*a", "-.5", "1.", "<<"];
        // Keys that normalisation (and so reading, `cluster::prune`) trims in some kinds too.
        const KEYS: &[&str] = &[
            "kind",
            "apiVersion",
            "items",
            "\"quoted\"",
            "'k: v'",
            "nvidia.com/gpu",
            "a",
            "b",
            "c",
            "status",
            "spec",
            "metadata",
            "conditions",
            "type",
            "managedFields",
            "manager",
        ];
        // Item kinds that read whole, in part (status, spec, managedFields) or not at all.
        const ITEM_KINDS: &[&str] = &["ConfigMap", "TrainJob", "TFJob", "PyTorchJob", "JobSet", "Namespace", "Pod", "ClusterInfo"];
        const TRICKY_KEYS: &[&str] = &["1", "yes", "<<", "null", "!!str k", "&k k", "? k"];
        // A small deterministic generator (xorshift), so a failure is reproducible.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        fn pick(list: &[&'static str], rare: &[&'static str], next: &mut dyn FnMut(usize) -> usize) -> &'static str {
            if next(40) == 0 {
                rare[next(rare.len())]
            } else {
                list[next(list.len())]
            }
        }
        fn block(out: &mut String, indent: usize, depth: usize, next: &mut dyn FnMut(usize) -> usize) {
            let pad = " ".repeat(indent);
            for _ in 0..1 + next(3) {
                let key = pick(KEYS, TRICKY_KEYS, next);
                match next(6) {
                    0 if depth < 3 => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        block(out, indent + 2, depth + 1, next);
                    }
                    1 if depth < 3 => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        for _ in 0..1 + next(3) {
                            if next(2) == 0 {
                                out.push_str(&format!("{pad}- {}\n", pick(SAFE, TRICKY, next)));
                            } else {
                                out.push_str(&format!("{pad}- k: {}\n", pick(SAFE, TRICKY, next)));
                                block(out, indent + 2, depth + 1, next);
                            }
                        }
                    }
                    2 => out.push_str(&format!("{pad}{key}: |\n{pad}  text\n{pad}  more\n")),
                    _ => out.push_str(&format!("{pad}{key}: {}\n", pick(SAFE, TRICKY, next))),
                }
            }
        }
        let (mut answered, mut total) = (0, 0);
        for _ in 0..6000 {
            let mut text = String::new();
            for d in 0..1 + next(2) {
                if d > 0 {
                    text.push_str("---\n");
                }
                if next(3) == 0 {
                    text.push_str(&format!(
                        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: {}\n",
                        ITEM_KINDS[next(ITEM_KINDS.len())]
                    ));
                    block(&mut text, 2, 1, &mut next);
                } else {
                    text.push_str("apiVersion: v1\nkind: ConfigMap\n");
                    block(&mut text, 0, 0, &mut next);
                }
            }
            total += 1;
            if let Some(fast) = read(&text, &budget()) {
                answered += 1;
                let reference = super::super::read_yaml(&text, budget());
                assert_eq!(Ok(fast), reference.map_err(|e| e.to_string()), "{text}");
            }
        }
        // Both outcomes must be exercised for the comparison to mean something.
        assert!(answered > total / 10 && answered < total, "fast path answered {answered} of {total}");
    }

    #[test]
    fn gives_up_on_what_it_would_have_to_guess() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "base: &b {x: 1}\nother:\n  <<: *b\n",
            "a: 1\na: 2\n",
            "1: one\n",
            "yes: true\n",
            "a: [1, 2\n",
            "- just\n- a list\n",
            "plain scalar\n",
            "items: 3\n",
            "items: []\nitems: []\n",
        ] {
            assert!(read(text, &budget()).is_none(), "{text:?}");
        }
        let many = "---\na: 1\n".repeat(budget().max_documents + 1);
        assert!(read(&many, &budget()).is_none(), "more documents than serde-saphyr's budget allows");
        let deep = format!("a: {}1{}\n", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        assert!(read(&deep, &budget()).is_none());
    }

    #[test]
    fn reads_lists_and_objects_like_the_reference() {
        let text = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: kubeflow-trainer-public, namespace: kubeflow-system}\n  data:\n    text: |\n      line one\n      line two\n    quoted: \"yes\"\n    single: 'x: y'\n    folded: >\n      a\n      b\nkind: List\nmetadata:\n  resourceVersion: \"\"\n---\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {pod-security.kubernetes.io/enforce: restricted}\n";
        let docs = read(text, &budget()).expect("fast path reads it");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].kind, "List");
        assert!(docs[0].object.is_none());
        assert_eq!(docs[0].items.len(), 1);
        assert!(docs[1].object.is_none() && docs[1].items.is_empty());
        let reference: Vec<Json> = serde_saphyr::from_multiple(text).expect("reference");
        assert_eq!(docs[0].items[0], reference[0]["items"][0]);
        assert_eq!(docs[2].object.as_ref(), reference.last());
    }

    /// TrainJobs as `kubectl get -o yaml` writes them, in the shapes the benchmark uses.
    fn trainjob_list(count: usize) -> String {
        let mut text = String::from("apiVersion: v1\nitems:\n");
        for i in 0..count {
            text.push_str(&format!(
                "- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: TrainJob\n  metadata:\n    creationTimestamp: \"2026-06-21T08:00:00Z\"\n    name: job-{i:05}\n    namespace: team-{:03}\n    uid: {:08x}-1b2c-4d5e-8f90-123456789abc\n  spec:\n    runtimeRef:\n      apiGroup: trainer.kubeflow.org\n      kind: ClusterTrainingRuntime\n      name: torch-distributed\n    trainer:\n      numNodes: {}\n      numProcPerNode: {}\n      resourcesPerNode:\n        limits:\n          cpu: 500m\n          memory: 1.5Gi\n          nvidia.com/gpu: 4\n    podTemplateOverrides:\n    - targetJobs:\n      - name: node\n      spec:\n        nodeSelector: {{pool: gpu}}\n        tolerations: []\n  status:\n    conditions:\n    - message: |-\n        generated\n        twice\n      reason: Generated\n      status: \"True\"\n      type: Complete\n",
                i % 7,
                i * 7919,
                i % 3,
                if i % 2 == 0 { "auto".to_string() } else { (i % 5).to_string() },
            ));
        }
        text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
        text
    }

    /// The fast path and serde-saphyr build the same documents from every scenario snapshot
    /// (snapshots/) and from a list of TrainJobs, and the fast path does not give up on them.
    #[test]
    fn same_documents_as_serde_saphyr_for_the_scenarios() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
        let mut texts: Vec<(String, String)> = std::fs::read_dir(&dir)
            .expect("snapshots/ exists")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("snapshot text")))
            .collect();
        assert!(texts.len() >= 4, "scenario snapshots in {}", dir.display());
        texts.push(("generated TrainJobs".into(), trainjob_list(300)));
        for (name, text) in texts {
            let fast = read(&text, &super::super::yaml_budget()).unwrap_or_else(|| panic!("fast path gave up on {name}"));
            let reference = super::super::read_yaml(&text, super::super::yaml_budget()).expect("reference reads it");
            assert_eq!(fast, reference, "{name}");
        }
    }
}
