//! Jerk-limited double-S profiles (being written).
