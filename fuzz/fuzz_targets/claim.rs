//! cargo-fuzz target `claim`: the body is `usim::fuzz_entry::claim`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::claim(data));
