//! The module import graph of `src/` runs one way (docs/architecture.md):
//!
//! * at every level of the module tree, the sibling subtrees import each
//!   other without a cycle (a file's imports count for every subtree it is
//!   in, so `interp::timed_commands::bank → model` and `model → interp`
//!   make the cycle `interp ⇄ model` at the top level);
//! * the lowest layers never import upward: the model never sees the
//!   config file, the interpolators and message parsing never see the
//!   model, and the leaves import nothing of the crate.
//!
//! Imports are read from the source text: `crate::`, `super::`, `self::`
//! and child-module paths, in `use` trees and in code, leaving out
//! comments, strings and `#[cfg(test)]` modules (tests may reach anything).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// Every module file of `src/` (the library; `main.rs` is the thin binary)
/// with its module path.
fn module_files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts == ["main"] {
            continue;
        }
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        out.insert(parts, f);
    }
    out
}

/// The source without comments, string and char literals (each replaced by
/// a space, line breaks kept so line numbers stay right).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |s: &[char], out: &mut String| {
        for ch in s {
            out.push(if *ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let start = i;
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            keep_lines(&c[start..i.min(c.len())], &mut out);
        } else if c[i] == 'r'
            && (c.get(i + 1) == Some(&'"') || c.get(i + 1) == Some(&'#'))
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            let start = i;
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < c.len() {
                if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                j += 1;
            }
            keep_lines(&c[start..j.min(c.len())], &mut out);
            i = j;
        } else if c[i] == '"' {
            let start = i;
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            keep_lines(&c[start..i.min(c.len())], &mut out);
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            let start = i;
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            keep_lines(&c[start..i.min(c.len())], &mut out);
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Removes `#[cfg(test)]` items with a body (`mod tests { … }`) and returns
/// the names of test-only child modules declared as `#[cfg(test)] mod x;`.
fn drop_test_modules(text: &str) -> (String, BTreeSet<String>) {
    let mut out = text.to_string();
    let mut test_children = BTreeSet::new();
    let mut from = 0;
    while let Some(pos) = out[from..].find("#[cfg(test)]") {
        let at = from + pos;
        let rest = &out[at + "#[cfg(test)]".len()..];
        let trimmed = rest.trim_start();
        let skip = rest.len() - trimmed.len();
        let Some(after_mod) = trimmed
            .strip_prefix("mod ")
            .or_else(|| trimmed.strip_prefix("pub mod "))
        else {
            from = at + 1;
            continue;
        };
        let name: String = after_mod
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let body_start = at + "#[cfg(test)]".len() + skip;
        let semi = out[body_start..].find(';');
        let brace = out[body_start..].find('{');
        match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                test_children.insert(name);
                from = body_start + s;
            }
            (_, Some(b)) => {
                let open = body_start + b;
                let mut depth = 0;
                let mut end = out.len();
                for (k, ch) in out[open..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let blank: String = out[at..end]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' })
                    .collect();
                out.replace_range(at..end, &blank);
                from = at + blank.len();
            }
            _ => break,
        }
    }
    (out, test_children)
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn go(prefix: &str, t: &str, out: &mut Vec<String>) {
        if let Some(open) = t.find('{') {
            let head = &t[..open];
            let inner = &t[open + 1..t.rfind('}').unwrap_or(t.len())];
            let mut depth = 0;
            let mut start = 0;
            let mut parts = Vec::new();
            for (i, ch) in inner.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&inner[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&inner[start..]);
            for p in parts.into_iter().filter(|p| !p.is_empty()) {
                go(&format!("{prefix}{head}"), p, out);
            }
        } else {
            let t = t.split(" as ").next().unwrap_or(t);
            out.push(format!("{prefix}{t}"));
        }
    }
    let mut out = Vec::new();
    go("", &tree, &mut out);
    out
}

