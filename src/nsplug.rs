//! nsplug, MOOS-IvP's mission-file preprocessor, as `usim import-moos`
//! (and anything else reading a `.moos` template) needs it.
//!
//! What is handled, with nsplug's meaning (MOOS-IvP `ivp/src/app_nsplug/`
//! `Expander.cpp` and `lib_mbutil/MacroUtils.cpp`, read, not copied):
//!
//! - `#define NAME VALUE` (also `#define $(NAME) VALUE`); an empty value
//!   defines the macro as empty ("defined" for `#ifdef`).
//! - `$(NAME)` is replaced by the value, `%(NAME)` by the value in upper
//!   case; `$(NAME=DEFAULT)` takes `DEFAULT` when `NAME` is undefined and
//!   `$(NAME:=DEFAULT)` also when it is defined empty. Values may contain
//!   macros (expanded again, at most [`MAX_PASSES`] times).
//! - `#ifdef A`, `#ifdef A VALUE`, `||` / `&&` of such clauses (both in one
//!   line is false, as nsplug says), `#ifndef A B …` (none defined),
//!   `#elseifdef …`, `#else`, `#endif`, nested.
//! - `#include FILE` and `#include FILE <tag>`: the whole file, or only the
//!   lines after `<tag><tag>` up to the next `<tag>` line (in a tagged
//!   include, `#` lines are dropped, as nsplug does). The file name may be
//!   quoted and contain macros.
//!
//! Where nsplug is silent, this module is not: undefined macros are an
//! error naming every one with its file and line (or, with
//! [`Options::keep_undefined`], kept in the text and reported); an include
//! loop, an include tag the file does not have, an `#ifdef` never closed,
//! a dangling `#else`/`#elseifdef`/`#endif` are errors. Lines after `//`
//! are comments: a macro there is never an error.
//!
//! Sans-IO: [`expand`] takes the top file's text and a loader closure for
//! includes; [`preprocess`] and [`preprocess_file`] are the file-reading
//! shell (an include is looked up next to the file that includes it, then
//! in the current directory, nsplug's default path).
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// At most this many rounds of substitution in one line (nsplug: 100).
pub const MAX_PASSES: usize = 100;
/// Includes nest at most this deep.
pub const MAX_DEPTH: usize = 32;
/// The expanded text is at most this many bytes (a defence against a file
/// that includes another many times over).
pub const MAX_OUTPUT: usize = 16 << 20;
/// At most this many lines are read, includes counted each time (a file
/// included many times over is read many times).
pub const MAX_LINES_READ: usize = 1_000_000;
/// At most this many bytes are read in all, the file and every include
/// counted each time it is read (a file of 8 MiB whose text sits in an
/// `#ifdef NEVER` block, included 200,000 times, adds few lines but 1.6 TB).
pub const MAX_BYTES_READ: usize = 64 << 20;
/// At most this many undefined macros are kept in [`Expanded::kept`].
pub const MAX_KEPT: usize = 10_000;
/// A line grows to at most this many bytes by substitution.
pub const MAX_LINE: usize = 1 << 16;

/// Macros given from outside (`-D KEY=VALUE`) and how to treat undefined ones.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `(name, value)` pairs, defined before the first line.
    pub defines: Vec<(String, String)>,
    /// Keep a line with an undefined macro as it is and report it, instead
    /// of failing.
    pub keep_undefined: bool,
}

/// Where an output line came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Origin {
    /// Index into [`Expanded::files`].
    pub file: usize,
    /// 1-based line in that file.
    pub line: usize,
}

/// An undefined macro kept in the text ([`Options::keep_undefined`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// The macro's name as written (`VNAME`, or `VNAME=x` with a default).
    pub name: String,
    /// The file as named to the loader.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

