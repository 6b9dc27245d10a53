//! Reading YAML the way Helm does (sigs.k8s.io/yaml: go-yaml v2, then JSON): YAML 1.1 scalar
//! typing, every number a float64, map keys stringified (`yes:` is the key `"true"`), merge
//! keys, anchors copied per alias, `.inf`/`.nan` refused. Bounded against alias bombs and deep
//! nesting.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::resolve::{resolve_plain, Resolved};
use gotmpl::{Map, Value};

/// Nodes an alias expansion may add to one document before it is refused as a bomb.
const MAX_EXPANDED_NODES: usize = 2_000_000;
/// Nesting of collections.
const MAX_DEPTH: usize = 1_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// Every document of a stream (empty documents are `Value::Nil`).
pub fn read_documents(text: &str) -> Result<Vec<Value>, YamlError> {
    let mut builder = Builder::new(text);
    builder.run()
}

/// The first document, as `fromYaml` and single values files read it (Nil when empty).
pub fn read_first(text: &str) -> Result<Value, YamlError> {
    Ok(read_documents(text)?.into_iter().next().unwrap_or(Value::Nil))
}

/// The first document with only what Helm's `SimpleHead` reads built: top-level scalars, `kind`,
/// and `metadata.name` / `metadata.annotations`; other collections become `Nil`. The whole
/// stream is still parsed and every error `read_first` would raise is raised, so callers can
/// use it wherever only the head matters (rendered CRDs are megabytes of schema). Documents
/// with anchors, aliases or merge keys are read in full, since a head may borrow from them.
pub fn read_first_head(text: &str) -> Result<Value, YamlError> {
    let mut builder = Builder::new(text);
    builder.skim = true;
    match builder.run() {
        Err(_) if builder.needs_full => read_first(text),
        other => Ok(other?.into_iter().next().unwrap_or(Value::Nil)),
    }
}

/// An open collection and the number of nodes under it (aliases counted at full size).
enum Frame {
    Seq {
        anchor: usize,
        items: Vec<Value>,
        size: usize,
        keep: Keep,
    },
    Map {
        anchor: usize,
        entries: Map,
        key: Option<String>,
        merges: Vec<Value>,
        pending_merge: bool,
        size: usize,
        keep: Keep,
    },
    /// A collection a head read does not need: parsed and checked, never built.
    Skip {
        map: bool,
        awaiting_key: bool,
    },
}

/// How much of a built collection a head read keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    All,
    /// The document root or `metadata`: only the head's children are built.
    HeadPath,
}

/// Marks the skim that met an anchor, alias or merge key (the caller reads in full instead).
const NEEDS_FULL: &str = "skim needs a full read";

