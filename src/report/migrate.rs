//! `migrate`'s report as the printer prints it: the converted objects as one List (YAML or
//! JSON), a diff per object, or the patch commands that run while the old CRDs are installed;
//! the account of what was and was not carried goes to standard error, and the run exits 1 when
//! something was refused or lost. The words and the List are `crate::migrate::output`'s.

use super::document::{unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use crate::audit::finding::Severity;
use crate::audit::verdict::{Counts, Decision, Verdict};
use crate::migrate::output::{self, NextSteps};
use crate::migrate::Migration;

pub struct MigrateDocument {
    pub migration: Migration,
    /// `--before-crds`: the patch commands instead of the List.
    pub before_crds: bool,
    /// `kubectl` with the user's context flags, for the printed commands.
    pub kubectl: String,
    pub next: NextSteps,
}

impl Document for MigrateDocument {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        if self.before_crds {
            return Ok(output::before_crds_script(&self.migration, &self.kubectl));
        }
        let text = match format {
            Format::Yaml => output::yaml(&output::list(&self.migration)),
            Format::Json => output::json_text(&output::list(&self.migration)),
            Format::Diff => output::diff(&self.migration),
            other => return Err(unoffered(Command::Migrate, other)),
        };
        text.map_err(|e| OutputError::Write(format!("cannot write the converted objects: {e}")))
    }

    /// Blocked (exit 1) when something was refused or lost.
    fn decision(&self, _ctx: &Context) -> Option<Decision> {
        let verdict = if self.migration.incomplete() { Verdict::Blocked } else { Verdict::Ready };
        Some(Decision { verdict, ..Decision::new(Counts::default(), Severity::Error, None, None) })
    }

    fn account(&self, _format: Format, _ctx: &Context) -> Option<String> {
        Some(output::report(&self.migration, &self.next))
    }

    /// Converted objects are the cluster's data.
    fn private(&self) -> bool {
        true
    }
}
