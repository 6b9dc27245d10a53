//! cargo-fuzz target: `trainer_audit::fuzzing::archive` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| trainer_audit::fuzzing::archive(data));