/// The preprocessed text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expanded {
    /// The lines, each ended by `\n`.
    pub text: String,
    /// One entry per line of `text`.
    pub origins: Vec<Origin>,
    /// The files read, the top one first, as named to the loader.
    pub files: Vec<String>,
    /// Undefined macros kept (only with `keep_undefined`).
    pub kept: Vec<Kept>,
    /// Things nsplug warns about: a macro redefined with another value.
    pub notes: Vec<String>,
}

impl Expanded {
    /// `file:line` of output line `n` (1-based), or `line n` if unknown.
    pub fn place(&self, n: usize) -> String {
        match n.checked_sub(1).and_then(|i| self.origins.get(i)) {
            Some(o) => format!(
                "{}:{}",
                self.files.get(o.file).map_or("?", String::as_str),
                o.line
            ),
            None => format!("line {n}"),
        }
    }
}

/// Why the file could not be preprocessed: file, line and what.
#[derive(Debug, Clone, PartialEq)]
pub struct NsplugError {
    /// The file as named to the loader.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for NsplugError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for NsplugError {}

/// The loader: `(including file, name as written)` → `(file name, text)`.
/// The returned name identifies the file (include loops are found by it).
pub type Loader<'a> = dyn FnMut(&str, &str) -> Result<(String, String), String> + 'a;

/// A conditional's state (nsplug's mode stack).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    IfdefYes,
    IfdefNo,
    IfdefNoMore,
    IfndefYes,
    IfndefNo,
    ElseYes,
    ElseNo,
}

struct State<'l, 'a> {
    macros: BTreeMap<String, String>,
    /// Open conditionals with where they were opened.
    modes: Vec<(Mode, usize, usize)>,
    out: Expanded,
    stack: Vec<String>,
    lines_read: usize,
    bytes_read: usize,
    keep_undefined: bool,
    load: &'l mut Loader<'a>,
}

/// Preprocess `text` (the file `name`) as nsplug does; includes come from
/// `load`.
pub fn expand(
    name: &str,
    text: &str,
    opts: &Options,
    load: &mut Loader<'_>,
) -> Result<Expanded, NsplugError> {
    let mut st = State {
        macros: BTreeMap::new(),
        modes: Vec::new(),
        out: Expanded::default(),
        stack: Vec::new(),
        lines_read: 0,
        bytes_read: text.len(),
        keep_undefined: opts.keep_undefined,
        load,
    };
    for (k, v) in &opts.defines {
        st.macros.insert(k.clone(), v.clone());
    }
    st.file(name, text, None)?;
    if !opts.keep_undefined && !st.out.kept.is_empty() {
        return Err(st.undefined_error());
    }
    if let Some(&(_, file, line)) = st.modes.last() {
        return Err(NsplugError {
            file: st.out.files[file].clone(),
            line,
            message: "this #ifdef/#ifndef is never closed with #endif".into(),
        });
    }
    Ok(st.out)
}

impl State<'_, '_> {
    /// Every undefined macro met, as one error at the first of them.
    fn undefined_error(&self) -> NsplugError {
        let kept = &self.out.kept;
        let first = &kept[0];
        let mut names: Vec<&str> = Vec::new();
        let mut also = Vec::new();
        for k in kept {
            if names.contains(&k.name.as_str()) {
                continue;
            }
            names.push(&k.name);
            if names.len() > 1 && also.len() < 10 {
                also.push(format!(
                    "`{}` ({}:{})",
                    shown(&k.name),
                    shown(&k.file),
                    k.line
                ));
            }
        }
        let base = |n: &str| shown(n.split([':', '=']).next().unwrap_or(n));
        let mut message = format!("undefined macro `{}`", shown(&first.name));
        if !also.is_empty() {
            message.push_str(&format!("; also undefined: {}", also.join(", ")));
            if names.len() > also.len() + 1 {
                message.push_str(&format!(" and {} more", names.len() - also.len() - 1));
            }
        }
        message.push_str(&format!(
            " (define {} with --define {}=VALUE, or --keep-undefined to keep {} as written)",
            if names.len() > 1 { "each" } else { "it" },
            base(&first.name),
            if names.len() > 1 { "them" } else { "it" },
        ));
        NsplugError {
            file: first.file.clone(),
            line: first.line,
            message,
        }
    }

