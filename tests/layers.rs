//! The import graph between the crate's top-level modules follows the declared layer order
//! (docs/design.md, "Layers"): no module uses one of its own or a higher layer, so no two
//! import each other in a loop; and the submodules of one module do not loop either. On a
//! violation the test names the file, line and path. `cargo xtask layers` prints the graph.

#[test]
fn modules_use_only_lower_layers_and_nothing_loops() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = testkit::layers::scan(&src).expect("src/ reads");
    println!("{}", graph.render());
    let violations = graph.violations();
    assert!(violations.is_empty(), "{} violations of the layer order:\n{}\n\n{}", violations.len(), violations.join("\n"), graph.render());
}
