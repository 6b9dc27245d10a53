//! cargo-fuzz target: `testkit::fuzz::template` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::template(data));
