//! A citation's quotes: each key names text of the cited source (a rule's `source:` or a
//! compatibility row's), and each quote says what that text supports; `cargo xtask citations`
//! then checks the quote against the cited lines.

use std::collections::BTreeMap;

/// A `quotes` key that does not appear in its source, or a quote that is empty.
pub fn unquoted_key<'a>(source: &str, quotes: &'a BTreeMap<String, String>) -> Option<&'a str> {
    quotes.iter().find(|(k, v)| k.trim().is_empty() || v.trim().is_empty() || !source.contains(k.as_str())).map(|(k, _)| k.as_str())
}
