//! `check --format html` (one cluster or a fleet): one self-contained page — inline CSS and
//! script, nothing loaded from anywhere, so it works offline and as a CI artifact — with a
//! verdict badge per cluster, the findings grouped by severity and then by rule, and a copy
//! button on every command block. The page shell and the command block are shared with the
//! runbook's page (`html_runbook`).

use std::fmt::Write as _;

use crate::audit::finding::{Finding, FixLine, Severity};
use crate::upgrade::check::CheckReport;

/// Escapes text for an HTML element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--panel:#f6f8fa;--err:#cf222e;--warn:#9a6700;--info:#0969da;--ok:#1a7f37}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:24px}
h1{font-size:1.6em;margin:0 0 .3em}h2{font-size:1.3em;border-bottom:1px solid var(--line);padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.1em;margin:1.2em 0 .4em}
.muted{color:var(--muted)}
.badge{display:inline-block;border-radius:1em;padding:.1em .8em;font-weight:600;font-size:.9em;color:#fff;vertical-align:middle}
.badge.ready{background:var(--ok)}.badge.blocked{background:var(--err)}.badge.failed{background:#6e7781}
.sev{font-weight:600;text-transform:uppercase;font-size:.8em;letter-spacing:.04em}
.sev.error{color:var(--err)}.sev.warning{color:var(--warn)}.sev.info{color:var(--info)}
table{border-collapse:collapse;width:100%;margin:.6em 0}th,td{border:1px solid var(--line);padding:.35em .6em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td:nth-child(-n+2){white-space:nowrap}
th{background:var(--panel)}
details.rule{border:1px solid var(--line);border-radius:6px;margin:.5em 0;padding:.3em .8em}
details.rule>summary{cursor:pointer;font-weight:600}
.finding{border-top:1px solid var(--line);padding:.6em 0}.finding:first-of-type{border-top:0}
.finding .subject{font-family:ui-monospace,monospace;font-size:.92em}
.cmd{position:relative;margin:.4em 0}
.cmd pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.7em 5.5em .7em .8em;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.cmd button.copy{position:absolute;top:.4em;right:.4em;font:inherit;font-size:.8em;padding:.15em .7em;border:1px solid var(--line);border-radius:4px;background:#fff;cursor:pointer}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
ul.checklist,ol.checklist{list-style:none;padding-left:0}
li.step{margin:.8em 0;padding:.2em .6em;border-left:3px solid var(--line)}
li.step>label{font-weight:600;cursor:pointer}
li.step.done{border-left-color:var(--ok)}li.step.done>label{text-decoration:line-through;color:var(--muted)}
footer{margin-top:3em;color:var(--muted);font-size:.85em}
"#;

const SCRIPT: &str = r#"
function copyText(text){
  if(navigator.clipboard&&window.isSecureContext){return navigator.clipboard.writeText(text);}
  var t=document.createElement('textarea');t.value=text;t.style.position='fixed';t.style.opacity='0';
  document.body.appendChild(t);t.select();try{document.execCommand('copy');}finally{document.body.removeChild(t);}
  return Promise.resolve();
}
document.querySelectorAll('button.copy').forEach(function(b){
  b.addEventListener('click',function(){
    var code=b.parentNode.querySelector('code');
    copyText(code.innerText).then(function(){b.textContent='Copied';setTimeout(function(){b.textContent='Copy';},1500);});
  });
});
document.querySelectorAll('li.step input[type=checkbox]').forEach(function(c){
  c.addEventListener('change',function(){c.closest('li.step').classList.toggle('done',c.checked);});
});
"#;

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}<footer>Made by trainer-audit {}. This page loads nothing from the network.</footer>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        escape(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A block of shell commands with a copy button.
pub fn command_block(commands: &[&str]) -> String {
    let text: Vec<String> = commands.iter().map(|c| escape(c)).collect();
    format!(
        "<div class=\"cmd\"><button class=\"copy\" type=\"button\">Copy</button><pre><code class=\"language-sh\">{}</code></pre></div>\n",
        text.join("\n")
    )
}

/// The verdict badge.
pub fn badge(verdict: &str) -> String {
    format!("<span class=\"badge {0}\" data-verdict=\"{0}\">{0}</span>", escape(verdict))
}

/// A URL-looking source becomes a link (opened by the reader, never loaded by the page).
fn source(text: &str) -> String {
    let mut out = Vec::new();
    for part in text.split_whitespace() {
        let lead = &part[..part.len() - part.trim_start_matches('(').len()];
        let bare = part[lead.len()..].trim_end_matches([',', ';', ')', '.']);
        if bare.starts_with("https://") || bare.starts_with("http://") {
            let tail = &part[lead.len() + bare.len()..];
            out.push(format!("{lead}<a href=\"{0}\" rel=\"noreferrer\">{0}</a>{1}", escape(bare), escape(tail)));
        } else {
            out.push(escape(part));
        }
    }
    out.join(" ")
}

fn finding(f: &Finding, out: &mut String) {
    let _ = writeln!(out, "<div class=\"finding\" data-rule=\"{}\" data-severity=\"{}\">", escape(&f.id), f.severity.as_str());
    let _ = writeln!(out, "<div class=\"subject\">{}</div>", escape(&f.subject));
    if !f.location.is_empty() {
        let _ = writeln!(out, "<div class=\"muted\">at <code>{}</code></div>", escape(&f.location));
    }
    let _ = writeln!(out, "<p>{}</p>", escape(&f.message));
    if !f.evidence.is_empty() {
        out.push_str("<ul class=\"evidence\">");
        for e in f.evidence.iter().take(super::findings::EVIDENCE_SHOWN) {
            let _ = write!(out, "<li>{}</li>", escape(e));
        }
        if let Some(more) = super::findings::evidence_left_out(f) {
            let _ = write!(out, "<li class=\"muted\">{}</li>", escape(&more));
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(out, "<div class=\"muted\">Source: {}</div>\n</div>", source(&f.source));
}

/// One fix for a rule's findings: words as paragraphs, each run of commands one block with a
/// copy button.
fn fix(lines: &[FixLine], out: &mut String) {
    out.push_str("<div class=\"fix\"><strong>Fix:</strong>\n");
    let mut run: Vec<&str> = Vec::new();
    for line in lines {
        match line {
            FixLine::Command(c) | FixLine::Restore(c) => run.push(c),
            FixLine::Text(t) => {
                if !run.is_empty() {
                    out.push_str(&command_block(&run));
                    run.clear();
                }
                let _ = writeln!(out, "<p>{}</p>", escape(t));
            }
        }
    }
    if !run.is_empty() {
        out.push_str(&command_block(&run));
    }
    out.push_str("</div>\n");
}

/// Findings grouped by severity (errors first), then by rule in report order: each finding, then
/// the rule's one fix.
pub fn findings(list: &[Finding], out: &mut String) {
    if list.is_empty() {
        out.push_str("<p class=\"none\">No findings.</p>\n");
        return;
    }
    for severity in [Severity::Error, Severity::Warning, Severity::Info] {
        let of: Vec<&Finding> = list.iter().filter(|f| f.severity == severity).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<h3><span class=\"sev {0}\">{0}</span> {1}</h3>", severity.as_str(), of.len());
        let mut rules: Vec<&str> = Vec::new();
        for f in &of {
            if !rules.contains(&f.id.as_str()) {
                rules.push(&f.id);
            }
        }
        for rule in rules {
            let group: Vec<&&Finding> = of.iter().filter(|f| f.id == rule).collect();
            let _ = writeln!(
                out,
                "<details class=\"rule\" open data-rule=\"{0}\"><summary><code>{0}</code> {1} <span class=\"muted\">({2})</span></summary>",
                escape(rule),
                escape(&group[0].title),
                group.len()
            );
            for f in &group {
                finding(f, out);
            }
            let members: Vec<&Finding> = group.iter().map(|f| **f).collect();
            fix(&super::fix::merged(&members), out);
            out.push_str("</details>\n");
        }
    }
}

/// One cluster's section body: route, notes, findings, and the command that comes next.
fn cluster_body(r: &CheckReport, next: Option<&str>, out: &mut String) {
    let _ = writeln!(
        out,
        "<p><code>{}/{}</code> {} → {} ({}) — {}</p>",
        escape(&r.namespace),
        escape(&r.release),
        escape(&r.from),
        escape(&r.to),
        escape(&r.method.installed()),
        escape(&super::findings::counts(&r.decision.counts))
    );
    if !r.notes.is_empty() || !r.warnings.is_empty() {
        out.push_str("<ul class=\"notes\">");
        for n in &r.notes {
            let _ = write!(out, "<li>{}</li>", escape(n));
        }
        for w in &r.warnings {
            let _ = write!(out, "<li><strong>warning:</strong> {}</li>", escape(w));
        }
        out.push_str("</ul>\n");
    }
    findings(&r.findings, out);
    if let Some(next) = next {
        out.push_str("<h3>Next: the runbook for this cluster</h3>\n");
        out.push_str(&command_block(&[next]));
    }
}

/// One cluster of a page: its verdict and its report, or why it failed, and the command that
/// comes next for it.
pub struct FleetCluster<'a> {
    pub cluster: &'a str,
    pub verdict: &'a str,
    pub report: Option<&'a CheckReport>,
    pub failure: Option<&'a str>,
    pub next: Option<String>,
}

/// The summary table: one row per cluster, linked to its section.
fn summary_table(clusters: &[FleetCluster], out: &mut String) {
    out.push_str("<table class=\"summary\"><thead><tr><th>Cluster</th><th>Installed</th><th>Method</th><th>Target</th><th>Errors</th><th>Warnings</th><th>Verdict</th></tr></thead><tbody>\n");
    for (i, c) in clusters.iter().enumerate() {
        let n =
            |s: Severity| c.report.map(|r| r.findings.iter().filter(|f| f.severity == s).count().to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#cluster-{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(c.cluster),
            escape(c.report.map(|r| r.from.as_str()).unwrap_or("-")),
            escape(c.report.map(|r| r.method.describe()).unwrap_or("-")),
            escape(c.report.map(|r| r.to.as_str()).unwrap_or("-")),
            n(Severity::Error),
            n(Severity::Warning),
            badge(c.verdict)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Each cluster's section, after the summary table.
fn sections(clusters: &[FleetCluster], out: &mut String) {
    for (i, c) in clusters.iter().enumerate() {
        let _ = writeln!(
            out,
            "<section class=\"cluster\" id=\"cluster-{}\" data-cluster=\"{}\">\n<h2>{} {}</h2>",
            i + 1,
            escape(c.cluster),
            escape(c.cluster),
            badge(c.verdict)
        );
        match c.report {
            Some(r) => cluster_body(r, c.next.as_deref(), out),
            None => {
                let _ = writeln!(out, "<p class=\"failure\"><strong>failed:</strong> {}</p>", escape(c.failure.unwrap_or("-")));
            }
        }
        out.push_str("</section>\n");
    }
}

/// `check --format html` for one cluster, named `cluster` (its context or snapshot): the
/// fleet page's summary table with its one row, then its section.
pub fn check_page(cluster: &str, r: &CheckReport, next: Option<&str>) -> String {
    let v = r.decision.verdict.as_str();
    let one = [FleetCluster { cluster, verdict: v, report: Some(r), failure: None, next: next.map(str::to_string) }];
    let mut body = format!(
        "<h1>Kubeflow Trainer upgrade check</h1>\n<p>{} <span class=\"muted\">(blocked when a finding is at or above <code>--fail-on {}</code>)</span></p>\n",
        escape(&r.decision.line()),
        r.decision.fail_on.as_str()
    );
    summary_table(&one, &mut body);
    sections(&one, &mut body);
    page(&format!("trainer-audit check: {cluster}: {v}"), &body)
}

/// `check --format html` for a fleet: the summary table, then each cluster's section.
pub fn fleet_page(clusters: &[FleetCluster], fail_on: Severity) -> String {
    let tally = |v: &str| clusters.iter().filter(|c| c.verdict == v).count();
    let mut body = format!(
        "<h1>Kubeflow Trainer upgrade check: {} cluster{}</h1>\n<p>{} ready, {} blocked, {} failed <span class=\"muted\">(blocked when a finding is at or above <code>--fail-on {}</code>)</span></p>\n",
        clusters.len(),
        if clusters.len() == 1 { "" } else { "s" },
        tally("ready"),
        tally("blocked"),
        tally("failed"),
        fail_on.as_str()
    );
    summary_table(clusters, &mut body);
    sections(clusters, &mut body);
    page(&format!("trainer-audit check: {} cluster{}", clusters.len(), if clusters.len() == 1 { "" } else { "s" }), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_of_one_is_one_cluster() {
        let one = [FleetCluster { cluster: "lab", verdict: "failed", report: None, failure: Some("unreachable"), next: None }];
        assert!(fleet_page(&one, crate::audit::finding::Severity::Error).contains("<title>trainer-audit check: 1 cluster</title>"));
    }

    #[test]
    fn text_is_escaped_and_urls_become_links() {
        assert_eq!(escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assert_eq!(
            source("kubeflow/trainer v2.3.0 (https://github.com/kubeflow/trainer/pull/1), docs"),
            "kubeflow/trainer v2.3.0 (<a href=\"https://github.com/kubeflow/trainer/pull/1\" rel=\"noreferrer\">https://github.com/kubeflow/trainer/pull/1</a>), docs"
        );
        assert_eq!(command_block(&["echo '<x>'"]).matches("<button class=\"copy\"").count(), 1);
        assert!(command_block(&["echo '<x>'"]).contains("echo &#39;&lt;x&gt;&#39;"));
    }
}
