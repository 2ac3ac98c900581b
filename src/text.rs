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
///
/// A candidate whose length in characters differs from the word's by more
/// than its threshold is skipped without computing the distance (the
/// distance is at least that difference): a long word (a junk key of a few
/// KB) costs one pass over it, not its length times each candidate's.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w: Vec<char> = word.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut row = Vec::new();
    candidates
        .into_iter()
        .filter_map(|c| {
            let limit = 3.max(c.len() / 4);
            let cc: Vec<char> = c.chars().map(|c| c.to_ascii_lowercase()).collect();
            if cc.len().abs_diff(w.len()) > limit || c == word {
                return None;
            }
            let d = levenshtein(&w, &cc, &mut row);
            (d <= limit).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance of `a` and `b` (insertions, deletions, substitutions),
/// with `row` as the one row of the table it keeps.
fn levenshtein(a: &[char], b: &[char], row: &mut Vec<usize>) -> usize {
    row.clear();
    row.extend(0..=b.len());
    for (i, ca) in a.iter().enumerate() {
        // row[j] is the previous row's until overwritten; `diag` the
        // previous row's row[j - 1]
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j + 1] + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook table, kept whole: the reference for the one-row form.
    fn distance_by_table(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut t = vec![vec![0; b.len() + 1]; a.len() + 1];
        for (i, r) in t.iter_mut().enumerate() {
            r[0] = i;
        }
        for (j, c) in t[0].iter_mut().enumerate() {
            *c = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let sub = t[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
                t[i][j] = sub.min(t[i - 1][j] + 1).min(t[i][j - 1] + 1);
            }
        }
        t[a.len()][b.len()]
    }

    #[test]
    fn edit_distance_matches_the_whole_table() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "kitten",
            "sitting",
            "thrust",
            "thurst",
            "DESIRED_RUDDER",
            "desired_ruder",
            "é",
            "eé",
            "max_acceleration",
            "max_deceleration",
            "ü_x",
        ];
        let mut row = Vec::new();
        for a in words {
            for b in words {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                assert_eq!(
                    levenshtein(&ca, &cb, &mut row),
                    distance_by_table(a, b),
                    "{a} {b}"
                );
            }
        }
        assert_eq!(distance_by_table("kitten", "sitting"), 3);
    }

    #[test]
    fn nearest_suggests_typos_only() {
        let names = [
            "max_acceleration",
            "max_deceleration",
            "turn_rate",
            "thrust_map",
        ];
        assert_eq!(nearest("max_accelration", names), Some("max_acceleration"));
        assert_eq!(nearest("TURN_RATE", names), Some("turn_rate"));
        assert_eq!(nearest("thrust_mop", names), Some("thrust_map"));
        assert_eq!(
            nearest("turn_rate", names),
            None,
            "the word itself is no suggestion"
        );
        assert_eq!(nearest("rudder", names), None);
        // A junk key of 100,000 characters: no suggestion (and no
        // distance computed: the lengths differ by more than any limit).
        let junk = "x".repeat(100_000);
        assert_eq!(nearest(&junk, names), None);
    }
}
