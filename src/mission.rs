//! Mission files (formats.md §2). (Being written.)
