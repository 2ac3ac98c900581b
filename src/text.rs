//! Text helpers shared by every layer that echoes outside text or suggests
//! a name: clipping long values in messages, and the nearest known word to
//! a typo. A leaf: it imports nothing of the crate.

/// Longest error message shown, characters: values echoed in errors (a
/// 100 KB line, a huge payload) are clipped with `…`.
pub const MAX_ECHO_CHARS: usize = 1000;

/// `text` clipped to `max` characters (with `…` and the number of
/// characters left out).
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => {
            let left = text[cut..].chars().count();
            std::borrow::Cow::Owned(format!("{}… ({left} more characters)", &text[..cut]))
        }
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 4) && *c != word)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `text` with every control character (C0, DEL, C1 — so ESC of ANSI and
/// OSC sequences, BEL, CR, LF) and every bidirectional-override character
/// written as a Rust escape (`\u{1b}`, `\n`), so that text from the
/// network printed on a terminal cannot move the cursor, recolour, retitle
/// or reorder it. Other text is returned as is.
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    fn risky(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(risky) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if risky(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
