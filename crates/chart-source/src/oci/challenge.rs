//! `WWW-Authenticate` challenges (RFC 7235) as registries send them: `Basic realm="…"` or
//! `Bearer realm="…",service="…",scope="…"`, possibly several in one header.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// Lower-cased scheme: `basic`, `bearer`, …
    pub scheme: String,
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// Parses every challenge in a header value. Unparseable parts are skipped, not fatal: the
/// caller decides what to do when no usable challenge is left.
pub fn parse_challenges(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && (chars[*i].is_whitespace() || chars[*i] == ',') {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i >= chars.len() {
            break;
        }
        let token = read_token(&chars, &mut i);
        if token.is_empty() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        if j < chars.len() && chars[j] == '=' {
            // A parameter of the current challenge.
            i = j + 1;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            let value = if i < chars.len() && chars[i] == '"' { read_quoted(&chars, &mut i) } else { read_token(&chars, &mut i) };
            if let Some(current) = out.last_mut() {
                current.params.insert(token.to_ascii_lowercase(), value);
            }
        } else {
            out.push(Challenge { scheme: token.to_ascii_lowercase(), params: BTreeMap::new() });
        }
    }
    out
}

fn read_token(chars: &[char], i: &mut usize) -> String {
    let start = *i;
    while *i < chars.len() && !chars[*i].is_whitespace() && chars[*i] != ',' && chars[*i] != '=' && chars[*i] != '"' {
        *i += 1;
    }
    chars[start..*i].iter().collect()
}

fn read_quoted(chars: &[char], i: &mut usize) -> String {
    let mut value = String::new();
    *i += 1; // opening quote
    while *i < chars.len() {
        match chars[*i] {
            '\\' if *i + 1 < chars.len() => {
                value.push(chars[*i + 1]);
                *i += 2;
            }
            '"' => {
                *i += 1;
                break;
            }
            c => {
                value.push(c);
                *i += 1;
            }
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_quoted_params() {
        let c = parse_challenges(
            r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:kubeflow/charts/kubeflow-trainer:pull""#,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].scheme, "bearer");
        assert_eq!(c[0].param("realm"), Some("https://ghcr.io/token"));
        assert_eq!(c[0].param("scope"), Some("repository:kubeflow/charts/kubeflow-trainer:pull"));
    }

    #[test]
    fn several_challenges_and_escapes() {
        let c = parse_challenges(r#"Basic realm="a \"b\"", Bearer realm=x, service="s""#);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].param("realm"), Some(r#"a "b""#));
        assert_eq!(c[1].param("realm"), Some("x"));
        assert_eq!(c[1].param("service"), Some("s"));
        assert!(parse_challenges("").is_empty());
    }
}
