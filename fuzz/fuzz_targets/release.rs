//! cargo-fuzz target: `trainer_audit::fuzzing::release` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| trainer_audit::fuzzing::release(data));
