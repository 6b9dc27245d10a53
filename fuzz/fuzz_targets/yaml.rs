//! cargo-fuzz target: `trainer_audit::fuzzing::yaml` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| trainer_audit::fuzzing::yaml(data));
