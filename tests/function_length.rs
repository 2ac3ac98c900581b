//! No function on a live path is longer than [`LIMIT`] lines (issue 38:
//! "the longest function on a live path is at most ~80 lines"), counted
//! from its `fn` line to the closing brace at the same indentation, as
//! `cargo fmt` lays them out. The functions still over it are listed in
//! [`KNOWN`] with their length today: the test fails when one grows, when
//! a new one goes over, or when a listed one shrinks under the limit (then
//! it leaves the list).
use std::path::{Path, PathBuf};

/// Lines a live-path function may take.
const LIMIT: usize = 80;

/// The live paths: the host, the transports' loops and their commands.
const LIVE: &[&str] = &[
    "src/live",
    "src/mqtt",
    "src/moos/app.rs",
    "src/cli/live.rs",
    "src/cli/ros2.rs",
    "src/dds/live.rs",
];

/// (file, function, lines today): over the limit, to be split.
const KNOWN: &[(&str, &str, usize)] = &[("src/mqtt/bridge.rs", "drive_connection", 171)];

fn rust_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            rust_files(&e.path(), out);
        }
    } else if p.extension().is_some_and(|x| x == "rs") {
        out.push(p.to_path_buf());
    }
}

/// The name of the function a line opens, if it opens one with a body.
fn opens_fn(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("//") || t.trim_end().ends_with(';') {
        return None;
    }
    let at = t.find("fn ")?;
    let before = &t[..at];
    let words_ok = before
        .split_whitespace()
        .all(|w| matches!(w, "pub" | "async" | "const" | "unsafe") || w.starts_with("pub("));
    if !words_ok {
        return None;
    }
    let rest = &t[at + 3..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end]).filter(|n| !n.is_empty())
}

/// (function, lines) of every function of `text` with a body.
fn lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = opens_fn(l) else { continue };
        let indent = l.len() - l.trim_start().len();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(j) = lines[i + 1..].iter().position(|m| m.trim_end() == close) {
            out.push((name.to_string(), j + 2));
        }
    }
    out
}

#[test]
fn the_counter_counts_a_function_from_fn_to_its_brace() {
    let text = "fn a() {\n    x;\n}\n\n    pub(crate) async fn b(\n        y: u8,\n    ) {\n        z;\n    }\nfn c();\n";
    assert_eq!(
        lengths(text),
        vec![("a".to_string(), 3), ("b".to_string(), 5)]
    );
}

#[test]
fn no_live_path_function_grows_past_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for p in LIVE {
        rust_files(&root.join(p), &mut files);
    }
    assert!(files.len() > 10, "live paths not found: {files:?}");
    let mut bad = Vec::new();
    let mut seen = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        for (name, n) in lengths(&text) {
            let known = KNOWN.iter().find(|k| k.0 == rel && k.1 == name);
            match known {
                Some(k) => {
                    seen.push((k.0, k.1));
                    if n > k.2 {
                        bad.push(format!("{rel}: {name} grew to {n} lines (was {})", k.2));
                    } else if n <= LIMIT {
                        bad.push(format!("{rel}: {name} is {n} lines now: take it off KNOWN"));
                    }
                }
                None if n > LIMIT => bad.push(format!("{rel}: {name} is {n} lines (> {LIMIT})")),
                None => {}
            }
        }
    }
    for k in KNOWN {
        if !seen.contains(&(k.0, k.1)) {
            bad.push(format!("{}: {} is gone: take it off KNOWN", k.0, k.1));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
