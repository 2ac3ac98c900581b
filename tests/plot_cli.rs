//! `usim plot`: every mission in missions/ replayed and plotted to SVG
//! (parsed by roxmltree, a real XML parser) and PNG (decoded by the `png`
//! crate), several runs at once, and bad input named by file, line, column.
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn usim(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn replay(mission: &Path, csv: &Path) {
    ok(
        &usim(&[
            "replay".as_ref(),
            mission.as_os_str(),
            "-q".as_ref(),
            "-o".as_ref(),
            csv.as_os_str(),
        ]),
        "replay",
    );
}

fn plot(inputs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["plot".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.push("-o".as_ref());
    args.push(out.as_os_str());
    args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
    usim(&args)
}

/// (width, height, distinct colours, has the early and late track colours)
fn decode_png(path: &Path) -> (u32, u32, usize, bool, bool) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let colours: HashSet<[u8; 3]> = px.iter().copied().collect();
    let near = |want: [u8; 3]| {
        px.iter().any(|p| {
            p.iter()
                .zip(want)
                .all(|(&a, b)| (a as i32 - b as i32).abs() <= 12)
        })
    };
    // The time colour map runs from purple (68,1,84) to yellow (253,231,37).
    (
        info.width,
        info.height,
        colours.len(),
        near([68, 1, 84]),
        near([220, 227, 25]) || near([253, 231, 37]) || near([160, 218, 57]),
    )
}

#[test]
fn every_mission_plots_to_valid_svg_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let mut missions: Vec<PathBuf> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/missions"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
    missions.sort();
    assert!(missions.len() >= 5);
    for mission in &missions {
        let stem = mission.file_stem().unwrap().to_string_lossy().to_string();
        let csv = dir.path().join(format!("{stem}.csv"));
        replay(mission, &csv);
        let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;

        let svg = dir.path().join(format!("{stem}.svg"));
        ok(
            &plot(&[&csv], &svg, &["--title", "run <&> \"quoted\""]),
            &stem,
        );
        let text = std::fs::read_to_string(&svg).unwrap();
        let doc = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{stem}: SVG is not XML: {e}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg", "{stem}");
        // Title 40 + track 700 + 4 series panels of 220; no depth panel
        // when the depth is 0 throughout (issue 24).
        let csv_text = std::fs::read_to_string(&csv).unwrap();
        let depth_col = csv_text
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "depth")
            .unwrap();
        let dives = csv_text.lines().skip(1).any(|l| {
            l.split(',')
                .nth(depth_col)
                .is_some_and(|d| d.parse::<f64>() != Ok(0.0))
        });
        let panels_h = if dives { 0 } else { 220 };
        assert_eq!(root.attribute("width"), Some("1000"), "{stem}");
        assert_eq!(
            root.attribute("height"),
            Some((1620 - panels_h).to_string().as_str()),
            "{stem}"
        );
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect();
        assert!(
            texts.iter().any(|t| t == "run <&> \"quoted\""),
            "{stem}: title"
        );
        for label in [
            "x (m)",
            "y (m)",
            "speed (m/s)",
            "heading (degrees, unwrapped)",
            "actuators (percent of full)",
        ] {
            assert!(texts.iter().any(|t| t == label), "{stem}: axis {label}");
        }
        assert_eq!(
            texts.iter().any(|t| t == "depth (m)"),
            dives,
            "{stem}: a depth panel only for a run that leaves the surface"
        );
        let lines = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
            .count();
        assert!(lines > 100, "{stem}: {lines} lines for {rows} rows");

        let png = dir.path().join(format!("{stem}.png"));
        ok(&plot(&[&csv], &png, &[]), &stem);
        let (w, h, colours, early, late) = decode_png(&png);
        assert_eq!((w, h), (1000, 1580 - panels_h), "{stem}: no title line");
        assert!(colours >= 16, "{stem}: only {colours} colours");
        assert!(
            early && late,
            "{stem}: time colours early {early} late {late}"
        );
    }
}

#[test]
fn several_runs_and_a_vehicle_column() {
    let dir = tempfile::tempdir().unwrap();
    let m = |s: &str| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/missions")).join(s);
    let a = dir.path().join("turns.csv");
    let b = dir.path().join("dive.csv");
    replay(&m("harbour_turns.toml"), &a);
    replay(&m("dive.toml"), &b);
    // One file with both, as `usim record` writes it: a vehicle column first.
    let fleet = dir.path().join("fleet.csv");
    let mut out = String::new();
    for (i, (path, name)) in [(&a, "alpha"), (&b, "bravo")].into_iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let head = lines.next().unwrap();
        if i == 0 {
            out.push_str(&format!("vehicle,{head}\n"));
        }
        for l in lines {
            out.push_str(&format!("{name},{l}\n"));
        }
    }
    std::fs::write(&fleet, out).unwrap();
    let svg = dir.path().join("fleet.svg");
    ok(
        &plot(&[&fleet, &a], &svg, &["--panels", "track,speed"]),
        "fleet",
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(doc.root_element().attribute("height"), Some("920"));
    let texts: HashSet<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for label in ["alpha", "bravo", "turns"] {
        assert!(texts.contains(label), "label {label} in {texts:?}");
    }
    assert!(!texts.contains("depth (m)"), "only the panels asked for");
}

#[test]
fn bad_input_names_file_line_and_column_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let head = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y";
    let row = "0,0,1,2,3,4,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2";
    let cases: [(&str, String, &[&str]); 4] = [
        (
            "empty.csv",
            String::new(),
            &["empty.csv", "line 1", "empty"],
        ),
        (
            "cols.csv",
            "time,east,north\n1,2,3\n".into(),
            &["cols.csv", "line 1", "missing columns k, t, x"],
        ),
        (
            "text.csv",
            format!(
                "{head}\n{row}\n{row}\n{}\n",
                row.replacen(",4,", ",north,", 1)
            ),
            &[
                "text.csv",
                "line 4",
                "column 6 (heading)",
                "\"north\" is not a number",
            ],
        ),
        (
            "short.csv",
            format!("{head}\n{row}\n0,1\n"),
            &["short.csv", "line 3", "2 fields"],
        ),
    ];
    let out = dir.path().join("out.svg");
    for (name, content, needles) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let o = plot(&[&p], &out, &[]);
        assert!(!o.status.success(), "{name} accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        for n in needles {
            assert!(err.contains(n), "{name}: {n:?} not in {err}");
        }
        assert!(!out.exists(), "{name}: output written");
    }
    // Unwritable output, unknown extension, unknown panel.
    let good = dir.path().join("good.csv");
    std::fs::write(&good, format!("{head}\n{row}\n")).unwrap();
    let o = plot(&[&good], &dir.path().join("missing/dir/x.png"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("cannot create") && err.contains("x.png"),
        "{err}"
    );
    let o = plot(&[&good], &dir.path().join("x.gif"), &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains(".svg or .png"));
    let o = plot(&[&good], &out, &["--panels", "track,sped"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown panel \"sped\""));
    // Nothing but the inputs in the directory (no temporary files left).
    let names: HashSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    // A one-row run still plots.
    ok(&plot(&[&good], &out, &[]), "one row");
    assert!(out.exists());
}
