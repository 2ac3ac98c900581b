//! x/y to lat/lon conversions (model.md §18). (Being written.)
