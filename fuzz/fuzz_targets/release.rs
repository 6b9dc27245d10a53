//! cargo-fuzz target: `testkit::fuzz::release` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::release(data));