struct Builder<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    anchors: HashMap<usize, (Value, usize)>,
    stack: Vec<Frame>,
    expanded: usize,
    /// Build only the head (see [`read_first_head`]).
    skim: bool,
    needs_full: bool,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str) -> Builder<'a> {
        Builder {
            parser: Parser::new_from_str(text),
            anchors: HashMap::new(),
            stack: Vec::new(),
            expanded: 0,
            skim: false,
            needs_full: false,
        }
    }

    fn run(&mut self) -> Result<Vec<Value>, YamlError> {
        let mut docs = Vec::new();
        let mut current: Option<Value> = None;
        let mut in_doc = false;
        while let Some(event) = self.parser.next_event() {
            let (event, span) = event.map_err(|e| {
                let info = first_line(e.info());
                let is_parser_error = info.starts_with("while parsing");
                let line = go_yaml_line(e.marker().line(), is_parser_error);
                let wording = libyaml_wording(info);
                if line == 0 {
                    YamlError(format!("yaml: {wording}"))
                } else {
                    YamlError(format!("yaml: line {line}: {wording}"))
                }
            })?;
            let line = span.start.line();
            match event {
                Event::StreamStart | Event::Nothing => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    in_doc = true;
                    current = None;
                    self.anchors.clear();
                    self.expanded = 0;
                }
                Event::DocumentEnd => {
                    if in_doc {
                        docs.push(current.take().unwrap_or(Value::Nil));
                    }
                    in_doc = false;
                }
                Event::Alias(_) if self.skim => return Err(self.give_up()),
                Event::Alias(id) => {
                    let (value, size) =
                        self.anchors.get(&id).cloned().ok_or_else(|| YamlError(format!("yaml: line {line}: unknown anchor referenced")))?;
                    self.expanded += size;
                    if self.expanded > MAX_EXPANDED_NODES {
                        return Err(YamlError("yaml: document contains excessive aliasing".into()));
                    }
                    self.value(value.deep_copy(), size, &mut current)?;
                }
                Event::Scalar(_, _, anchor, _) | Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _)
                    if self.skim && anchor > 0 =>
                {
                    return Err(self.give_up());
                }
                Event::Scalar(text, style, _, tag) if matches!(self.stack.last(), Some(Frame::Skip { .. })) => {
                    self.skip_scalar(&text, style, tag.as_ref().map(|t| (t.handle.clone(), t.suffix.clone())), line)?;
                }
                Event::Scalar(text, style, anchor, tag) => {
                    let is_key = matches!(self.stack.last(), Some(Frame::Map { key: None, .. }));
                    let tag_suffix = tag.as_ref().map(|t| (t.handle.clone(), t.suffix.clone()));
                    if is_key {
                        let key = self.scalar_key(&text, style, tag_suffix.as_ref(), line)?;
                        if let Some(Frame::Map { key: slot, pending_merge, .. }) = self.stack.last_mut() {
                            if style == ScalarStyle::Plain && text == "<<" && tag_suffix.is_none() {
                                if self.skim {
                                    self.needs_full = true;
                                    return Err(YamlError(NEEDS_FULL.into()));
                                }
                                *pending_merge = true;
                            }
                            *slot = Some(key);
                        }
                        continue;
                    }
                    let value = scalar_value(&text, style, tag_suffix.as_ref(), line)?;
                    if anchor > 0 {
                        self.anchors.insert(anchor, (value.clone(), 1));
                    }
                    self.value(value, 1, &mut current)?;
                }
                Event::SequenceStart(anchor, _) => {
                    self.guard_key(line)?;
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(YamlError(format!("yaml: line {line}: exceeded max depth of {MAX_DEPTH}")));
                    }
                    match self.keep_child() {
                        Some(keep) => self.stack.push(Frame::Seq { anchor, items: Vec::new(), size: 1, keep }),
                        None => self.stack.push(Frame::Skip { map: false, awaiting_key: false }),
                    }
                }
                Event::MappingStart(anchor, _) => {
                    self.guard_key(line)?;
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(YamlError(format!("yaml: line {line}: exceeded max depth of {MAX_DEPTH}")));
                    }
                    match self.keep_child() {
                        Some(keep) => self.stack.push(Frame::Map {
                            anchor,
                            entries: Map::new(),
                            key: None,
                            merges: Vec::new(),
                            pending_merge: false,
                            size: 1,
                            keep,
                        }),
                        None => self.stack.push(Frame::Skip { map: true, awaiting_key: true }),
                    }
                }
                Event::SequenceEnd | Event::MappingEnd if matches!(self.stack.last(), Some(Frame::Skip { .. })) => {
                    self.stack.pop();
                    self.value(Value::Nil, 1, &mut current)?;
                }
                Event::SequenceEnd => {
                    if let Some(Frame::Seq { anchor, items, size, .. }) = self.stack.pop() {
                        let value = Value::list(items);
                        if anchor > 0 {
                            self.anchors.insert(anchor, (value.clone(), size));
                        }
                        self.value(value, size, &mut current)?;
                    }
                }
                Event::MappingEnd => {
                    if let Some(Frame::Map { anchor, mut entries, merges, size, .. }) = self.stack.pop() {
                        // Merged keys never override the mapping's own keys.
                        for merged in merges {
                            if let Value::Map(m) = merged {
                                for (k, v) in m.entries.borrow().iter() {
                                    entries.entry(k.clone()).or_insert_with(|| v.clone());
                                }
                            }
                        }
                        let value = Value::map(entries);
                        if anchor > 0 {
                            self.anchors.insert(anchor, (value.clone(), size));
                        }
                        self.value(value, size, &mut current)?;
                    }
                }
            }
        }
        if in_doc {
            docs.push(current.take().unwrap_or(Value::Nil));
        }
        Ok(docs)
    }

    fn give_up(&mut self) -> YamlError {
        self.needs_full = true;
        YamlError(NEEDS_FULL.into())
    }

    /// Whether a collection starting now is built, and how much of it (`None`: skipped).
    fn keep_child(&self) -> Option<Keep> {
        if !self.skim {
            return Some(Keep::All);
        }
        let depth = self.stack.len();
        match self.stack.last() {
            None => Some(Keep::HeadPath),
            Some(Frame::Skip { .. }) => None,
            Some(Frame::Seq { keep: Keep::All, .. } | Frame::Map { keep: Keep::All, .. }) => Some(Keep::All),
            Some(Frame::Seq { .. }) => None,
            Some(Frame::Map { key, .. }) => match (depth, key.as_deref()) {
                (1, Some("metadata")) => Some(Keep::HeadPath),
                (1, Some("kind")) | (2, Some("name" | "annotations")) => Some(Keep::All),
                _ => None,
            },
        }
    }

    /// A scalar inside a skipped collection: only the errors building it would raise.
    fn skip_scalar(&mut self, text: &str, style: ScalarStyle, tag: Option<(String, String)>, line: usize) -> Result<(), YamlError> {
        let Some(Frame::Skip { map, awaiting_key }) = self.stack.last_mut() else { return Ok(()) };
        let is_key = *map && *awaiting_key;
        if *map {
            *awaiting_key = !*awaiting_key;
        }
        if is_key {
            if style == ScalarStyle::Plain && text == "<<" && tag.is_none() {
                return Err(self.give_up());
            }
            if style == ScalarStyle::Plain && tag.is_none() && !matches!(resolve_plain(text), Resolved::Null) {
                return Ok(());
            }
            return self.scalar_key(text, style, tag.as_ref(), line).map(|_| ());
        }
        let may_fail =
            tag.is_some() || (style == ScalarStyle::Plain && matches!(resolve_plain(text), Resolved::Float(f) if !f.is_finite()));
        if may_fail {
            scalar_value(text, style, tag.as_ref(), line)?;
        }
        Ok(())
    }

    /// Collections as mapping keys cannot become JSON object keys.
    fn guard_key(&self, line: usize) -> Result<(), YamlError> {
        if matches!(self.stack.last(), Some(Frame::Map { key: None, .. }) | Some(Frame::Skip { map: true, awaiting_key: true })) {
            return Err(YamlError(format!("yaml: line {line}: invalid map key: a collection")));
        }
        Ok(())
    }

    fn scalar_key(&self, text: &str, style: ScalarStyle, tag: Option<&(String, String)>, line: usize) -> Result<String, YamlError> {
        if style != ScalarStyle::Plain || tag.is_some_and(|t| t.1 == "str") {
            return Ok(text.to_string());
        }
        Ok(match resolve_plain(text) {
            Resolved::Str | Resolved::Timestamp | Resolved::Merge => text.to_string(),
            Resolved::Bool(b) => b.to_string(),
            Resolved::Int(i) => i.to_string(),
            Resolved::Uint(u) => u.to_string(),
            Resolved::Float(f) => format_key_float(f),
            Resolved::Null => return Err(YamlError(format!("yaml: line {line}: unsupported map key of type: %!s(<nil>)"))),
        })
    }

    /// Attaches a finished value to its parent (or makes it the document).
    fn value(&mut self, value: Value, value_size: usize, current: &mut Option<Value>) -> Result<(), YamlError> {
        match self.stack.last_mut() {
            None => *current = Some(value),
            Some(Frame::Skip { map, awaiting_key }) => {
                if *map {
                    *awaiting_key = true;
                }
            }
            Some(Frame::Seq { items, size, .. }) => {
                *size += value_size;
                items.push(value);
            }
            Some(Frame::Map { entries, key, merges, pending_merge, size, .. }) => {
                *size += value_size;
                if key.is_none() {
                    // An alias or collection used as a key.
                    let k = match &value {
                        Value::String(s) => s.to_string(),
                        Value::Float(f) => format_key_float(*f),
                        Value::Bool(b) => b.to_string(),
                        _ => return Err(YamlError("yaml: invalid map key".into())),
                    };
                    *key = Some(k);
                    return Ok(());
                }
                let k = key.take().unwrap_or_default();
                if *pending_merge {
                    *pending_merge = false;
                    match &value {
                        Value::Map(_) => merges.push(value),
                        Value::List(l) => {
                            // Earlier maps in the list win over later ones.
                            for item in l.items.iter() {
                                if !matches!(item, Value::Map(_)) {
                                    return Err(YamlError("yaml: map merge requires map or sequence of maps as the value".into()));
                                }
                                merges.push(item.clone());
                            }
                        }
                        _ => return Err(YamlError("yaml: map merge requires map or sequence of maps as the value".into())),
                    }
                    return Ok(());
                }
                entries.insert(k, value);
            }
        }
        Ok(())
    }
}

