//! The workspace keeps its floors (docs/design.md, "Layers"): no crate depends on a crate of its
//! own or a higher floor; no module of the product crate uses one of its own or a higher layer, so
//! no two import each other in a loop; and in no crate do the modules, or the submodules of one
//! module, loop (but for the known loops). On a violation the test names the crates, or the file,
//! line and path. `cargo xtask layers` prints the graphs.

#[test]
fn crates_and_modules_use_only_lower_floors_and_nothing_loops() {
    let workspace = testkit::layers::workspace(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).expect("the workspace reads");
    println!("{}", workspace.render());
    let violations = workspace.violations();
    assert!(violations.is_empty(), "{} violations of the floors:\n{}\n\n{}", violations.len(), violations.join("\n"), workspace.render());
}
