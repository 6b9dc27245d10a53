//! cargo-fuzz target: `testkit::fuzz::yaml` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::yaml(data));
