//! One cluster's report of `check`, `plan` or `status` ([`crate::fleet::audit::Report`]) as a
//! [`Document`]: the command's own renderers, its decision, its `--quiet` line and its step
//! summary. A single-cluster run prints it; a fleet prints it per cluster in its sections.

use super::document::{Context, Document, OutputError};
use super::format::Format;
use crate::audit::verdict::Decision;
use crate::fleet::audit::Report;

impl Document for Report {
    fn render(&self, format: Format, ctx: &Context) -> Result<String, OutputError> {
        match self {
            Report::Check(r) => r.render(format, ctx),
            Report::Plan { plan, notes, inputs } => super::plan::render(plan, notes, inputs, format, ctx),
            Report::Status(s) => super::status::render(s, ctx.fail_on, format),
        }
    }

    fn decision(&self, ctx: &Context) -> Option<Decision> {
        match self {
            Report::Check(r) => r.decision(ctx),
            Report::Plan { plan, .. } => Some(plan.decision()),
            Report::Status(s) => ctx.fail_on.map(|level| super::status::decision(s, level)),
        }
    }

    fn quiet_line(&self, ctx: &Context) -> Option<String> {
        match self {
            Report::Status(s) => Some(super::status::Gated { status: s, fail_on: ctx.fail_on }.line()),
            other => other.decision(ctx).map(|d| d.line()),
        }
    }

    fn step_summary(&self, ctx: &Context) -> Option<String> {
        match self {
            Report::Check(r) => r.step_summary(ctx),
            Report::Plan { plan, .. } => Some(super::github::plan_summary(plan)),
            Report::Status(_) => None,
        }
    }
}