/// sigs.k8s.io/yaml formats float keys with 32-bit precision.
fn format_key_float(f: f64) -> String {
    let f32v = f as f32;
    let text = format!("{f32v:e}");
    let _ = text;
    gotmpl::fmt::format_float_g(f32v as f64, Some(short_digits_f32(f32v)), false)
}

fn short_digits_f32(f: f32) -> usize {
    let text = format!("{:e}", f.abs());
    let mantissa = text.split('e').next().unwrap_or("0");
    mantissa.chars().filter(|c| c.is_ascii_digit()).count().max(1)
}

fn scalar_value(text: &str, style: ScalarStyle, tag: Option<&(String, String)>, line: usize) -> Result<Value, YamlError> {
    if let Some((handle, suffix)) = tag {
        if handle == "!!" || handle == "tag:yaml.org,2002:" {
            match suffix.as_str() {
                "str" => return Ok(Value::str(text)),
                "binary" => {
                    use base64::Engine;
                    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(cleaned)
                        .map_err(|_| YamlError(format!("yaml: line {line}: !!binary value contains invalid base64 data")))?;
                    return Ok(Value::string(String::from_utf8_lossy(&bytes).into_owned()));
                }
                "null" => return Ok(Value::Nil),
                _ => {}
            }
        }
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::str(text));
    }
    Ok(match resolve_plain(text) {
        Resolved::Null => Value::Nil,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::Float(i as f64),
        Resolved::Uint(u) => Value::Float(u as f64),
        Resolved::Float(f) if !f.is_finite() => {
            let which = if f.is_nan() {
                "NaN"
            } else if f > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            };
            return Err(YamlError(format!("json: unsupported value: {which}")));
        }
        Resolved::Float(f) => Value::Float(f),
        Resolved::Timestamp | Resolved::Merge | Resolved::Str => Value::str(text),
    })
}

