//! cargo-fuzz target `moos_wildcard`: the body is `usim::fuzz_entry::moos_wildcard`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::moos_wildcard(data));
