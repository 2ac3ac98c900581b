//! cargo-fuzz target `view_geometry`: the body is `usim::fuzz_entry::view_geometry`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::view_geometry(data));
