//! cargo-fuzz target `config`: the body is `usim::fuzz_entry::config`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::config(data));
