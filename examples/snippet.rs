//! Renders one template with a values file in a throwaway chart, as the snippet conformance
//! harness does: `cargo run --example snippet -- VALUES.yaml TEMPLATE`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(values), Some(template)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: snippet VALUES.yaml TEMPLATE");
        std::process::exit(2);
    };
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    match testkit::snippet::render_snippet(&read(values), &read(template)) {
        Ok(o) => println!("{o:?}"),
        Err(e) => println!("ERR {e:?}"),
    }
}
