//! Every document a user can read cites only files that are in the
//! repository: the Markdown files, every `--help` text, `usim example`,
//! and the comments of the source, configs, missions and scripts. A clone
//! has no steering repository, so a citation such as `model.md §7` must
//! resolve (relative to the citing file, or to the repository root for
//! help texts and code) to a file of the repository.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files that other branches add; citing them is allowed before they land.
const PENDING: &[&str] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (skipping build output and VCS data).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if name == "target" || name.starts_with('.') {
                continue;
            }
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The `.md` paths a text cites, and any reference to the steering
/// repository (`shared/`, `spec/`).
fn citations(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let is_path = |c: u8| c.is_ascii_alphanumeric() || b"_./-".contains(&c);
    let mut i = 0;
    while let Some(pos) = text[i..].find(".md") {
        let end = i + pos + 3;
        // the token must end here (not `.mdx`, not `.md5`)
        if end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            i = end;
            continue;
        }
        let mut start = i + pos;
        while start > 0 && is_path(bytes[start - 1]) {
            start -= 1;
        }
        let tok = text[start..end].trim_start_matches("./").to_string();
        if tok.len() > 3 && !tok.starts_with('.') || tok.starts_with("..") {
            found.push(tok);
        }
        i = end;
    }
    for needle in ["shared/", "spec/"] {
        let mut j = 0;
        while let Some(p) = text[j..].find(needle) {
            let at = j + p;
            let before = if at == 0 { b' ' } else { bytes[at - 1] };
            if !(before.is_ascii_alphanumeric() || before == b'_') {
                found.push(needle.to_string());
            }
            j = at + needle.len();
        }
    }
    found
}

fn resolves(base: &Path, cited: &str) -> bool {
    if cited == "shared/" || cited == "spec/" {
        return false;
    }
    let p = base.join(cited);
    if p.is_file() {
        return true;
    }
    // normalise `a/../b` to compare with the pending list
    let mut parts: Vec<String> = Vec::new();
    let rel = p.strip_prefix(root()).unwrap_or(&p).to_path_buf();
    for c in rel.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().to_string()),
            _ => {}
        }
    }
    PENDING.contains(&parts.join("/").as_str())
}

fn check(what: &str, base: &Path, text: &str, bad: &mut Vec<String>) {
    for c in citations(text) {
        if !resolves(base, &c) {
            bad.push(format!("{what}: cites `{c}`, not a file of the repository"));
        }
    }
}

#[test]
fn the_citation_scanner_catches_what_it_must() {
    let r = root();
    let mut bad = Vec::new();
    check("t", &r, "see model.md §7", &mut bad);
    check("t", &r, "(formats.md §3)", &mut bad);
    check("t", &r, "in ../spec/model.md", &mut bad);
    check("t", &r, "shared/golden/x.csv", &mut bad);
    check("t", &r, "docs/nothing.md", &mut bad);
    assert_eq!(bad.len(), 6, "{bad:#?}"); // spec/ twice counts: path + spec/
    let mut ok = Vec::new();
    check(
        "t",
        &r,
        "see docs/model.md §7 and docs/formats.md §3",
        &mut ok,
    );
    check(
        "t",
        &r.join("docs"),
        "see model.md §7, [x](config.md)",
        &mut ok,
    );
    check("t", &r, "V22 extras: docs/v22.md §4", &mut ok);
    assert!(ok.is_empty(), "{ok:#?}");
}

#[test]
fn markdown_and_source_cite_only_files_in_the_repository() {
    let r = root();
    let mut files = Vec::new();
    walk(&r, &mut files);
    let mut bad = Vec::new();
    let mut n = 0;
    for f in &files {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        let base = match ext {
            // Markdown links are relative to the file
            "md" => f.parent().unwrap().to_path_buf(),
            // code, configs and scripts cite from the repository root
            "rs" | "toml" | "sh" | "py" | "cfd" => r.clone(),
            _ => continue,
        };
        if f.starts_with(r.join("tests/golden")) && ext != "md" {
            continue; // reference data
        }
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if f.ends_with("tests/citations.rs") {
            continue; // this file names the forbidden forms on purpose
        }
        n += 1;
        let name = f.strip_prefix(&r).unwrap().display().to_string();
        let mut here = Vec::new();
        check(&name, &base, &text, &mut here);
        if ext == "rs" && !here.is_empty() {
            // `include_str!("../docs/config.md")`: relative to the source file
            here.clear();
            for c in citations(&text) {
                if !resolves(&base, &c) && !resolves(f.parent().unwrap(), &c) {
                    here.push(format!("{name}: cites `{c}`, not a file of the repository"));
                }
            }
        }
        bad.extend(here);
    }
    assert!(n > 50, "only {n} files scanned");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn usim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .expect("run usim");
    assert!(out.status.success(), "usim {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The subcommand names listed by `usim --help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn help_texts_and_example_cite_only_files_in_the_repository() {
    let r = root();
    let mut bad = Vec::new();
    let top = usim(&["--help"]);
    check("usim --help", &r, &top, &mut bad);
    let subs = subcommands(&top);
    assert!(subs.len() >= 10, "{subs:?}");
    for s in &subs {
        let h = usim(&[s, "--help"]);
        check(&format!("usim {s} --help"), &r, &h, &mut bad);
    }
    check("usim example", &r, &usim(&["example"]), &mut bad);
    check("usim interface", &r, &usim(&["interface"]), &mut bad);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
