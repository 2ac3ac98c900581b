//! Deterministic mission replay and CSV output. (Being written.)
