//! cargo-fuzz target: `testkit::fuzz::archive` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::archive(data));
