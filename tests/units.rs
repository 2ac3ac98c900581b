//! One unit per quantity: the rudder's unit (and the unit of its rate
//! limit) is the same in the README, `usim example`, `usim interface` and
//! the docs. The model decides it: the rudder enters the turn as
//! `rudder/100` of full deflection and is clipped to ±100 (docs/model.md
//! §8), so it is a percentage.
use std::process::Command;

fn root_file(p: &str) -> String {
    let text = std::fs::read_to_string(format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    normalise(&text)
}

/// Whitespace runs to one space, Markdown emphasis and comment marks removed.
fn normalise(text: &str) -> String {
    let t = text.replace(['*', '#'], " ");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn usim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The word right after `before` in `text` (the unit a sentence gives).
fn word_after(text: &str, before: &str, what: &str) -> String {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("{what}: `{before}` not found"));
    text[at + before.len()..]
        .split(|c: char| c.is_whitespace() || c == ',' || c == ')' || c == '|' || c == '(')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_string()
}

#[test]
fn rudder_has_one_unit_everywhere() {
    let interface = normalise(&usim(&["interface"]));
    let example = normalise(&usim(&["example"]));
    // the README's configs, CSV and units sections moved to docs/guide.md
    let readme = root_file("docs/guide.md");
    let config_md = root_file("docs/config.md");
    let formats_md = root_file("docs/formats.md");
    let model_md = root_file("docs/model.md");
    let found = [
        (
            "usim interface, DESIRED_RUDDER",
            word_after(&interface, "DESIRED_RUDDER number rudder,", "interface"),
        ),
        (
            "usim example, units line",
            word_after(&example, "thrust, rudder and elevator in", "example"),
        ),
        (
            "docs/guide.md, CSV units",
            readme
                .split(" (rudder, thrust, elevator")
                .next()
                .and_then(|s| s.split_whitespace().last())
                .unwrap_or("")
                .to_string(),
        ),
        (
            "docs/config.md",
            word_after(
                &config_md,
                "thrust, rudder and elevator are",
                "docs/config.md",
            ),
        ),
        (
            "docs/formats.md, CSV column",
            word_after(&formats_md, "| `rudder` |", "docs/formats.md"),
        ),
        (
            "docs/model.md, notation",
            word_after(
                &model_md,
                "Thrust, rudder and elevator are",
                "docs/model.md",
            ),
        ),
    ];
    let readme_first = word_after(&readme, "deg/s, and", "README");
    let mut all: Vec<(&str, String)> = found.to_vec();
    all.push(("docs/guide.md, units sentence", readme_first));
    for (where_, unit) in &all {
        assert_eq!(unit, "percent", "{where_} gives the rudder in `{unit}`");
    }
    // The rate limit: percent per second wherever a unit is given.
    let rate_example = word_after(&example, "rudder slew limit,", "example");
    let rate_doc = word_after(
        &config_md,
        "| `max_rudder_degs_per_sec` | float |",
        "docs/config.md",
    );
    assert_eq!(rate_example, "percent/s");
    assert_eq!(rate_doc, "percent/s");
    // and nobody calls the rudder degrees any more
    for (name, text) in [
        ("interface", &interface),
        ("example", &example),
        ("docs/guide.md (the README's units)", &readme),
    ] {
        assert!(!text.contains("rudder, degrees"), "{name}");
        assert!(!text.contains("rudder in degrees"), "{name}");
    }
}
