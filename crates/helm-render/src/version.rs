//! Version constraints with the semantics of Masterminds/semver v3, which Helm uses to resolve
//! `--version` ranges (`~2.2`, `^2`, `>=2.4`, `2.2.x`, `1.0 - 2.0`, `a || b`). Cargo's `VersionReq`
//! reads the same strings differently (a bare `2.2` is `^2.2` there, `=2.2.x` here; no `||`, no
//! hyphen ranges), so the rules are written out here over `semver::Version`.
//!
//! Pre-release versions only satisfy a constraint whose own version names a pre-release.

use std::cmp::Ordering;
use std::fmt;

use semver::{BuildMetadata, Prerelease, Version};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{input}' is not a version or version range (try 2.3.0, ~2.3, ^2, '>=2.2 <2.4')")]
pub struct ConstraintError {
    pub input: String,
}

/// An OR of AND-groups of single comparisons.
#[derive(Debug, Clone)]
pub struct Constraint {
    source: String,
    groups: Vec<Vec<Term>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// Which parts of the constraint's version were wildcards or missing (`2` → minor, `2.2` → patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wildcard {
    None,
    /// The major part itself (`*`, `x`): only the dirty flag is set, as in Masterminds.
    Major,
    Minor,
    Patch,
}

#[derive(Debug, Clone)]
struct Term {
    op: Op,
    version: Version,
    wildcard: Wildcard,
}

impl Constraint {
    pub fn parse(input: &str) -> Result<Constraint, ConstraintError> {
        let error = || ConstraintError { input: input.to_string() };
        let mut groups = Vec::new();
        for group in input.split("||") {
            let tokens = expand_hyphen_ranges(tokenize(group));
            let mut terms = Vec::new();
            let mut i = 0;
            while i < tokens.len() {
                let (op_text, rest) = split_operator(&tokens[i]);
                let operand = if rest.is_empty() {
                    i += 1;
                    tokens.get(i).cloned().ok_or_else(error)?
                } else {
                    rest.to_string()
                };
                if op_text.is_empty() && !split_operator(&operand).0.is_empty() {
                    return Err(error());
                }
                let op = operator(op_text).ok_or_else(error)?;
                let (version, wildcard) = parse_operand(&operand).ok_or_else(error)?;
                terms.push(Term { op, version, wildcard });
                i += 1;
            }
            if terms.is_empty() {
                if !group.trim().is_empty() || input.contains("||") {
                    return Err(error());
                }
                // An empty constraint means "any release", like `*`.
                terms.push(Term { op: Op::TildeOrEqual, version: Version::new(0, 0, 0), wildcard: Wildcard::Major });
            }
            groups.push(terms);
        }
        Ok(Constraint { source: input.to_string(), groups })
    }

    pub fn matches(&self, version: &Version) -> bool {
        self.groups.iter().any(|group| group.iter().all(|term| term.matches(version)))
    }

    /// True when some term names a pre-release, i.e. pre-releases can match at all.
    pub fn admits_prereleases(&self) -> bool {
        self.groups.iter().flatten().any(|t| !t.version.pre.is_empty())
    }
}

impl<'de> serde::Deserialize<'de> for Constraint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Constraint::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Constraint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Masterminds-compatible lenient version parsing (`v1.2`, `1`, `1.2.3-rc.1+b`), used for
/// constraint operands and for deciding whether a `--version` is exact.
pub fn parse_lenient(input: &str) -> Option<Version> {
    let (version, wildcard) = parse_operand(input)?;
    (wildcard == Wildcard::None || !input.contains(['x', 'X', '*'])).then_some(version)
}

/// Strict semver (`MAJOR.MINOR.PATCH[-pre][+build]`, no `v`, no leading zeros), as Helm requires
/// of tags.
pub fn parse_strict(input: &str) -> Option<Version> {
    Version::parse(input).ok()
}