    fn skipping(&self) -> bool {
        self.modes.iter().any(|m| {
            matches!(
                m.0,
                Mode::IfdefNo | Mode::IfdefNoMore | Mode::ElseNo | Mode::IfndefNo
            )
        })
    }

    fn file(&mut self, name: &str, text: &str, tag: Option<&str>) -> Result<(), NsplugError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(NsplugError {
                file: name.to_string(),
                line: 0,
                message: format!("includes nest deeper than {MAX_DEPTH}"),
            });
        }
        let fi = self.out.files.len();
        self.out.files.push(name.to_string());
        self.stack.push(name.to_string());
        let err = |line: usize, message: String| NsplugError {
            file: name.to_string(),
            line,
            message,
        };
        let mut current_tag = String::new();
        let mut tag_seen = false;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            self.lines_read += 1;
            if self.lines_read > MAX_LINES_READ {
                return Err(err(
                    n,
                    format!("more than {MAX_LINES_READ} lines to read, includes counted"),
                ));
            }
            let line = raw.replace('\t', " ");
            let line = line.trim_matches(|c: char| c == ' ' || c == '\r' || c == '\n');
            if let Some(t) = line.strip_prefix("<tag>") {
                current_tag = strip_chevrons(t.trim()).to_string();
                tag_seen |= tag == Some(current_tag.as_str());
                continue;
            }
            if let Some(t) = tag {
                if t != current_tag || line.starts_with('#') {
                    continue;
                }
            }
            let (left, rest) = match line.split_once(' ') {
                Some((l, r)) => (l, r.trim_matches(' ')),
                None => (line, ""),
            };
            match left {
                "#ifdef" => {
                    let yes = self.if_def(rest);
                    let m = if yes { Mode::IfdefYes } else { Mode::IfdefNo };
                    self.modes.push((m, fi, n));
                }
                "#ifndef" => {
                    let yes = !rest.is_empty()
                        && rest
                            .split(' ')
                            .filter(|c| !c.is_empty())
                            .all(|c| !self.macros.contains_key(c));
                    let m = if yes { Mode::IfndefYes } else { Mode::IfndefNo };
                    self.modes.push((m, fi, n));
                }
                "#elseifdef" => {
                    let yes = self.if_def(rest);
                    match self.modes.last_mut() {
                        Some((m @ Mode::IfdefYes, ..)) => *m = Mode::IfdefNoMore,
                        Some((m @ Mode::IfdefNo, ..)) if yes => *m = Mode::IfdefYes,
                        Some((Mode::IfdefNo | Mode::IfdefNoMore, ..)) => {}
                        _ => return Err(err(n, "#elseifdef without an #ifdef".into())),
                    }
                }
                "#else" => match self.modes.last_mut() {
                    None => return Err(err(n, "#else without an #ifdef or #ifndef".into())),
                    Some((m, ..)) => match m {
                        Mode::IfdefYes | Mode::IfndefYes => *m = Mode::ElseNo,
                        Mode::IfdefNo | Mode::IfndefNo => *m = Mode::ElseYes,
                        _ => {}
                    },
                },
                "#endif" => {
                    if self.modes.pop().is_none() {
                        return Err(err(n, "#endif without an #ifdef or #ifndef".into()));
                    }
                }
                _ if self.skipping() => {}
                "#include" => {
                    let before = self.out.kept.len();
                    let rest = self.substitute(rest, fi, n)?;
                    if !self.keep_undefined && self.out.kept.len() > before {
                        return Err(self.undefined_error());
                    }
                    let mut file_str = rest.trim().to_string();
                    let mut inc_tag = None;
                    if let Some((f, last)) = file_str.rsplit_once(' ') {
                        if last.starts_with('<') && last.ends_with('>') && last.len() >= 2 {
                            inc_tag = Some(strip_chevrons(last).to_string());
                            file_str = f.trim().to_string();
                        }
                    }
                    let file_str = strip_quotes(&file_str).to_string();
                    if file_str.is_empty() {
                        return Err(err(n, "#include names no file".into()));
                    }
                    let (id, itext) = (self.load)(name, &file_str)
                        .map_err(|e| err(n, format!("#include {}: {e}", shown(&file_str))))?;
                    self.bytes_read = self.bytes_read.saturating_add(itext.len());
                    if self.bytes_read > MAX_BYTES_READ {
                        return Err(err(
                            n,
                            format!(
                                "#include {}: more than {} MiB to read, includes counted \
                                 each time",
                                shown(&file_str),
                                MAX_BYTES_READ >> 20
                            ),
                        ));
                    }
                    if self.stack.contains(&id) {
                        return Err(err(
                            n,
                            format!(
                                "#include loop: {} is already being included ({})",
                                shown(&file_str),
                                self.stack
                                    .iter()
                                    .map(|s| shown(s))
                                    .collect::<Vec<_>>()
                                    .join(" -> ")
                            ),
                        ));
                    }
                    self.file(&id, &itext, inc_tag.as_deref())
                        .map_err(|mut e| {
                            e.message.push_str(&format!(" (included from {name}:{n})"));
                            e
                        })?;
                }
                "#define" => {
                    let mut parts = rest.splitn(2, ' ');
                    let mut macro_name = parts.next().unwrap_or("").to_string();
                    let value: String = compact_spaces(parts.next().unwrap_or("").trim());
                    if macro_name.len() > 3
                        && macro_name.starts_with("$(")
                        && macro_name.ends_with(')')
                    {
                        macro_name = macro_name[2..macro_name.len() - 1].to_string();
                    }
                    if macro_name.is_empty() {
                        return Err(err(n, "#define names no macro".into()));
                    }
                    if let Some(old) = self.macros.get(&macro_name) {
                        if *old != value {
                            self.out.notes.push(format!(
                                "{name}:{n}: macro `{}` redefined from `{}` to `{}`",
                                shown(&macro_name),
                                shown(old),
                                shown(&value)
                            ));
                        }
                    }
                    self.macros.insert(macro_name, value);
                }
                _ => {
                    let expanded = self.substitute(raw, fi, n)?;
                    if self.out.text.len() + expanded.len() + 1 > MAX_OUTPUT {
                        return Err(err(
                            n,
                            format!("the expanded text would exceed {MAX_OUTPUT} bytes"),
                        ));
                    }
                    self.out.text.push_str(&expanded);
                    self.out.text.push('\n');
                    self.out.origins.push(Origin { file: fi, line: n });
                }
            }
        }
        if let Some(t) = tag {
            if !tag_seen {
                return Err(err(0, format!("has no `<tag><{}>` section", shown(t))));
            }
        }
        self.stack.pop();
        Ok(())
    }

    /// nsplug's `#ifdef` condition.
    fn if_def(&self, entry: &str) -> bool {
        let disj = entry.contains("||");
        let conj = entry.contains("&&");
        let clause = |c: &str| -> (String, String) {
            let c = c.trim();
            match c.split_once(' ') {
                Some((n, v)) => (n.to_string(), v.trim().to_string()),
                None => (c.to_string(), String::new()),
            }
        };
        if disj && conj {
            return false;
        }
        if conj {
            return entry.split("&&").all(|c| {
                let (n, v) = clause(c);
                if v.is_empty() {
                    self.macros.contains_key(&n)
                } else {
                    // (nsplug also compares with the value of a macro named
                    // `v`; an undefined `n` never matches, unlike nsplug,
                    // whose undefined `n` equals any undefined `v`)
                    match self.macros.get(&n) {
                        None => false,
                        Some(val) => *val == v || self.macros.get(&v) == Some(val),
                    }
                }
            });
        }
        entry.split("||").any(|c| {
            let (n, v) = clause(c);
            match self.macros.get(&n) {
                None => false,
                Some(_) if v.is_empty() => true,
                Some(val) => *val == v || self.macros.get(&v) == Some(val),
            }
        })
    }

    /// Substitute the macros of one line; an undefined one is left as
    /// written and recorded in `kept` (an error at the end unless kept).
    /// Text after `//` is a comment and never recorded.
    fn substitute(&mut self, line: &str, fi: usize, n: usize) -> Result<String, NsplugError> {
        let mut cur = line.to_string();
        let mut pass = 0;
        loop {
            let (next, changed) = self.one_pass(&cur);
            if next.len() > MAX_LINE {
                return Err(NsplugError {
                    file: self.out.files[fi].clone(),
                    line: n,
                    message: format!(
                        "macro substitution makes the line longer than {MAX_LINE} bytes"
                    ),
                });
            }
            cur = next;
            if !changed {
                break;
            }
            pass += 1;
            if pass >= MAX_PASSES {
                return Err(NsplugError {
                    file: self.out.files[fi].clone(),
                    line: n,
                    message: format!(
                        "macro substitution does not end after {MAX_PASSES} rounds (a macro defined in terms of itself?)"
                    ),
                });
            }
        }
        let code = match cur.find("//") {
            Some(i) => &cur[..i],
            None => &cur[..],
        };
        let undefined: Vec<String> = macro_refs(code)
            .into_iter()
            .map(|(_, _, inner)| inner)
            .collect();
        for u in undefined {
            if self.out.kept.len() < MAX_KEPT {
                self.out.kept.push(Kept {
                    name: u,
                    file: self.out.files[fi].clone(),
                    line: n,
                });
            }
        }
        Ok(cur)
    }

    /// One left-to-right round: every defined (or defaulted) macro reference
    /// replaced; undefined ones left as written.
    fn one_pass(&self, line: &str) -> (String, bool) {
        let mut out = String::with_capacity(line.len());
        let mut changed = false;
        let mut last = 0;
        for (start, end, inner) in macro_refs(line) {
            let upper = line[start..].starts_with('%');
            if let Some(v) = self.resolve(&inner) {
                out.push_str(&line[last..start]);
                if upper {
                    out.push_str(&v.to_uppercase());
                } else {
                    out.push_str(&v);
                }
                last = end;
                changed = true;
            }
        }
        out.push_str(&line[last..]);
        (out, changed)
    }

    /// The replacement of `$(inner)`, `None` if undefined.
    fn resolve(&self, inner: &str) -> Option<String> {
        if let Some((base, default)) = inner.split_once(":=") {
            return match self.macros.get(base) {
                Some(v) if !v.is_empty() => Some(v.clone()),
                _ if !default.is_empty() => Some(default.to_string()),
                _ => None,
            };
        }
        if let Some((base, default)) = inner.split_once('=') {
            return match self.macros.get(base) {
                Some(v) => Some(v.clone()),
                None if !default.is_empty() => Some(default.to_string()),
                None => None,
            };
        }
        self.macros.get(inner).cloned()
    }
}

