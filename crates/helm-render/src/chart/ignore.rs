//! `.helmignore` rules for directory charts, with Helm's quirks: basename matching for patterns
//! without `/`, `!` negation that ignores everything the pattern does not match, `dir/` for
//! directories only, no `**`, and the built-in rule `templates/.?*`.

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    negate: bool,
    dir_only: bool,
    anchored: bool,
}

/// A `.helmignore` pattern Helm refuses (its text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IgnoreError {
    /// `**` in a pattern (the pattern as written).
    #[error("double-star (**) syntax is not supported")]
    DoubleStar(String),
}

#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    pub fn parse(text: &str) -> Result<Rules, IgnoreError> {
        let mut rules = Vec::new();
        for line in text.lines().chain(std::iter::once("templates/.?*")) {
            let mut p = line.trim();
            if p.is_empty() || p.starts_with('#') {
                continue;
            }
            if p.contains("**") {
                return Err(IgnoreError::DoubleStar(p.to_string()));
            }
            let negate = p.starts_with('!') && p.len() > 1;
            if negate {
                p = &p[1..];
            }
            let dir_only = p.ends_with('/');
            let p = p.trim_end_matches('/');
            let anchored = p.starts_with('/');
            rules.push(Rule { pattern: p.trim_start_matches('/').to_string(), negate, dir_only, anchored });
        }
        Ok(Rules { rules })
    }

    /// Whether `path` (relative, `/`-separated) is ignored.
    pub fn ignored(&self, path: &str, is_dir: bool) -> bool {
        if self.rules.is_empty() {
            return path.starts_with("templates/") && path["templates/".len()..].starts_with('.') && path.len() > "templates/.".len();
        }
        if path == "." || path.is_empty() {
            return false;
        }
        for r in &self.rules {
            if r.dir_only && !is_dir {
                continue;
            }
            let target = if r.anchored || r.pattern.contains('/') { path } else { path.rsplit('/').next().unwrap_or(path) };
            let matched = glob_match(&r.pattern, target);
            if r.negate {
                if !matched {
                    return true;
                }
            } else if matched {
                return true;
            }
        }
        false
    }
}

/// `filepath.Match`: `*` and `?` stay within a segment, `[...]` classes.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).take_while(|&i| i == 0 || n[i - 1] != '/').any(|i| go(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && n[0] != '/' && go(&p[1..], &n[1..]),
            Some('[') => {
                let Some(end) = p.iter().position(|&c| c == ']') else { return false };
                let Some(&c) = n.first() else { return false };
                let class = &p[1..end];
                let (negated, class) = match class.first() {
                    Some('^') | Some('!') => (true, &class[1..]),
                    _ => (false, class),
                };
                let mut hit = false;
                let mut i = 0;
                while i < class.len() {
                    if i + 2 < class.len() && class[i + 1] == '-' {
                        hit |= class[i] <= c && c <= class[i + 2];
                        i += 3;
                    } else {
                        hit |= class[i] == c;
                        i += 1;
                    }
                }
                hit != negated && go(&p[end + 1..], &n[1..])
            }
            Some('\\') if p.len() > 1 => !n.is_empty() && n[0] == p[1] && go(&p[2..], &n[1..]),
            Some(&c) => !n.is_empty() && n[0] == c && go(&p[1..], &n[1..]),
        }
    }
    go(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helmignore_rules() {
        let r = Rules::parse("# comment\n*.tmp\n/docs\nbuild/\n").unwrap();
        assert!(r.ignored("a/b.tmp", false));
        assert!(r.ignored("docs", true));
        assert!(!r.ignored("x/docs", true));
        assert!(r.ignored("build", true) && !r.ignored("build", false));
        assert!(r.ignored("templates/.hidden.yaml", false));
        assert!(!r.ignored("templates/a.yaml", false));
        assert!(Rules::parse("a/**").is_err());
    }
}
