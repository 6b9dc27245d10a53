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

/// An invocation (`args`, the program first) again, quoted, without the options in `drop_valued`
/// and their values (`-o FILE`, `--output=FILE`, `-oFILE`), without the flags in `drop`, and with
/// `extra` appended: a command that runs as printed.
pub fn rerun(args: impl IntoIterator<Item = String>, drop_valued: &[&str], drop: &[&str], extra: &[&str]) -> String {
    let mut out = Vec::new();
    let mut args = args.into_iter();
    if let Some(bin) = args.next() {
        out.push(quote(&bin));
    }
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let joined = |o: &&str| {
            if o.starts_with("--") {
                a.starts_with(&format!("{o}="))
            } else {
                a.starts_with(*o) && a.len() > o.len()
            }
        };
        if drop_valued.contains(&a.as_str()) {
            skip_value = true;
        } else if !drop.contains(&a.as_str()) && !drop_valued.iter().any(joined) {
            out.push(quote(&a));
        }
    }
    out.extend(extra.iter().map(|e| quote(e)));
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rerun_drops_output_choices_and_keeps_the_rest_quoted() {
        let args = ["trainer-audit", "migrate", "-o", "out.yaml", "--format=json", "-oX", "--before-crds", "--context", "my ctx"];
        let line = rerun(args.map(String::from), &["-o", "--output", "--format"], &["--before-crds"], &["--format", "yaml"]);
        assert_eq!(line, "trainer-audit migrate --context 'my ctx' --format yaml");
    }

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
