//! Errors shaped like Go's: each level's full `Error()` text plus the error it wraps, so that
//! Helm's reformatting (which walks the `Unwrap` chain and parses each level's text) can be
//! reproduced byte for byte.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoError {
    /// This level's `Error()` text (which includes the wrapped error's text, as `%w` does).
    pub text: String,
    /// True for text/template's `ExecError` (execution errors carry one).
    pub exec: bool,
    pub cause: Option<Box<GoError>>,
}

impl GoError {
    pub fn plain(text: impl Into<String>) -> GoError {
        GoError { text: text.into(), exec: false, cause: None }
    }

    /// The `Unwrap` chain: this level's text, then each wrapped level's.
    pub fn chain(&self) -> Vec<&str> {
        let mut out = vec![self.text.as_str()];
        let mut current = self.cause.as_deref();
        while let Some(e) = current {
            out.push(&e.text);
            current = e.cause.as_deref();
        }
        out
    }

    pub fn is_exec(&self) -> bool {
        self.exec
    }
}

impl fmt::Display for GoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for GoError {}