/// Resolves a path written in module `here` to the deepest module file it
/// names, or None for paths outside the crate.
fn resolve(
    here: &ModPath,
    children: &BTreeSet<String>,
    path: &str,
    modules: &BTreeMap<ModPath, PathBuf>,
) -> Option<ModPath> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut base, rest): (ModPath, &[&str]) = match segs.first()? {
        &"crate" => (Vec::new(), &segs[1..]),
        &"self" => (here.clone(), &segs[1..]),
        &"super" => {
            let mut b = here.clone();
            let mut k = 0;
            while segs.get(k) == Some(&"super") {
                b.pop();
                k += 1;
            }
            (b, &segs[k..])
        }
        first if children.contains(*first) => (here.clone(), &segs[..]),
        _ => return None,
    };
    for s in rest {
        let mut next = base.clone();
        next.push(s.to_string());
        if modules.contains_key(&next) {
            base = next;
        } else {
            break;
        }
    }
    Some(base)
}

/// Module → (module it imports, the file:line that does).
fn import_graph(src: &Path) -> BTreeMap<ModPath, BTreeMap<ModPath, String>> {
    let modules = module_files(src);
    let mut test_only: BTreeSet<ModPath> = BTreeSet::new();
    let mut texts = BTreeMap::new();
    for (m, f) in &modules {
        let raw = std::fs::read_to_string(f).unwrap();
        let (text, tests) = drop_test_modules(&strip(&raw));
        for t in tests {
            let mut p = m.clone();
            p.push(t);
            test_only.insert(p);
        }
        texts.insert(m.clone(), text);
    }
    let mut graph: BTreeMap<ModPath, BTreeMap<ModPath, String>> = BTreeMap::new();
    for (m, text) in &texts {
        if test_only.iter().any(|t| m.starts_with(t)) {
            continue;
        }
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k.last().unwrap().clone())
            .collect();
        let file = modules[m].display().to_string();
        let mut paths: Vec<(usize, String)> = Vec::new();
        // `use` trees
        let mut from = 0;
        while let Some(p) = text[from..].find("use ") {
            let at = from + p;
            let before = text[..at].chars().last();
            from = at + 4;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let Some(end) = text[at..].find(';') else {
                break;
            };
            let line = text[..at].matches('\n').count() + 1;
            for p in expand_use(&text[at + 4..at + end]) {
                paths.push((line, p));
            }
        }
        // paths in code
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut line = 1;
        while i < chars.len() {
            if chars[i] == '\n' {
                line += 1;
            }
            let starts = (chars[i].is_alphabetic() || chars[i] == '_')
                && (i == 0
                    || !(chars[i - 1].is_alphanumeric()
                        || chars[i - 1] == '_'
                        || chars[i - 1] == ':'));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || chars[j] == '_' || chars[j] == ':')
            {
                j += 1;
            }
            let tok: String = chars[i..j].iter().collect();
            if tok.contains("::") {
                paths.push((line, tok));
            }
            i = j;
        }
        for (line, p) in paths {
            if let Some(target) = resolve(m, &children, &p, &modules) {
                if &target != m && !test_only.iter().any(|t| target.starts_with(t)) {
                    graph
                        .entry(m.clone())
                        .or_default()
                        .entry(target)
                        .or_insert_with(|| format!("{file}:{line}"));
                }
            }
        }
    }
    graph
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// For each parent, the graph between its child subtrees; returns every
/// cycle found as text.
fn sibling_cycles(graph: &BTreeMap<ModPath, BTreeMap<ModPath, String>>) -> Vec<String> {
    // (parent, child a, child b) -> evidence
    let mut levels: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (from, tos) in graph {
        for (to, at) in tos {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // a module and its own ancestor or descendant
            }
            let parent = from[..common].to_vec();
            levels
                .entry(parent)
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert_with(|| format!("{} → {} ({at})", name(from), name(to)));
        }
    }
    let mut cycles = Vec::new();
    for (parent, edges) in &levels {
        // Tarjan-free: a cycle exists iff some node reaches itself.
        for start in edges.keys() {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, trail)) = stack.pop() {
                for next in edges.get(&node).map(|m| m.keys()).into_iter().flatten() {
                    if next == start {
                        let mut evidence = Vec::new();
                        let mut all = trail.clone();
                        all.push(start.clone());
                        for w in all.windows(2) {
                            evidence.push(edges[&w[0]][&w[1]].clone());
                        }
                        cycles.push(format!(
                            "under {}: {} — {}",
                            name(parent),
                            all.join(" → "),
                            evidence.join("; ")
                        ));
                    } else if seen.insert(next.clone()) {
                        let mut t = trail.clone();
                        t.push(next.clone());
                        stack.push((next.clone(), t));
                    }
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    cycles
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_cycles_at_any_level() {
    let cycles = sibling_cycles(&import_graph(&src()));
    assert!(
        cycles.is_empty(),
        "import cycles (docs/architecture.md):\n{}",
        cycles.join("\n")
    );
}

/// The lowest layers and what each of them may not import (a top-level
/// module of the crate, or any module below it).
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("text", &["*"]),
    ("actuator", &["*"]),
    ("atomic_file", &["*"]),
    (
        "command",
        &[
            "model", "config", "mission", "replay", "mqtt", "view", "cli", "interp",
        ],
    ),
    (
        "interp",
        &[
            "model", "config", "mission", "replay", "mqtt", "view", "cli",
        ],
    ),
    (
        "model",
        &[
            "config",
            "mission",
            "replay",
            "mqtt",
            "view",
            "cli",
            "sweep",
            "encounter",
        ],
    ),
    (
        "sensor",
        &[
            "config", "mission", "replay", "mqtt", "view", "cli", "sweep", "moos",
        ],
    ),
    (
        "config",
        &["mission", "replay", "mqtt", "view", "cli", "sweep"],
    ),
    ("mission", &["replay", "mqtt", "view", "cli", "sweep"]),
    ("replay", &["mqtt", "view", "cli", "sweep"]),
    // ROS 2's sans-IO codecs sit beside nmea and alog: below replay (whose
    // bag writer uses them) and below the DDS participant.
    (
        "ros2",
        &[
            "config", "mission", "replay", "mqtt", "view", "cli", "sweep", "dds", "moos",
        ],
    ),
];

#[test]
fn the_lowest_layers_never_import_upward() {
    let graph = import_graph(&src());
    let mut bad = Vec::new();
    for (from, tos) in &graph {
        let Some(top) = from.first() else { continue };
        let Some((_, banned)) = FORBIDDEN.iter().find(|(m, _)| m == top) else {
            continue;
        };
        for (to, at) in tos {
            let Some(target) = to.first() else { continue };
            if target != top && (banned.contains(&"*") || banned.contains(&target.as_str())) {
                bad.push(format!("{} → {} ({at})", name(from), name(to)));
            }
        }
    }
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

/// The transports the live host serves, and the host: no transport imports
/// another, and the host imports none of them (issue 38). `view` is an MQTT
/// client (a tool on MQTT, not a transport of the host), and
/// `moos::bridge` joins a MOOSDB to an MQTT broker: both use MQTT by
/// definition and are left out.
const TRANSPORTS: &[&str] = &["mqtt", "moos", "dds"];
const BRIDGES: &[&str] = &["moos::bridge"];

#[test]
fn transports_never_import_each_other_and_the_host_none() {
    let graph = import_graph(&src());
    let mut bad = Vec::new();
    for (from, tos) in &graph {
        let Some(top) = from.first().map(String::as_str) else {
            continue;
        };
        if top != "live" && !TRANSPORTS.contains(&top) || BRIDGES.contains(&name(from).as_str()) {
            continue;
        }
        for (to, at) in tos {
            let Some(target) = to.first().map(String::as_str) else {
                continue;
            };
            if target != top && TRANSPORTS.contains(&target) {
                bad.push(format!("{} → {} ({at})", name(from), name(to)));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a transport or the live host imports a transport:\n{}",
        bad.join("\n")
    );
}

/// The checker itself finds a cycle through children and an upward import
/// in a small synthetic tree, and none in its acyclic twin.
#[test]
fn the_checker_finds_cycles_through_children() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    std::fs::create_dir_all(s.join("model")).unwrap();
    std::fs::create_dir_all(s.join("interp/bank")).unwrap();
    std::fs::write(s.join("lib.rs"), "pub mod model; pub mod interp;\n").unwrap();
    std::fs::write(
        s.join("model/mod.rs"),
        "mod speed;\nuse crate::interp::shaping::Shaping;\n",
    )
    .unwrap();
    std::fs::write(s.join("model/speed.rs"), "use super::Record;\n").unwrap();
    std::fs::write(s.join("interp/mod.rs"), "pub mod bank; pub mod shaping;\n").unwrap();
    std::fs::write(
        s.join("interp/shaping.rs"),
        "// use crate::model::X;\nlet s = \"crate::model\";\n",
    )
    .unwrap();
    std::fs::write(
        s.join("interp/bank/mod.rs"),
        "pub use crate::model::Actuator;\n#[cfg(test)]\nmod tests { use crate::model::Y; }\n",
    )
    .unwrap();
    let cycles = sibling_cycles(&import_graph(s));
    assert_eq!(cycles.len(), 2, "{cycles:?}"); // found from each end
    assert!(cycles[0].contains("under crate"), "{cycles:?}");
    assert!(
        cycles.iter().any(|c| c.contains("interp::bank → model")),
        "{cycles:?}"
    );
    // Without the child's import, the tree is acyclic: comments, strings
    // and test modules do not count.
    std::fs::write(
        s.join("interp/bank/mod.rs"),
        "#[cfg(test)]\nmod tests { use crate::model::Y; }\n",
    )
    .unwrap();
    assert!(sibling_cycles(&import_graph(s)).is_empty());
}

/// The layers of `src/lib.rs`'s front page in order, each with the modules
/// its list documents (`//! ## Core: …` then `//! * [`name`]: …` lines).
fn documented_layers(lib: &str) -> Vec<(String, Vec<String>)> {
    let mut layers: Vec<(String, Vec<String>)> = Vec::new();
    for line in lib.lines() {
        if let Some(h) = line.strip_prefix("//! ## ") {
            let name = h.split(':').next().unwrap_or(h).trim().to_lowercase();
            layers.push((name, Vec::new()));
        } else if let Some(item) = line.strip_prefix("//! * ") {
            let module = item.split('`').nth(1).unwrap_or("").to_string();
            let layer = layers.last_mut().expect("a module listed before any layer");
            layer.1.push(module);
        }
    }
    layers
}

/// The `pub mod` items of `src/lib.rs` under their `// layer` comments, in order.
fn declared_layers(lib: &str) -> Vec<(String, Vec<String>)> {
    let mut layers: Vec<(String, Vec<String>)> = Vec::new();
    for line in lib.lines().map(str::trim) {
        if let Some(c) = line.strip_prefix("// ") {
            layers.push((c.trim().to_lowercase(), Vec::new()));
        } else if let Some(m) = line.strip_prefix("pub mod ") {
            let module = m.trim_end_matches(';').trim().to_string();
            let layer = layers
                .last_mut()
                .expect("a `pub mod` before any `// layer`");
            layer.1.push(module);
        }
    }
    layers
}

/// Modules that exist only under `#[cfg(test)]` (`#[cfg(test)] mod x;`).
fn test_only_modules(modules: &BTreeMap<ModPath, PathBuf>) -> BTreeSet<ModPath> {
    let mut out = BTreeSet::new();
    for (m, f) in modules {
        let raw = std::fs::read_to_string(f).unwrap();
        for t in drop_test_modules(&strip(&raw)).1 {
            let mut p = m.clone();
            p.push(t);
            out.insert(p);
        }
    }
    out
}

/// `src/lib.rs`'s module list tells the truth: every top-level module of
/// `src/` is declared and documented once, in the same layer and order, no
/// documented module is missing from `src/`, and no module imports one of a
/// later layer (docs/architecture.md).
#[test]
fn the_front_page_lists_every_module_in_its_layer() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let documented = documented_layers(&lib);
    let declared = declared_layers(&lib);
    let names: Vec<&str> = documented.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        names,
        ["core", "files", "runners", "transports", "tools"],
        "the layers of src/lib.rs's front page"
    );
    assert_eq!(
        documented, declared,
        "src/lib.rs: the documented list and the `pub mod` items (with their `// layer` comments)"
    );
    let all: Vec<&String> = declared.iter().flat_map(|(_, ms)| ms).collect();
    let set: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(set.len(), all.len(), "a module listed twice: {all:?}");
    let files: BTreeSet<String> = module_files(&src())
        .into_keys()
        .filter(|m| m.len() == 1)
        .map(|m| m[0].clone())
        .collect();
    let set: BTreeSet<String> = set.into_iter().cloned().collect();
    assert_eq!(set, files, "src/lib.rs's modules and the files of src/");

    let layer_of: BTreeMap<&str, usize> = declared
        .iter()
        .enumerate()
        .flat_map(|(i, (_, ms))| ms.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let mut upward = Vec::new();
    for (from, tos) in import_graph(&src()) {
        let Some(a) = from.first() else { continue };
        for (to, at) in tos {
            let Some(b) = to.first() else { continue };
            if layer_of[b.as_str()] > layer_of[a.as_str()] {
                upward.push(format!(
                    "{} ({}) → {} ({}) at {at}",
                    name(&from),
                    declared[layer_of[a.as_str()]].0,
                    name(&to),
                    declared[layer_of[b.as_str()]].0
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports into a later layer of src/lib.rs:\n{}",
        upward.join("\n")
    );
}

/// The module paths a cell of the architecture table names: `` `a` ``,
/// `` `a::b` `` and `` `a::{b, c}` ``, each backticked.
fn table_paths(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (k, part) in cell.split('`').enumerate() {
        if k % 2 == 0 {
            continue;
        }
        if let Some((head, list)) = part.split_once("::{") {
            for child in list.trim_end_matches('}').split(',') {
                out.push(format!("{head}::{}", child.trim()));
            }
        } else {
            out.push(part.trim().to_string());
        }
    }
    out
}

/// docs/architecture.md's table "One line per module" names every module of
/// `src/` down to the second level (`model::speed`; test-only modules left
/// out) exactly once, no module that does not exist, and runs through the
/// layers of `src/lib.rs` in order.
#[test]
fn the_architecture_table_lists_every_module_by_layer() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let section = doc
        .split("\n## One line per module")
        .nth(1)
        .expect("docs/architecture.md: the section `## One line per module`");
    let section = section.split("\n## ").next().unwrap();
    let mut named: Vec<String> = Vec::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        named.extend(table_paths(row.split('|').nth(1).unwrap_or("")));
    }
    let modules = module_files(&src());
    let tests = test_only_modules(&modules);
    let expected: BTreeSet<String> = modules
        .keys()
        .filter(|m| (1..=2).contains(&m.len()) && !tests.contains(*m))
        .map(|m| m.join("::"))
        .collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let twice: Vec<&String> = named
        .iter()
        .filter(|n| !seen.insert(n.to_string()))
        .collect();
    assert!(twice.is_empty(), "named twice: {twice:?}");
    let missing: Vec<&String> = expected.difference(&seen).collect();
    assert!(missing.is_empty(), "modules without a row: {missing:?}");
    let unknown: Vec<&String> = seen.difference(&expected).collect();
    assert!(
        unknown.is_empty(),
        "rows naming no module of src/: {unknown:?}"
    );

    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let layers = declared_layers(&lib);
    let layer_of = |top: &str| {
        layers
            .iter()
            .position(|(_, ms)| ms.iter().any(|m| m == top))
    };
    let order: Vec<(usize, &String)> = named
        .iter()
        .map(|n| (layer_of(n.split("::").next().unwrap()).unwrap(), n))
        .collect();
    for w in order.windows(2) {
        assert!(
            w[0].0 <= w[1].0,
            "docs/architecture.md: `{}` ({}) comes after `{}` ({})",
            w[1].1,
            layers[w[1].0].0,
            w[0].1,
            layers[w[0].0].0
        );
    }
}
