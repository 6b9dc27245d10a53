//! Words of the commands the tool prints, quoted for a POSIX shell, so every printed command runs
//! as printed whatever a name, path or value holds (spaces, quotes, `$`, globs).

/// Characters no POSIX shell (nor zsh) treats specially inside a word. `shlex` also quotes `=`
/// (zsh expands a word *starting* with `=`), which would quote every `key=value` argument.
fn safe_bare(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('=')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',' | '-'))
}

/// `word` as one shell word: unchanged when it is safe bare, else single-quoted (`shlex`).
pub fn quote(word: &str) -> String {
    if safe_bare(word) {
        return word.to_string();
    }
    // No argument, file name or Kubernetes name can hold NUL, and no shell word can: drop it
    // rather than print a command that means something else.
    let clean: String = word.chars().filter(|c| *c != '\0').collect();
    match shlex::try_quote(&clean) {
        Ok(quoted) => quoted.into_owned(),
        Err(_) => format!("'{}'", clean.replace('\'', r"'\''")),
    }
}

/// Words joined into one command line, each quoted.
pub fn join<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words.into_iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(quote("kubeflow-system"), "kubeflow-system");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r#""it's""#);
        assert_eq!(quote(""), "''");
        assert_eq!(quote("meta.helm.sh/release-name=kubeflow-trainer"), "meta.helm.sh/release-name=kubeflow-trainer");
        assert_eq!(quote("=x"), "'=x'");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(join(["helm", "upgrade", "x y"]), "helm upgrade 'x y'");
    }
}
