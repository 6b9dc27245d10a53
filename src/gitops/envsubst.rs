//! Flux post-build variable substitution (`${var}`, `${var:=default}`, `${var:-default}`,
//! `${var=default}`, `${var-default}`; `$${var}` escapes), as kustomize-controller applies it
//! through fluxcd/pkg/envsubst. One pass: a substituted value is not expanded again, so
//! variables that name each other cannot loop. The string functions (`${var:0:3}`,
//! `${var/a/b}`, `${var^^}`…) are reported as not evaluated rather than guessed.
//!
//! Substitution is applied to each scalar of a parsed document (keys too). A plain scalar is
//! typed again after substitution (`replicas: ${n}` with `n: "3"` is the number 3); a quoted one
//! stays a string. Flux substitutes the serialised build output instead, so a value holding YAML
//! syntax (newlines, `{`, `: `) would become structure there and stays a string here.

use std::collections::{BTreeMap, BTreeSet};

use super::yaml::{Kind, Node, Pos};

/// Nesting of `${a:=${b:=…}}` defaults.
const MAX_NESTING: usize = 16;
/// A substituted scalar longer than this is cut off and reported (values are not re-expanded,
/// so only a huge variable times many uses can grow a document).
const MAX_SCALAR_CHARS: usize = 1 << 20;

/// What substituting one text found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Variables used without a value or default (Flux writes an empty string).
    pub undefined: Vec<(String, usize)>,
    /// Expressions trainer-audit does not evaluate, with their char offset.
    pub unsupported: Vec<(String, usize)>,
    /// Every variable referenced, with its char offset.
    pub used: Vec<(String, usize)>,
}

/// Substitutes `${…}` in `text`; offsets in `Found` count chars from the start of `text`.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> (String, Found) {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Found::default();
    let out = expand(&chars, 0, vars, &mut found, 0);
    (out, found)
}

/// True when `text` has a `${` that substitution would touch.
pub fn has_variables(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| b[i] == b'$' && b[i + 1] == b'{' && (i == 0 || b[i - 1] != b'$'))
}

fn expand(chars: &[char], base: usize, vars: &BTreeMap<String, String>, found: &mut Found, depth: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' && chars.get(i + 1) == Some(&'$') && chars.get(i + 2) == Some(&'{') {
            out.push_str("${");
            i += 3;
            continue;
        }
        if chars[i] != '$' || chars.get(i + 1) != Some(&'{') {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let Some(end) = closing(chars, i + 2) else {
            // An unclosed `${` is left as written.
            out.extend(&chars[i..]);
            break;
        };
        let inner = &chars[i + 2..end];
        out.push_str(&evaluate(inner, base + i, vars, found, depth));
        i = end + 1;
    }
    out
}

/// The index of the `}` closing an expression whose body starts at `from`.
fn closing(chars: &[char], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '$' if chars.get(i + 1) == Some(&'{') => {
                depth += 1;
                i += 1;
            }
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn evaluate(inner: &[char], at: usize, vars: &BTreeMap<String, String>, found: &mut Found, depth: usize) -> String {
    let written: String = format!("${{{}}}", inner.iter().collect::<String>());
    let name_len = inner.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').count();
    let name: String = inner[..name_len].iter().collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        found.unsupported.push((written.clone(), at));
        return written;
    }
    found.used.push((name.clone(), at));
    let rest = &inner[name_len..];
    let value = vars.get(&name);
    let (op, default): (&str, &[char]) = match rest {
        [] => ("", &[]),
        [':', '=', d @ ..] => (":=", d),
        [':', '-', d @ ..] => (":-", d),
        ['=', d @ ..] => ("=", d),
        ['-', d @ ..] => ("-", d),
        _ => {
            found.unsupported.push((written.clone(), at));
            return written;
        }
    };
    let use_default = match op {
        "" => false,
        ":=" | ":-" => value.is_none_or(|v| v.is_empty()),
        _ => value.is_none(),
    };
    if use_default {
        if depth >= MAX_NESTING {
            found.unsupported.push((written.clone(), at));
            return written;
        }
        return expand(default, at + 2 + name_len + op.len(), vars, found, depth + 1);
    }
    match value {
        Some(v) => v.clone(),
        None => {
            found.undefined.push((name, at));
            String::new()
        }
    }
}

/// A variable use found while substituting a document, located in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub name: String,
    pub at: Pos,
    pub kind: UseKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseKind {
    Defined,
    Undefined,
    Unsupported,
}

/// What a value taken from a Secret prints as (secrets are never printed): a values entry, or
/// a single-line scalar a Secret's variable lands in.
pub const REDACTED: &str = "(redacted: from a Secret)";

/// What a Secret's variable becomes inside a multi-line scalar (embedded YAML): plain-scalar
/// safe, so the text still parses. A single-line scalar it lands in becomes
/// [`REDACTED`] as a whole.
pub const REDACTED_INLINE: &str = "(redacted from a Secret)";

/// Substitutes every scalar of `node` in place and returns what it met.
pub fn substitute_node(node: &mut Node, vars: &BTreeMap<String, String>) -> Vec<Use> {
    substitute_node_redacting(node, vars, &BTreeSet::new())
}

/// As [`substitute_node`], with the variables in `secret` (values from Secrets) redacted: a
/// single-line scalar using one becomes [`REDACTED`], and in a multi-line one
/// each use becomes [`REDACTED_INLINE`].
pub fn substitute_node_redacting(node: &mut Node, vars: &BTreeMap<String, String>, secret: &BTreeSet<String>) -> Vec<Use> {
    let mut uses = Vec::new();
    let masked: BTreeMap<String, String> =
        vars.iter().map(|(k, v)| (k.clone(), if secret.contains(k) { REDACTED_INLINE.to_string() } else { v.clone() })).collect();
    walk(node, &Vars { plain: vars, masked: &masked, secret }, &mut uses);
    uses
}

