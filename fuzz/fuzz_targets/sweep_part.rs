//! cargo-fuzz target `sweep_part`: the body is `usim::fuzz_entry::sweep_part`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::sweep_part(data));