/// Every `$(…)` / `%(…)` in `s`: (start, end after `)`, inner text). A
/// `$(` with no `)` is reported with the rest of the line as its name.
fn macro_refs(s: &str) -> Vec<(usize, usize, String)> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if (b[i] == b'$' || b[i] == b'%') && b[i + 1] == b'(' {
            match s[i + 2..].find(')') {
                Some(j) => {
                    let end = i + 2 + j + 1;
                    v.push((i, end, s[i + 2..i + 2 + j].to_string()));
                    i = end;
                    continue;
                }
                None => {
                    v.push((i, s.len(), format!("{} (no closing `)`)", &s[i + 2..])));
                    break;
                }
            }
        }
        i += 1;
    }
    v
}

fn strip_chevrons(s: &str) -> &str {
    s.strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(s)
}

fn strip_quotes(s: &str) -> &str {
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

fn compact_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = false;
    for c in s.chars() {
        if c == ' ' {
            if !prev {
                out.push(c);
            }
            prev = true;
        } else {
            out.push(c);
            prev = false;
        }
    }
    out
}

/// Outside text made safe for a terminal: control characters escaped,
/// at most 200 characters.
fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(200).flat_map(char::escape_debug).collect();
    if s.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// Parse `KEY=VALUE` (a `--define`/`-D` argument).
