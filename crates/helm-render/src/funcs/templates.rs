//! Helm's `include` and `tpl` (pkg/engine/engine.go `includeFun`, `tplFun`): a named template
//! executed into a string with Helm's per-name recursion bound, and a string parsed and executed
//! as a template over the chart's templates, each failing with the words Helm uses.

use gotmpl::fmt::go_quote;
use gotmpl::{Context, FnError, GoError, TextError, Value};

/// `include NAME DATA`.
pub fn include(ctx: &mut dyn Context, name: &str, data: Value) -> Result<String, FnError> {
    match ctx.execute_named_bounded(name, data) {
        None => Err(FnError::new(format!("rendering template has a nested reference name: {name}: unable to execute template"))),
        Some(result) => result.map_err(|e| FnError { message: e.text.clone(), wrapped: Some(e) }),
    }
}

/// `tpl TEXT DATA`: `<no value>` is removed from the output, as Helm's engine does.
pub fn tpl(ctx: &mut dyn Context, text: &str, data: Value) -> Result<String, FnError> {
    match ctx.execute_text(text, data) {
        Ok(out) => Ok(out.replace("<no value>", "")),
        Err(TextError::Parse(e)) => {
            let message = format!("cannot parse template {}: {}", go_quote(text), e.message);
            Err(FnError { message: message.clone(), wrapped: Some(GoError { text: message, exec: false, cause: None }) })
        }
        Err(TextError::Exec(e)) => {
            let message = format!("error during tpl function execution for {}: {}", go_quote(text), e.text);
            Err(FnError { message: message.clone(), wrapped: Some(GoError { text: message, exec: false, cause: Some(Box::new(e)) }) })
        }
    }
}
