//! Built-in current field (model.md §19). (Being written.)
