//! The explorer (issue 29 §7): a machine that hunts for disagreements between trainer-audit's
//! verdict and what real Helm, the API server and the controllers do. Cluster states are
//! composed along dimensions ([`state::State`], drawn per seed by [`generate`]), built as
//! snapshots from the real charts ([`build`]), run through the real `check`, `plan` and
//! `runbook` ([`run`]) and judged by invariants and by oracles derived from upstream source
//! ([`oracle`], [`helm`]). A disagreement prints the seed, the state's index and its one-line
//! description, which rebuilds it.

pub mod build;
pub mod charts;
pub mod generate;
pub mod helm;
pub mod oracle;
pub mod printed;
pub mod process;
pub mod rng;
pub mod run;
pub mod state;

pub use state::State;
