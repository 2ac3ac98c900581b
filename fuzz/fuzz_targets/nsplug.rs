//! cargo-fuzz target `nsplug`: the body is `usim::fuzz_entry::nsplug`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::nsplug(data));
