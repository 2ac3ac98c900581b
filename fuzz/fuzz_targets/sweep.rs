//! cargo-fuzz target `sweep`: the body is `usim::fuzz_entry::sweep`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::sweep(data));