struct Vars<'a> {
    plain: &'a BTreeMap<String, String>,
    masked: &'a BTreeMap<String, String>,
    secret: &'a BTreeSet<String>,
}

fn walk(node: &mut Node, vars: &Vars, uses: &mut Vec<Use>) {
    let at = node.at;
    match &mut node.kind {
        Kind::Scalar { text, plain } => {
            if !has_variables(text) && !text.contains("$${") {
                return;
            }
            let (mut out, found) = substitute(text, vars.plain);
            let secret_used = found.used.iter().any(|(name, _)| vars.secret.contains(name));
            if secret_used {
                out = if text.contains('\n') { substitute(text, vars.masked).0 } else { REDACTED.to_string() };
            }
            // A single-line scalar's column is exact; a quoted one starts after its quote.
            let shift = if *plain { 0 } else { 1 };
            let single_line = !text.contains('\n');
            let pos = |offset: usize| if single_line { Pos { line: at.line, column: at.column + shift + offset as u32 } } else { at };
            for (name, offset) in &found.used {
                let kind =
                    if found.undefined.iter().any(|(n, o)| n == name && o == offset) { UseKind::Undefined } else { UseKind::Defined };
                uses.push(Use { name: name.clone(), at: pos(*offset), kind });
            }
            for (expr, offset) in &found.unsupported {
                uses.push(Use { name: expr.clone(), at: pos(*offset), kind: UseKind::Unsupported });
            }
            if out.chars().count() > MAX_SCALAR_CHARS {
                out = out.chars().take(MAX_SCALAR_CHARS).collect();
                uses.push(Use { name: "(value cut off: over a million characters)".into(), at, kind: UseKind::Unsupported });
            }
            *text = out;
        }
        Kind::Seq(items) => items.iter_mut().for_each(|n| walk(n, vars, uses)),
        Kind::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                walk(k, vars, uses);
                walk(v, vars, uses);
            }
        }
    }
}

/// Variable uses in a document that no Kustomization substitutes (left as written).
pub fn unsubstituted(node: &Node) -> Vec<Use> {
    let mut copy = node.clone();
    let mut uses = substitute_node(&mut copy, &BTreeMap::new());
    for u in &mut uses {
        if u.kind == UseKind::Defined {
            // Defaulted: the default would apply, but nothing substitutes this file at all.
            u.kind = UseKind::Undefined;
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn forms() {
        let v = vars(&[("a", "1"), ("empty", "")]);
        let cases = [
            ("${a}", "1"),
            ("x-${a}-y", "x-1-y"),
            ("${b:=dflt}", "dflt"),
            ("${empty:=dflt}", "dflt"),
            ("${empty=dflt}", ""),
            ("${empty:-d}", "d"),
            ("${b-d}", "d"),
            ("${b:=${a}}", "1"),
            ("$${a}", "${a}"),
            ("$a", "$a"),
            ("${a", "${a"),
        ];
        for (input, want) in cases {
            assert_eq!(substitute(input, &v).0, want, "{input}");
        }
    }

    #[test]
    fn undefined_and_unsupported_are_reported() {
        let (out, found) = substitute("v${missing}/${a:0:2}", &vars(&[("a", "xyz")]));
        assert_eq!(out, "v/${a:0:2}");
        assert_eq!(found.undefined, vec![("missing".to_string(), 1)]);
        assert_eq!(found.unsupported, vec![("${a:0:2}".to_string(), 12)]);
    }

    #[test]
    fn cyclic_variables_do_not_loop() {
        let v = vars(&[("a", "${b}"), ("b", "${a}")]);
        assert_eq!(substitute("${a}", &v).0, "${b}");
        let deep = format!("{}x{}", "${v:=".repeat(100), "}".repeat(100));
        let (_, found) = substitute(&deep, &v);
        assert_eq!(found.unsupported.len(), 1);
    }

    #[test]
    fn secret_variables_are_redacted() {
        let mut docs = crate::gitops::yaml::read_documents("a: \"Bearer ${tok}\"\nb: |\n  k: ${tok}\n  v: ${ver}\nc: ${ver}\n").unwrap();
        let secret: BTreeSet<String> = ["tok".to_string()].into();
        let uses = substitute_node_redacting(&mut docs[0], &vars(&[("tok", "s3cret"), ("ver", "2.3.0")]), &secret);
        assert_eq!(docs[0].str_at(&["a"]), Some(REDACTED), "a single-line scalar is redacted whole");
        assert_eq!(docs[0].str_at(&["b"]), Some("k: (redacted from a Secret)\nv: 2.3.0\n"), "embedded YAML keeps parsing");
        assert_eq!(docs[0].str_at(&["c"]), Some("2.3.0"));
        assert_eq!(uses.iter().filter(|u| u.name == "tok").count(), 2, "uses are still reported");
    }

    #[test]
    fn node_substitution_locates_each_variable() {
        let mut docs = crate::gitops::yaml::read_documents("spec:\n  version: ${ver}\n  tag: \"v-${nope}\"\n").unwrap();
        let uses = substitute_node(&mut docs[0], &vars(&[("ver", "2.3.0")]));
        assert_eq!(docs[0].str_at(&["spec", "version"]), Some("2.3.0"));
        assert_eq!(uses[0], Use { name: "ver".into(), at: Pos { line: 2, column: 12 }, kind: UseKind::Defined });
        assert_eq!(uses[1], Use { name: "nope".into(), at: Pos { line: 3, column: 11 }, kind: UseKind::Undefined });
    }
}