/// Semver precedence: build metadata does not count.
pub fn precedence(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

impl Term {
    fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        let dirty = self.wildcard != Wildcard::None;
        let minor_dirty = self.wildcard == Wildcard::Minor;
        let patch_dirty = self.wildcard == Wildcard::Patch;
        let excluded_prerelease = !v.pre.is_empty() && c.pre.is_empty();
        let cmp = precedence(v, c);
        match self.op {
            Op::TildeOrEqual => {
                if excluded_prerelease {
                    false
                } else if dirty {
                    tilde(v, c, self.wildcard)
                } else {
                    cmp == Ordering::Equal
                }
            }
            Op::NotEqual => {
                if !dirty {
                    return cmp != Ordering::Equal;
                }
                if excluded_prerelease {
                    return false;
                }
                if c.major != v.major || (c.minor != v.minor && !minor_dirty) {
                    true
                } else if minor_dirty {
                    false
                } else if c.patch != v.patch && !patch_dirty {
                    true
                } else if patch_dirty {
                    (!v.pre.is_empty() || !c.pre.is_empty()) && v.pre != c.pre
                } else {
                    cmp != Ordering::Equal
                }
            }
            Op::Greater => {
                if excluded_prerelease {
                    false
                } else if !dirty {
                    cmp == Ordering::Greater
                } else if v.major != c.major {
                    v.major > c.major
                } else if minor_dirty {
                    false
                } else if patch_dirty {
                    v.minor > c.minor
                } else {
                    cmp == Ordering::Greater
                }
            }
            Op::Less => !excluded_prerelease && cmp == Ordering::Less,
            Op::GreaterEqual => !excluded_prerelease && cmp != Ordering::Less,
            Op::LessEqual => {
                if excluded_prerelease {
                    false
                } else if !dirty {
                    cmp != Ordering::Greater
                } else {
                    !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !minor_dirty))
                }
            }
            Op::Tilde => !excluded_prerelease && tilde(v, c, self.wildcard),
            Op::Caret => !excluded_prerelease && caret(v, c, self.wildcard),
        }
    }
}

fn tilde(v: &Version, c: &Version, wildcard: Wildcard) -> bool {
    if precedence(v, c) == Ordering::Less {
        return false;
    }
    let minor_dirty = wildcard == Wildcard::Minor;
    if c.major == 0 && c.minor == 0 && c.patch == 0 && !minor_dirty && wildcard != Wildcard::Patch {
        return true;
    }
    v.major == c.major && (v.minor == c.minor || minor_dirty)
}

fn caret(v: &Version, c: &Version, wildcard: Wildcard) -> bool {
    if precedence(v, c) == Ordering::Less {
        return false;
    }
    if c.major > 0 || wildcard == Wildcard::Minor {
        return v.major == c.major;
    }
    if v.major > 0 {
        return false;
    }
    if c.minor > 0 || wildcard == Wildcard::Patch {
        return v.minor == c.minor;
    }
    if v.minor > 0 {
        return false;
    }
    v.patch == c.patch
}

