//! cargo-fuzz target `run_csv`: the body is `usim::fuzz_entry::run_csv`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::run_csv(data));