/// libyaml words problems as "did not find expected …" without the "while parsing" context.
/// The line go-yaml prints for an error whose problem is on `marker_line` (1-based), or 0 for
/// none: go.yaml.in/yaml/v2@v2.4.3 decode.go#L111-L133 (`parser.fail`, which sigs.k8s.io/yaml
/// v1.6.0 and so Helm's `fromYaml` go through) prints libyaml's 0-based problem line, plus one for
/// a scanner error, and no line at all when the problem is on the first line (0-based 0: it falls
/// back to the context mark's line, which is never later).
fn go_yaml_line(marker_line: usize, is_parser_error: bool) -> usize {
    match marker_line.saturating_sub(1) {
        0 => 0,
        zero_based if is_parser_error => zero_based,
        zero_based => zero_based + 1,
    }
}

/// The message go-yaml prints: libyaml's `problem` alone, without the context it was found in
/// (`while parsing a block mapping`, `while scanning a quoted scalar`): decode.go#L126-L131.
fn libyaml_wording(info: &str) -> String {
    let problem = match info.split_once(", ") {
        Some((context, problem)) if context.starts_with("while parsing") || context.starts_with("while scanning") => problem,
        _ => info,
    };
    if problem.starts_with("simple key expected") {
        // libyaml's scanner: "while scanning a simple key … could not find expected ':'".
        return "could not find expected ':'".to_string();
    }
    match problem.strip_prefix("expected ") {
        Some(rest) => format!("did not find expected {rest}"),
        None => problem.to_string(),
    }
}