fn tokenize(group: &str) -> Vec<String> {
    group.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// `a - b` (spaces required) means `>= a, <= b`.
fn expand_hyphen_ranges(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if i + 2 < tokens.len() && tokens[i + 1] == "-" && starts_version(&tokens[i]) && starts_version(&tokens[i + 2]) {
            out.push(format!(">={}", tokens[i]));
            out.push(format!("<={}", tokens[i + 2]));
            i += 3;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

fn starts_version(token: &str) -> bool {
    let t = token.strip_prefix('v').unwrap_or(token);
    t.starts_with(|c: char| c.is_ascii_digit() || matches!(c, 'x' | 'X' | '*'))
}

fn split_operator(token: &str) -> (&str, &str) {
    let end = token.find(|c: char| !matches!(c, '=' | '!' | '>' | '<' | '~' | '^')).unwrap_or(token.len());
    token.split_at(end)
}

fn operator(text: &str) -> Option<Op> {
    Some(match text {
        "" | "=" => Op::TildeOrEqual,
        "!=" => Op::NotEqual,
        ">" => Op::Greater,
        "<" => Op::Less,
        ">=" | "=>" => Op::GreaterEqual,
        "<=" | "=<" => Op::LessEqual,
        "~" | "~>" => Op::Tilde,
        "^" => Op::Caret,
        _ => return None,
    })
}

fn is_wildcard(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

/// `v?MAJOR(.MINOR)?(.PATCH)?(-pre)?(+build)?` where each number may be a wildcard.
fn parse_operand(input: &str) -> Option<(Version, Wildcard)> {
    let body = input.strip_prefix('v').unwrap_or(input);
    let (body, build) = match body.split_once('+') {
        Some((b, build)) => (b, Some(build)),
        None => (body, None),
    };
    // The pre-release starts at the first '-' after the numeric parts.
    let numeric_end = body.find('-').unwrap_or(body.len());
    let (numbers, pre) = body.split_at(numeric_end);
    let pre = pre.strip_prefix('-');
    let parts: Vec<&str> = numbers.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut values = [0u64; 3];
    let mut wildcard = Wildcard::None;
    for (index, part) in parts.iter().enumerate() {
        if is_wildcard(part) {
            if wildcard == Wildcard::None {
                wildcard = [Wildcard::Major, Wildcard::Minor, Wildcard::Patch][index];
            }
        } else if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            if wildcard == Wildcard::None {
                values[index] = part.parse().ok()?;
            }
        } else {
            return None;
        }
    }
    if wildcard == Wildcard::None {
        wildcard = match parts.len() {
            1 => Wildcard::Minor,
            2 => Wildcard::Patch,
            _ => Wildcard::None,
        };
    }
    let mut version = Version::new(values[0], values[1], values[2]);
    if let Some(pre) = pre {
        version.pre = Prerelease::new(pre).ok()?;
    }
    if let Some(build) = build {
        version.build = BuildMetadata::new(build).ok()?;
    }
    Some((version, wildcard))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn check(constraint: &str, yes: &[&str], no: &[&str]) {
        let c = Constraint::parse(constraint).unwrap();
        for s in yes {
            assert!(c.matches(&v(s)), "{constraint} should match {s}");
        }
        for s in no {
            assert!(!c.matches(&v(s)), "{constraint} should not match {s}");
        }
    }

    #[test]
    fn tilde_and_partial_versions() {
        check("~2.2", &["2.2.0", "2.2.1"], &["2.3.0", "2.1.9", "2.2.1-rc.1"]);
        check("~2", &["2.0.0", "2.9.9"], &["3.0.0", "1.9.0"]);
        check("2.2", &["2.2.0", "2.2.7"], &["2.3.0"]);
        check("2.2.x", &["2.2.0", "2.2.7"], &["2.3.0"]);
        check("~1.2.3", &["1.2.3", "1.2.9"], &["1.3.0", "1.2.2"]);
    }

    #[test]
    fn comparisons_and_wildcards() {
        check(">=2.4", &["2.4.0", "3.0.0"], &["2.3.0", "2.4.0-rc.1"]);
        check(">2.2", &["2.3.0"], &["2.2.9", "2.2.0"]);
        check(">2", &["3.0.0"], &["2.9.0"]);
        check("<=2.2", &["2.2.9", "1.0.0"], &["2.3.0"]);
        check("<2.3.0", &["2.2.1"], &["2.3.0"]);
        check("!=2.2.0", &["2.2.1", "2.3.0-rc.1"], &["2.2.0"]);
        check("*", &["0.0.1", "9.9.9"], &["2.3.0-rc.1"]);
        check("", &["2.3.0"], &["0.0.0-sha-abc"]);
    }

    #[test]
    fn caret_follows_masterminds() {
        check("^2.1", &["2.1.0", "2.9.0"], &["3.0.0", "2.0.9"]);
        check("^0.2.3", &["0.2.3", "0.2.9"], &["0.3.0"]);
        check("^0.0.3", &["0.0.3"], &["0.0.4"]);
        check("^0", &["0.9.0"], &["1.0.0"]);
    }

    #[test]
    fn ranges_and_alternatives() {
        check(">=2.1 <2.3", &["2.1.0", "2.2.1"], &["2.3.0", "2.0.1"]);
        check(">=2.1, <2.3", &["2.2.0"], &["2.3.0"]);
        check("2.0 - 2.2", &["2.0.0", "2.2.9"], &["2.3.0"]);
        check("~2.0 || ~2.3", &["2.0.1", "2.3.0"], &["2.2.1"]);
    }

    #[test]
    fn prereleases_only_when_named() {
        check(">=2.3.0-rc.0", &["2.3.0-rc.3", "2.3.0", "2.4.0-alpha"], &["2.2.0-rc.1"]);
        assert!(Constraint::parse(">=2.3.0-rc.0").unwrap().admits_prereleases());
        assert!(!Constraint::parse("~2.3").unwrap().admits_prereleases());
    }

    #[test]
    fn refuses_nonsense() {
        for bad in ["latest", ">>2", "2.x.1.4", "~", "||", "2.2 ||", "=>=2", "1.2.3-01"] {
            assert!(Constraint::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn lenient_versions() {
        assert_eq!(parse_lenient("v2.3"), Some(v("2.3.0")));
        assert_eq!(parse_lenient("2.x"), None);
        assert_eq!(parse_strict("v2.3.0"), None);
        assert_eq!(parse_strict("2.3.0-rc.1"), Some(v("2.3.0-rc.1")));
    }
}
