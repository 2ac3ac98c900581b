//! pMarineViewer's action buttons, read from a mission file (sans IO):
//! `button_one = DEPLOY # DEPLOY=true # MOOS_MANUAL_OVERRIDE=false` in the
//! `ProcessConfig = pMarineViewer` block, as PMV_MOOSApp.cpp and
//! PMV_GUI.cpp's `addButton` read it: `button_one` … `button_twenty` (or
//! `button_1` … `button_20`); the value split at `#`; a part without `=` is
//! the label, `color=C` the colour, `VAR=VALUE` a posting; lines of one
//! button accumulate in file order. A click posts every posting of the
//! button, in that order, to the viewer's community.
//!
//! The file is outside input: at most [`MAX_BUTTONS`] buttons of
//! [`MAX_POSTS`] postings, names and values bounded in length.

use serde::Serialize;

/// Buttons pMarineViewer has.
pub const MAX_BUTTONS: usize = 20;
/// Postings kept per button.
pub const MAX_POSTS: usize = 16;
/// Longest label, variable or value kept, bytes (longer: the part is
/// refused with a warning).
pub const MAX_TEXT: usize = 256;

const NAMES: [&str; MAX_BUTTONS] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// One action button.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Button {
    /// Its label (default `Disabled`, as pMarineViewer's).
    pub label: String,
    /// The colour, as written (`color=`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// (variable, value) postings in order.
    pub posts: Vec<(String, String)>,
}

/// The index (0-based) a `button_*` key names.
fn index_of(key: &str) -> Option<usize> {
    let rest = key.strip_prefix("button_")?;
    NAMES.iter().position(|n| *n == rest).or_else(|| {
        rest.parse::<usize>()
            .ok()
            .filter(|i| (1..=20).contains(i))
            .map(|i| i - 1)
    })
}

/// Split at `#` outside double quotes (MBUtils' `parseStringQ`).
fn split_q(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The buttons of the mission's `ProcessConfig = pMarineViewer` block, in
/// button order (only those configured), and warnings naming the line.
pub fn from_mission(text: &str) -> (Vec<Button>, Vec<String>) {
    let lines = crate::moos_import::block_lines(text, "pMarineViewer");
    let mut slots: Vec<Option<Button>> = vec![None; MAX_BUTTONS];
    let mut warnings = Vec::new();
    for (key, value) in lines {
        let Some(i) = index_of(&key) else {
            continue;
        };
        let b = slots[i].get_or_insert_with(|| Button {
            label: "Disabled".into(),
            color: None,
            posts: Vec::new(),
        });
        for part in split_q(&value) {
            let (param, val) = part.split_once('=').unwrap_or((part, ""));
            let (param, val) = (param.trim(), val.trim());
            if param.is_empty() || param.len() > MAX_TEXT || val.len() > MAX_TEXT {
                warnings.push(format!(
                    "{key} = {value}: `{part}` is not a label or VAR=VALUE"
                ));
            } else if param == "color" {
                b.color = Some(val.to_string());
            } else if val.is_empty() {
                b.label = param.to_string();
            } else if let Err(e) = crate::mqtt::topics::check_var(param) {
                warnings.push(format!("{key}: `{part}` cannot be posted: {e}"));
            } else if b.posts.len() < MAX_POSTS {
                let val = val
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(val);
                b.posts.push((param.to_string(), val.to_string()));
            } else {
                warnings.push(format!(
                    "{key}: more than {MAX_POSTS} postings; `{part}` dropped"
                ));
            }
        }
    }
    (slots.into_iter().flatten().collect(), warnings)
}

/// The variables the buttons post (for a bridge's `--to-moos`), sorted,
/// each once.
pub fn variables(buttons: &[Button]) -> Vec<String> {
    let mut v: Vec<String> = buttons
        .iter()
        .flat_map(|b| b.posts.iter().map(|(k, _)| k.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ivp/missions/s1_alpha/alpha.moos's pMarineViewer buttons.
    const S1_ALPHA: &str = "ProcessConfig = pMarineViewer\n{\n  AppTick = 4\n\
        button_one = DEPLOY # DEPLOY=true\n\
        button_one = MOOS_MANUAL_OVERRIDE=false # RETURN=false\n\
        button_two = RETURN # RETURN=true\n\
        button_three = SLOWER # WPT_UPDATE=speed=1.5\n\
        button_four = FASTER # WPT_UPDATE=speed=3.5\n\
        action  = MENU_KEY=deploy # DEPLOY = true # RETURN = false\n}\n\
        ProcessConfig = other\n{\n  button_five = X # Y=1\n}\n";

    #[test]
    fn s1_alphas_buttons() {
        let (b, w) = from_mission(S1_ALPHA);
        assert!(w.is_empty(), "{w:?}");
        let p = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(b.len(), 4);
        assert_eq!(b[0].label, "DEPLOY");
        assert_eq!(
            b[0].posts,
            p(&[
                ("DEPLOY", "true"),
                ("MOOS_MANUAL_OVERRIDE", "false"),
                ("RETURN", "false")
            ])
        );
        assert_eq!(b[1].label, "RETURN");
        assert_eq!(b[2].posts, p(&[("WPT_UPDATE", "speed=1.5")]));
        assert_eq!(b[3].label, "FASTER");
        assert_eq!(
            variables(&b),
            ["DEPLOY", "MOOS_MANUAL_OVERRIDE", "RETURN", "WPT_UPDATE"]
        );
    }

    #[test]
    fn numbered_keys_colours_quotes_and_bad_parts() {
        let (b, w) = from_mission(
            "ProcessConfig = pMarineViewer\n{\n button_2 = GO # color=green # MSG=\"a#b\"\n \
             button_twenty = =x # Z=1 # A/B=2\n button_99 = no # A=1\n}\n",
        );
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].label, "GO");
        assert_eq!(b[0].color.as_deref(), Some("green"));
        assert_eq!(b[0].posts, [("MSG".to_string(), "a#b".to_string())]);
        assert_eq!(b[1].label, "Disabled");
        assert_eq!(b[1].posts, [("Z".to_string(), "1".to_string())]);
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn hostile_text_is_bounded() {
        let mut t = String::from("ProcessConfig = pMarineViewer\n{\n");
        for _ in 0..100 {
            t.push_str(&format!("button_one = L # {}=1 # A=2\n", "V".repeat(300)));
        }
        t.push_str("}\n");
        let (b, w) = from_mission(&t);
        assert_eq!(b[0].posts.len(), MAX_POSTS);
        assert!(!w.is_empty());
        let _ = from_mission("ProcessConfig = pMarineViewer\n{\nbutton_one=#####\n");
    }
}
