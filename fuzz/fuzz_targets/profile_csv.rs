//! cargo-fuzz target `profile_csv`: the body is `usim::fuzz_entry::profile_csv`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::profile_csv(data));
