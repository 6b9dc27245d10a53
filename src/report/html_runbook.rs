//! `runbook --format html`: the runbook's Markdown (the same words, commands and order as
//! `runbook` prints) as one self-contained page, every command block with a copy button and the
//! numbered steps as a checklist a person ticks off during the change; and the runbook as the
//! printer prints it (Markdown or this page).

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::document::{unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use super::html::{command_block, page};
use super::runbook::Runbook;
use crate::plan::Plan;

impl Document for Runbook {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        Ok(match format {
            Format::Markdown => super::runbook::markdown(&self.plan, &self.notes, &self.made),
            Format::Html => page_for(&self.plan, &self.notes, &self.made),
            other => return Err(unoffered(Command::Runbook, other)),
        })
    }
}

/// The page for this plan.
pub fn page_for(plan: &Plan, notes: &[String], made: &super::runbook::Made) -> String {
    let markdown = super::runbook::markdown(plan, notes, made);
    let title = format!("Runbook: upgrade Kubeflow Trainer {}/{} {} → {}", plan.namespace, plan.release, plan.from, plan.to);
    page(&title, &body(&markdown))
}

/// The Markdown as HTML: fenced code as command blocks, ordered-list items as checklist steps,
/// raw HTML in the Markdown shown as text (a name in the cluster can never become markup).
pub fn body(markdown: &str) -> String {
    let mut events: Vec<Event> = Vec::new();
    // Whether each open list is ordered; the code block being collected.
    let mut lists: Vec<bool> = Vec::new();
    let mut code: Option<String> = None;
    let mut steps = 0usize;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented)) => code = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => {
                let text = code.take().unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                events.push(Event::Html(command_block(&lines).into()));
            }
            Event::Text(t) if code.is_some() => code.as_mut().unwrap().push_str(&t),
            Event::Start(Tag::List(first)) => {
                lists.push(first.is_some());
                if first.is_some() {
                    events.push(Event::Html("<ol class=\"checklist\">\n".into()));
                } else {
                    events.push(Event::Start(Tag::List(None)));
                }
            }
            Event::End(TagEnd::List(ordered)) => {
                lists.pop();
                if ordered {
                    events.push(Event::Html("</ol>\n".into()));
                } else {
                    events.push(Event::End(TagEnd::List(false)));
                }
            }
            Event::Start(Tag::Item) if lists.last() == Some(&true) => {
                steps += 1;
                events.push(Event::Html(
                    format!("<li class=\"step\"><label><input type=\"checkbox\" id=\"step-{steps}\"> Step {steps}</label>\n").into(),
                ));
            }
            Event::End(TagEnd::Item) if lists.last() == Some(&true) => events.push(Event::Html("</li>\n".into())),
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            other => events.push(other),
        }
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_become_a_checklist_and_code_a_copyable_block() {
        let md = "# Runbook\n\n1. Upgrade:\n\n   ```sh\n   helm upgrade a b -n 'x y'\n   ```\n\n2. Verify <b>now</b>:\n\n- a bullet\n";
        let html = body(md);
        assert_eq!(html.matches("<li class=\"step\">").count(), 2, "{html}");
        assert!(html.contains("<input type=\"checkbox\" id=\"step-2\">"), "{html}");
        assert!(html.contains("<button class=\"copy\" type=\"button\">Copy</button><pre><code class=\"language-sh\">helm upgrade a b -n &#39;x y&#39;</code></pre>"), "{html}");
        assert!(html.contains("&lt;b&gt;now") && !html.contains("<b>"), "{html}");
        assert!(html.contains("<ul>\n<li>a bullet</li>"), "{html}");
    }
}