pub fn parse_define(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !s.contains(['\n', '\r']) => {
            Ok((k.trim().to_string(), v.to_string()))
        }
        _ => Err(format!("`{}` is not KEY=VALUE", shown(s))),
    }
}

/// Read `path` and everything it includes, and preprocess it.
pub fn preprocess_file(path: &Path, opts: &Options) -> Result<Expanded, NsplugError> {
    let name = path.display().to_string();
    let text = crate::input_file::read(path, crate::input_file::MAX_TEXT_BYTES)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| NsplugError {
            file: name.clone(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
    let mut load = |from: &str, inc: &str| -> Result<(String, String), String> {
        let inc_path = Path::new(inc);
        let candidates: Vec<PathBuf> = if inc_path.is_absolute() {
            vec![inc_path.to_path_buf()]
        } else {
            let dir = Path::new(from).parent().unwrap_or(Path::new(""));
            vec![dir.join(inc_path), inc_path.to_path_buf()]
        };
        for c in &candidates {
            if c.is_file() {
                let bytes = crate::input_file::read(c, crate::input_file::MAX_TEXT_BYTES)
                    .map_err(|e| format!("cannot read {}: {e}", c.display()))?;
                // the identity of a file for loops: its canonical path
                let id = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
                let shown_name = if id == std::fs::canonicalize(path).unwrap_or_default() {
                    name.clone()
                } else {
                    c.display().to_string()
                };
                return Ok((shown_name, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
        Err(format!(
            "not found (looked in {})",
            candidates
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ))
    };
    expand(&name, &text, opts, &mut load)
}

/// The text of the mission file `path` after nsplug, with `defines` as
/// `-D KEY=VALUE` would give them; an undefined macro is an error.
pub fn preprocess(path: &Path, defines: &[(String, String)]) -> Result<String, NsplugError> {
    let opts = Options {
        defines: defines.to_vec(),
        keep_undefined: false,
    };
    preprocess_file(path, &opts).map(|e| e.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        text: &str,
        defines: &[(&str, &str)],
        files: &[(&str, &str)],
    ) -> Result<Expanded, NsplugError> {
        let opts = Options {
            defines: defines
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            keep_undefined: false,
        };
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let mut load = |_: &str, inc: &str| {
            files
                .iter()
                .find(|(n, _)| n == inc)
                .cloned()
                .ok_or_else(|| "not found".to_string())
        };
        expand("top.moos", text, &opts, &mut load)
    }

    #[test]
    fn macros_and_defaults() {
        let e = run(
            "#define A  x  y\na=$(A) b=%(b) c=$(C=3) d=$(D:=4) e=$(E=5)\n",
            &[("b", "kayak"), ("D", ""), ("E", "")],
            &[],
        )
        .unwrap();
        assert_eq!(e.text, "a=x y b=KAYAK c=3 d=4 e=\n");
        assert_eq!(e.origins, [Origin { file: 0, line: 2 }]);
    }

    #[test]
    fn undefined_is_an_error_with_its_place() {
        let e = run("\nCommunity = $(VNAME)\n", &[], &[]).unwrap_err();
        assert_eq!(e.file, "top.moos");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("undefined macro `VNAME`"), "{e}");
        // in a comment it is not
        assert!(run("x = 1 // $(VNAME)\n", &[], &[]).is_ok());
        // all of them are named at once, each once
        let e = run("a=$(A)\nb=$(B) $(A)\nc=$(C=)\n", &[], &[]).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("top.moos", 1));
        assert!(
            e.message.starts_with(
                "undefined macro `A`; also undefined: `B` (top.moos:2), `C=` (top.moos:3) (define each"
            ),
            "{e}"
        );
    }

    #[test]
    fn conditionals_nest() {
        let t = "#ifdef VTYPE UUV\nuuv\n#ifdef X\nx\n#endif\n#elseifdef VTYPE kayak\nkayak\n#else\nother\n#endif\n#ifndef VTYPE\nnone\n#endif\n";
        assert_eq!(
            run(t, &[("VTYPE", "UUV"), ("X", "1")], &[]).unwrap().text,
            "uuv\nx\n"
        );
        assert_eq!(run(t, &[("VTYPE", "kayak")], &[]).unwrap().text, "kayak\n");
        assert_eq!(run(t, &[("VTYPE", "ship")], &[]).unwrap().text, "other\n");
        assert_eq!(run(t, &[], &[]).unwrap().text, "other\nnone\n");
        assert!(run("#ifdef A\n", &[], &[])
            .unwrap_err()
            .message
            .contains("never closed"));
        assert!(run("#endif\n", &[], &[]).is_err());
        assert!(run("#else\n", &[], &[]).is_err());
        assert!(run("#elseifdef A\n", &[], &[]).is_err());
        // || and &&
        let t = "#ifdef A 1 || B 2\nyes\n#endif\n";
        assert_eq!(run(t, &[("B", "2")], &[]).unwrap().text, "yes\n");
        let t = "#ifdef A 1 && B 2\nyes\n#endif\n";
        assert_eq!(run(t, &[("B", "2")], &[]).unwrap().text, "");
        assert_eq!(
            run(t, &[("A", "1"), ("B", "2")], &[]).unwrap().text,
            "yes\n"
        );
    }

    #[test]
    fn includes_with_tags_and_loops() {
        let plugs = "<tag><origin_warp>\nLatOrigin = $(LAT=43)\n<tag><other>\nx = 1\n";
        let e = run(
            "#include \"plugs.moos\" <origin_warp>\nend\n",
            &[],
            &[("plugs.moos", plugs)],
        )
        .unwrap();
        assert_eq!(e.text, "LatOrigin = 43\nend\n");
        assert_eq!(e.place(1), "plugs.moos:2");
        assert_eq!(e.place(2), "top.moos:2");
        let e = run(
            "#include plugs.moos <nope>\n",
            &[],
            &[("plugs.moos", plugs)],
        )
        .unwrap_err();
        assert!(e.message.contains("<tag><nope>"), "{e}");
        let e = run(
            "#include a\n",
            &[],
            &[("a", "#include b\n"), ("b", "#include a\n")],
        )
        .unwrap_err();
        assert!(e.message.contains("loop"), "{e}");
        let e = run("#include missing\n", &[], &[]).unwrap_err();
        assert_eq!((e.line, e.message.contains("missing")), (1, true));
    }

    #[test]
    fn bytes_read_across_includes_are_bounded() {
        // A 1 MiB file whose text is skipped adds two lines per include but
        // a MiB read each time: the 65th read is refused, with its place.
        let big = format!("#ifdef NEVER\n{}\n#endif\n", "x".repeat(1 << 20));
        let top = "#include big\n".repeat(200);
        let e = run(&top, &[], &[("big", &big)]).unwrap_err();
        assert_eq!(e.file, "top.moos");
        assert_eq!(e.line, 64, "{e}");
        assert!(e.message.contains("64 MiB"), "{e}");
        // 60 of them are fine.
        run(&"#include big\n".repeat(60), &[], &[("big", &big)]).unwrap();
    }

    #[test]
    fn self_reference_ends() {
        let e = run("#define A $(A)x\nv=$(A)\n", &[], &[]).unwrap_err();
        assert!(
            e.message.contains("does not end") || e.message.contains("longer"),
            "{e}"
        );
    }
}
