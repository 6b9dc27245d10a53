//! cargo-fuzz target: `testkit::fuzz::values` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::values(data));
