//! cargo-fuzz target `moos_appcast`: the body is `usim::fuzz_entry::moos_appcast`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::moos_appcast(data));