fn first_line(info: &str) -> &str {
    info.lines().next().unwrap_or(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gotmpl::fmt::sprint_value;

    fn show(text: &str) -> String {
        sprint_value(&read_first(text).unwrap())
    }

    /// Issue 20: Helm's `fromYaml` of "a: b: c" prints no `line 1:` (helm-oracle render, Helm
    /// v4.2.3); the same error on the second line prints `line 2:`.
    #[test]
    fn error_lines_follow_go_yaml() {
        let err = |text: &str| read_first(text).unwrap_err().0;
        assert_eq!(err("a: b: c"), "yaml: mapping values are not allowed in this context");
        assert_eq!(err("x: 1\na: b: c"), "yaml: line 2: mapping values are not allowed in this context");
        assert_eq!(err("a: 'x"), "yaml: found unexpected end of stream");
        assert_eq!(err("x: 1\ny: 'x"), "yaml: line 2: found unexpected end of stream");
        assert_eq!((go_yaml_line(1, true), go_yaml_line(1, false)), (0, 0));
        assert_eq!((go_yaml_line(3, true), go_yaml_line(3, false)), (2, 3));
    }

    #[test]
    fn types_values_like_helm() {
        assert_eq!(
            show("a: 1\nb: 1e6\nc: yes\nd: ~\ne: \"1.0\"\nf: 0x1F\ng: 2001-12-14"),
            "map[a:1 b:1e+06 c:true d:<nil> e:1.0 f:31 g:2001-12-14]"
        );
        assert_eq!(show("{1: a, 2: b, 10: c, true: x, y: z}"), "map[1:a 10:c 2:b true:z]");
        assert_eq!(show("base: &b {x: 1}\nuse: *b\nmerged:\n  <<: *b\n  y: 2"), "map[base:map[x:1] merged:map[true:2 x:1] use:map[x:1]]");
        assert_eq!(show("huge: 12345678901234567890"), "map[huge:1.2345678901234567e+19]");
    }

    #[test]
    fn refuses_what_json_cannot_hold() {
        assert!(read_first("x: .inf").unwrap_err().0.contains("unsupported value: +Inf"));
        assert!(read_first("~: x").unwrap_err().0.contains("unsupported map key"));
    }

    #[test]
    fn bounds_alias_bombs_and_depth() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        assert!(read_first(&bomb).unwrap_err().0.contains("excessive aliasing"));
        let deep = "[".repeat(5000) + &"]".repeat(5000);
        assert!(read_first(&deep).is_err());
    }

    #[test]
    fn head_reads_agree_with_full_reads() {
        let head = |text: &str| read_first_head(text).map(|v| sprint_value(&v));
        // What the head keeps is identical; everything else is Nil.
        assert_eq!(
            head("kind: Job\nmetadata:\n  name: j\n  labels: {a: b}\n  annotations: {x: [1, 2]}\nspec:\n  deep: {a: [1, {b: c}]}\n")
                .unwrap(),
            "map[kind:Job metadata:map[annotations:map[x:[1 2]] labels:<nil> name:j] spec:<nil>]"
        );
        assert_eq!(head("kind: {a: 1}\n").unwrap(), "map[kind:map[a:1]]");
        // Anchors, aliases and merge keys fall back to a full read, so borrowed heads resolve.
        let borrowed = "spec: &m {name: from-spec}\nmetadata: *m\n";
        assert_eq!(head(borrowed).unwrap(), sprint_value(&read_first(borrowed).unwrap()));
        let merged = "metadata:\n  <<: {name: merged}\n";
        assert_eq!(head(merged).unwrap(), "map[metadata:map[name:merged]]");
        // Errors deep inside skipped collections are still raised, with the same text.
        for bad in [
            "spec:\n  a: [1, .inf]\n",
            "spec:\n  ~: x\n",
            "spec:\n  ? [a]\n  : x\n",
            "spec:\n  b: !!binary \"%%%\"\n",
            "spec:\n  a: [1, 2\n",
            "spec:\n  a: b: c\n",
            "a: 1\n---\nspec: {x: .nan}\n",
        ] {
            assert_eq!(read_first_head(bad).unwrap_err(), read_first(bad).unwrap_err(), "{bad:?}");
        }
    }

    #[test]
    fn multi_document_streams() {
        let docs = read_documents("a: 1\n---\nb: 2\n---\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert!(matches!(docs[2], Value::Nil));
    }
}
