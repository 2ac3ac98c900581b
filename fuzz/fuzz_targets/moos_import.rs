//! cargo-fuzz target `moos_import`: the body is `usim::fuzz_entry::moos_import`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::moos_import(data));
