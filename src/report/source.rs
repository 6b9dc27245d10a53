//! What the chart-source commands print: `versions` (a repository's chart versions, newest
//! first) and `pull` (where the archive went and what it is).

use super::document::{pretty, unoffered, Context, Document, OutputError};
use super::format::{Command, Format};
use chart_source::pull::PulledChart;
use chart_source::versions::ChartVersion;

/// `versions`: the versions shown, and where they were listed.
pub struct VersionList<'a> {
    pub versions: Vec<&'a ChartVersion>,
    pub repository: String,
    /// `--all`: pre-releases and development builds too.
    pub all: bool,
}

impl Document for VersionList<'_> {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        match format {
            Format::Json => pretty(&self.versions),
            Format::Text => Ok(self.versions.iter().map(|v| format!("{}\n", v.version)).collect()),
            other => Err(unoffered(Command::Versions, other)),
        }
    }

    fn account(&self, format: Format, _ctx: &Context) -> Option<String> {
        (format == Format::Text && self.versions.is_empty())
            .then(|| format!("no {}chart versions in {}\n", if self.all { "" } else { "released " }, self.repository))
    }
}

/// `pull`: the archive written, and the chart it holds.
#[derive(serde::Serialize)]
pub struct Pulled<'a> {
    pub path: String,
    #[serde(flatten)]
    pub chart: &'a PulledChart,
}

impl Document for Pulled<'_> {
    fn render(&self, format: Format, _ctx: &Context) -> Result<String, OutputError> {
        let c = self.chart;
        match format {
            Format::Json => pretty(self),
            Format::Text => Ok(format!(
                "{}\n  chart:    {} {}\n  layer:    {}\n  manifest: {}\n  from:     {}{}\n",
                self.path,
                c.name,
                c.version,
                c.layer_digest,
                c.manifest_digest,
                c.reference,
                if c.cached { " (cache)" } else { "" }
            )),
            other => Err(unoffered(Command::Pull, other)),
        }
    }
}
