//! cargo-fuzz target `alog`: the body is `usim::fuzz_entry::alog`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::alog(data));
