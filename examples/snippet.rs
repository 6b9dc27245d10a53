fn main() {
    let args: Vec<String> = std::env::args().collect();
    let values = std::fs::read_to_string(&args[1]).unwrap();
    let tpl = std::fs::read_to_string(&args[2]).unwrap();
    match trainer_audit::helm::snippet::render_snippet(&values, &tpl) {
        Ok(o) => println!("{:?}", o),
        Err(e) => println!("ERR {:?}", e),
    }
}
