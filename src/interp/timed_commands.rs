//! Timed-command interpolation (being written).
