//! NMEA 0183 and AIS output (issue 23, docs/nmea.md) checked by parsers no
//! one here wrote: pynmea2 and pyais (`USIM_REQUIRE_PYNMEA`), and gpsd from
//! Debian (`USIM_REQUIRE_GPSD`). Expected values are the vehicles' own
//! states: the replay's CSV, or the NODE_REPORTs seen on the broker.
mod mqtt_util;

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mqtt_util::{free_port, node_report, topic, usim, Broker, BrokerKind, Proc, Watcher, ROOT};

fn python() -> String {
    std::env::var("USIM_PYTHON").unwrap_or("python3".into())
}

/// pynmea2 and pyais importable, or SKIPPED (a failure with USIM_REQUIRE_PYNMEA=1).
fn have_pynmea() -> bool {
    let ok = Command::new(python())
        .args(["-c", "import pynmea2, pyais"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("USIM_REQUIRE_PYNMEA").is_none_or(|v| v != "1"),
            "USIM_REQUIRE_PYNMEA=1 but {} cannot import pynmea2 and pyais (scripts/py_env.sh)",
            python()
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: pynmea2/pyais missing (pip install pynmea2 pyais); this test passes without running"
        );
    }
    ok
}

/// gpsd and gpspipe on PATH (or /usr/sbin), or SKIPPED (USIM_REQUIRE_GPSD=1: fail).
fn gpsd_paths() -> Option<(PathBuf, PathBuf)> {
    let find = |name: &str| {
        ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.exists())
    };
    match (find("gpsd"), find("gpspipe")) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            assert!(
                std::env::var_os("USIM_REQUIRE_GPSD").is_none_or(|v| v != "1"),
                "USIM_REQUIRE_GPSD=1 but gpsd/gpspipe are not installed (apt-get install gpsd gpsd-clients)"
            );
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: gpsd or gpspipe missing (apt-get install gpsd gpsd-clients); this test passes without running"
            );
            None
        }
    }
}

fn mission_copy(dir: &Path) -> PathBuf {
    // Every step in the CSV, so every AIS report has its row.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/missions/nmea_harbour.toml"
    ))
    .unwrap();
    let p = dir.join("nmea_harbour.toml");
    std::fs::write(&p, text.replace("output_every = 10", "output_every = 1")).unwrap();
    p
}

#[test]
fn replay_nmea_parses_in_pynmea2_and_pyais_with_the_vehicles_state() {
    if !have_pynmea() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mission = mission_copy(dir.path());
    let ids = r#"{"alpha":{"mmsi":200000101,"length":4.5,"beam":1.2,"ship_type":37},"bravo":{"mmsi":null,"length":12,"beam":3.5,"ship_type":52},"sub":{"mmsi":null,"length":3,"beam":0.5,"ship_type":0}}"#;
    for own in ["alpha", "sub"] {
        let nmea = dir.path().join(format!("{own}.nmea"));
        let csv_dir = dir.path().join("csv/");
        let o = Command::new(usim())
            .arg("replay")
            .arg(&mission)
            .arg("-o")
            .arg(&csv_dir)
            .arg("--nmea")
            .arg(&nmea)
            .args(["--nmea-own", own, "-q"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(python())
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/py/check_nmea.py"
            ))
            .arg(&nmea)
            .arg(&csv_dir)
            .args(["1768478400.0", own, ids])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && out.starts_with("OK"),
            "{own}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Every sentence kind was there to be checked.
        for kind in ["GGA", "RMC", "VTG", "HDT", "ZDA", "type1", "type5"] {
            assert!(
                out.contains(&format!("\"{kind}\"")),
                "{own}: no {kind}: {out}"
            );
        }
        if own == "sub" {
            assert!(out.contains("\"DPT\""), "{out}");
        }
        // Deterministic: the same mission gives the same bytes.
        let again = dir.path().join("again.nmea");
        let o = Command::new(usim())
            .arg("replay")
            .arg(&mission)
            .arg("-o")
            .arg(dir.path().join("x.csv"))
            .arg("--nmea")
            .arg(&again)
            .args(["--nmea-own", own, "-q"])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(
            std::fs::read(&nmea).unwrap(),
            std::fs::read(&again).unwrap()
        );
    }
}

/// `[sensors]` of the own ship in the test below: σ = 4 m white noise, a
/// Gauss–Markov bias σ_b = 3 m with τ = 30 s, heading σ 2°, speed σ
/// 0.1 m/s, a GPS dropout from t = 40 s for 20 s.
const SENSED_ALPHA: &str = "\n[vehicle.sensors]\nseed = 7\ngps_sigma = 4\ngps_bias_sigma = 3\n\
    gps_bias_tau = 30\nheading_sigma = 2\nspeed_sigma = 0.1\nfaults = [\"gps=off,at=40,for=20\"]\n";

/// Sample standard deviation.
fn std_dev(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Issue 40 item 4: with `[sensors]` the replay's NMEA is the sensed fix.
/// pynmea2 and pyais (tests/py/read_nmea_sensed.py) read it next to the
/// true CSV: GGA quality 0 with empty position and HDOP, RMC `V`/`N` and
/// AIS lat 91/lon 181 exactly in the dropout; quality 8 and HDOP
/// √(2(σ²+σ_b²))/5 = √50/5 → "1.4" (docs/nmea.md) outside it; the error
/// from the truth has the configured noise (1 s differences of the error:
/// σ_d² = σ² + σ_b²(1 − e^(−1/τ)) per axis, docs/model.md "Sensors"); HDT
/// and SOG carry the heading and speed noise. The true columns of the CSV
/// are the same bytes as without sensors.
#[test]
fn replay_nmea_with_sensors_is_the_noisy_fix_and_none_in_a_dropout() {
    if !have_pynmea() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plain = mission_copy(dir.path());
    let text = std::fs::read_to_string(&plain).unwrap();
    let sensed = dir.path().join("sensed.toml");
    std::fs::write(
        &sensed,
        text.replacen(
            "mmsi = 200000101\n",
            &format!("mmsi = 200000101\n{SENSED_ALPHA}"),
            1,
        ),
    )
    .unwrap();
    let run = |m: &Path, tag: &str| {
        let nmea = dir.path().join(format!("{tag}.nmea"));
        let csv = dir.path().join(format!("{tag}/"));
        let o = Command::new(usim())
            .arg("replay")
            .arg(m)
            .arg("-o")
            .arg(&csv)
            .arg("--nmea")
            .arg(&nmea)
            .args(["--nmea-own", "alpha", "-q"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (nmea, csv.join("alpha.csv"))
    };
    let (nmea, csv) = run(&sensed, "sensed");
    let (_, plain_csv) = run(&plain, "plain");
    // The true track does not move: same x, y, lat, lon, gt_*, ... bytes.
    let cols = |p: &Path, names: &[&str]| -> Vec<Vec<String>> {
        let mut r = csv::Reader::from_path(p).unwrap();
        let h = r.headers().unwrap().clone();
        let idx: Vec<usize> = names
            .iter()
            .map(|n| h.iter().position(|c| c == *n).unwrap())
            .collect();
        r.records()
            .map(|rec| {
                let rec = rec.unwrap();
                idx.iter().map(|&i| rec[i].to_string()).collect()
            })
            .collect()
    };
    let truth = [
        "t", "x", "y", "speed", "heading", "depth", "sog", "hog", "lat", "lon", "gt_x", "gt_y",
    ];
    let a = cols(&csv, &truth);
    assert_eq!(a.len(), 1201);
    assert_eq!(a, cols(&plain_csv, &truth));
    assert_ne!(
        cols(&csv, &["nav_heading"]),
        cols(&plain_csv, &["nav_heading"])
    );
    let o = Command::new(python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/read_nmea_sensed.py"
        ))
        .arg(&nmea)
        .arg(&csv)
        .arg("1768478400.0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(reports.len() >= 119, "{} reports", reports.len());
    let hdop = format!("{:.1}", (2.0f64 * (16.0 + 9.0)).sqrt() / 5.0);
    let (mut de, mut dn, mut hdg, mut sog) = (vec![], vec![], vec![], vec![]);
    let mut prev: Option<(f64, f64, f64)> = None;
    let mut dropped = 0;
    for r in &reports {
        let t = r["t"].as_f64().unwrap();
        if (40.0..60.0).contains(&t) {
            dropped += 1;
            assert_eq!(r["qual"], 0, "{r}");
            assert_eq!(
                (r["sats"].as_str(), r["hdop"].as_str()),
                (Some("00"), Some(""))
            );
            assert_eq!(r["lat_field"], "", "{r}");
            assert_eq!(
                (r["rmc_status"].as_str(), r["rmc_mode"].as_str()),
                (Some("V"), Some("N"))
            );
            assert_eq!(r["rmc_lat_field"], "", "{r}");
            assert_eq!(
                (r["ais_lat"].as_f64(), r["ais_lon"].as_f64()),
                (Some(91.0), Some(181.0))
            );
            prev = None;
            continue;
        }
        assert_eq!(r["qual"], 8, "{r}");
        assert_eq!(
            (r["sats"].as_str(), r["hdop"].as_str()),
            (Some("12"), Some(hdop.as_str()))
        );
        assert_eq!(
            (r["rmc_status"].as_str(), r["rmc_mode"].as_str()),
            (Some("A"), Some("S"))
        );
        let (e, n) = (r["err_e"].as_f64().unwrap(), r["err_n"].as_f64().unwrap());
        assert!(e.hypot(n) < 60.0, "an error of {e}, {n} m: {r}");
        if let Some((t0, e0, n0)) = prev {
            if (t - t0 - 1.0).abs() < 1e-6 {
                de.push(e - e0);
                dn.push(n - n0);
            }
        }
        prev = Some((t, e, n));
        hdg.push(r["hdg_err"].as_f64().unwrap());
        sog.push(r["sog_err_kn"].as_f64().unwrap() / (3600.0 / 1852.0));
    }
    assert_eq!(dropped, 20);
    // 1 s differences of the error: 2σ_d² per axis.
    let want = (16.0 + 9.0 * (1.0 - (-1.0f64 / 30.0).exp())).sqrt();
    let all: Vec<f64> = de.iter().chain(&dn).copied().collect();
    let got = std_dev(&all) / 2f64.sqrt();
    assert!(all.len() >= 190, "{}", all.len());
    assert!((got / want - 1.0).abs() < 0.15, "σ_d {got} m, want {want}");
    let h = std_dev(&hdg);
    assert!((h / 2.0 - 1.0).abs() < 0.2, "heading σ {h}°, want 2");
    let v = std_dev(&sog);
    assert!((v / 0.1 - 1.0).abs() < 0.2, "SOG σ {v} m/s, want 0.1");
}

#[test]
fn replay_nmea_refuses_a_vehicle_without_origin_and_an_unknown_own_ship() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.nmea");
    let o = Command::new(usim())
        .arg("replay")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/missions/two_boats_crossing.toml"
        ))
        .arg("-o")
        .arg(dir.path().join("x.csv"))
        .arg("--nmea")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("west has no lat/lon origin"), "{err}");
    assert!(!out.exists(), "no half-written file");
    let o = Command::new(usim())
        .arg("replay")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/missions/nmea_harbour.toml"
        ))
        .arg("-o")
        .arg(dir.path().join("x.csv"))
        .arg("--nmea")
        .arg(&out)
        .args(["--nmea-own", "nobody"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no such vehicle"),
        "{err}"
    );
}

fn config(dir: &Path, name: &str, url: &str, extra: &str) -> PathBuf {
    mqtt_util::write_config(dir, name, url, extra)
}

const ORIGIN: &str = "lat_origin = 42.358456\nlon_origin = -71.087589\nthrust_map = \"20:0.5, 50:1.2, 80:1.8, 100:2.0\"";

fn spawn_nmea(dir: &Path, port: u16, args: &[&str]) -> Proc {
    let mut cmd = Command::new(usim());
    cmd.args([
        "nmea",
        "--broker",
        &format!("mqtt://127.0.0.1:{port}"),
        "--topic-root",
        ROOT,
    ])
    .args(args);
    Proc::spawn("usim nmea", cmd, dir.join("nmea.log"))
}

/// Lines from a UDP socket until `until` (each datagram one line).
fn udp_lines(sock: &UdpSocket, for_: Duration) -> Vec<String> {
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let mut lines = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < for_ {
        if let Ok(n) = sock.recv(&mut buf) {
            lines.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    lines
}

fn decode(dir: &Path, lines: &[String]) -> Vec<serde_json::Value> {
    let f = dir.join("lines.txt");
    std::fs::write(&f, lines.concat()).unwrap();
    let o = Command::new(python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/decode_nmea.py"
        ))
        .arg(&f)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn live_bridge_sentences_decode_to_the_published_states() {
    if !have_pynmea() {
        return;
    }
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/+/NODE_REPORT")]);
    let _own = mqtt_util::spawn_vehicle(&config(dir.path(), "kayak", &url, ORIGIN), &[]);
    let _tgt = mqtt_util::spawn_vehicle(&config(dir.path(), "tgt", &url, ORIGIN), &[]);
    let _no = mqtt_util::spawn_vehicle(&config(dir.path(), "noorg", &url, ""), &[]);
    let good = UdpSocket::bind("127.0.0.1:0").unwrap();
    let good_addr = good.local_addr().unwrap().to_string();
    // A UDP port nobody reads: held by a socket connected elsewhere (so no
    // other test can bind it meanwhile); datagrams from the bridge match no
    // socket and come back as ICMP port unreachable, i.e. refused.
    let hold = UdpSocket::bind("127.0.0.1:0").unwrap();
    hold.connect(good.local_addr().unwrap()).unwrap();
    let refusing = hold.local_addr().unwrap().to_string();
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &[
            "--all",
            "--own",
            "kayak",
            "--udp",
            &good_addr,
            "--udp",
            &refusing,
            "--tcp",
            "127.0.0.1:0",
            "--ais-interval",
            "1",
            "--own-rate",
            "2",
        ],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of every vehicle", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let log = nmea.log();
    let tcp_addr = log
        .split("tcp://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    let mut tcp = TcpStream::connect(&tcp_addr).unwrap();
    watch.post("kayak", "DESIRED_THRUST", "80");
    watch.post("tgt", "DESIRED_THRUST", "50");
    watch.post("tgt", "DESIRED_RUDDER", "10");
    // Until enough of everything arrived (vehicles start slowly on a loaded machine).
    let mut lines = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(120) {
        lines.extend(udp_lines(&good, Duration::from_secs(2)));
        let n = |p: &str| lines.iter().filter(|l| l.starts_with(p)).count();
        if t0.elapsed() > Duration::from_secs(6) && n("$GPGGA") >= 5 && n("!AIVDM,1,1") >= 3 {
            break;
        }
    }
    tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut tcp_text = vec![0u8; 65536];
    let n = tcp.read(&mut tcp_text).unwrap_or(0);
    assert!(n > 0, "the TCP client got nothing");
    let decoded = decode(dir.path(), &lines);
    let tcp_lines: Vec<String> = String::from_utf8_lossy(&tcp_text[..n])
        .split_inclusive('\n')
        .filter(|l| l.ends_with("\r\n"))
        .map(String::from)
        .collect();
    decode(dir.path(), &tcp_lines);

    let reports = |name: &str| -> Vec<serde_json::Value> {
        watch
            .since(0, &topic(name, "NODE_REPORT"))
            .iter()
            .map(|m| node_report(&m.payload))
            .collect()
    };
    let (own_r, tgt_r) = (reports("kayak"), reports("tgt"));
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let mut gga = 0;
    let mut rmc = 0;
    let mut ais = 0;
    let mut static_seen = false;
    let tgt_mmsi = u64::from(usim::nmea::default_mmsi("tgt"));
    let own_mmsi = u64::from(usim::nmea::default_mmsi("kayak"));
    for d in &decoded {
        match d["s"].as_str().unwrap() {
            "GGA" => {
                gga += 1;
                assert_eq!(d["gps_qual"], 8);
                let (lat, lon) = (f(d, "latitude"), f(d, "longitude"));
                assert!(
                    own_r
                        .iter()
                        .any(|r| (f(r, "lat") - lat).abs() < 1e-7
                            && (f(r, "lon") - lon).abs() < 1e-7),
                    "GGA {d} is no state of kayak"
                );
            }
            "RMC" => {
                rmc += 1;
                let (lat, lon, kn, cog) = (
                    f(d, "latitude"),
                    f(d, "longitude"),
                    f(d, "spd_over_grnd"),
                    f(d, "true_course"),
                );
                assert!(
                    own_r.iter().any(|r| (f(r, "lat") - lat).abs() < 1e-7
                        && (f(r, "lon") - lon).abs() < 1e-7
                        && (f(r, "sog") * 3600.0 / 1852.0 - kn).abs() < 0.0051
                        && ((f(r, "hog") - cog + 540.0).rem_euclid(360.0) - 180.0).abs() < 0.051),
                    "RMC {d} is no state of kayak"
                );
                assert_eq!(d["mode_indicator"], "S");
            }
            "VDO" => assert_eq!(d["mmsi"].as_u64(), Some(own_mmsi), "{d}"),
            "VDM" => {
                assert_eq!(
                    d["mmsi"].as_u64(),
                    Some(tgt_mmsi),
                    "only tgt is an AIS target: {d}"
                );
                if d["msg_type"] == 5 {
                    static_seen = true;
                    assert_eq!(d["shipname"], "TGT");
                    continue;
                }
                ais += 1;
                let (lat, lon, kn, cog, hdg) = (
                    f(d, "lat"),
                    f(d, "lon"),
                    f(d, "speed"),
                    f(d, "course"),
                    f(d, "heading"),
                );
                assert!(
                    tgt_r.iter().any(|r| (f(r, "lat") - lat).abs() < 1.4e-6
                        && (f(r, "lon") - lon).abs() < 1.4e-6
                        && (f(r, "sog") * 3600.0 / 1852.0 - kn).abs() < 0.051
                        && ((f(r, "hog") - cog + 540.0).rem_euclid(360.0) - 180.0).abs() < 0.051
                        && ((f(r, "heading") - hdg + 540.0).rem_euclid(360.0) - 180.0).abs()
                            < 0.51),
                    "AIS {d} is no state of tgt"
                );
            }
            _ => {}
        }
    }
    assert!(
        gga >= 5 && rmc >= 5 && ais >= 3 && static_seen,
        "GGA {gga} RMC {rmc} AIS {ais} static {static_seen}: {lines:?}"
    );
    let log = nmea.log();
    assert_eq!(
        log.matches("noorg: no NMEA/AIS: no latitude/longitude")
            .count(),
        1,
        "{log}"
    );
    assert_eq!(
        log.matches(&format!("UDP {refusing}:")).count(),
        1,
        "refusal logged once: {log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

/// RSS of a process, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_tcp_client_that_never_reads_is_dropped_and_memory_stays_bounded() {
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &[
            "--vehicles",
            "flood",
            "--own",
            "flood",
            "--own-rate",
            "1000",
            "--max-rate",
            "1e9",
            "--tcp",
            "127.0.0.1:0",
        ],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of flood", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let log = nmea.log();
    let tcp_addr = log
        .split("tcp://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    let _stuck = TcpStream::connect(&tcp_addr).unwrap();
    assert!(nmea.wait_log("connected", mqtt_util::START));
    let pub_ = Watcher::new(broker.port, &[format!("{ROOT}/nothing")]);
    // ~6 lines (~400 bytes) per report: 40,000 reports are ~16 MB, more
    // than any loopback socket buffer holds.
    let t0 = Instant::now();
    let mut dropped = false;
    for i in 0..40_000u32 {
        let json = format!(
            r#"{{"k":{i},"t":{i},"lat":42.3,"lon":-71.1,"sog":1.5,"hog":80,"heading":81,"depth":0,"altitude":null}}"#
        );
        pub_.publish(&topic("flood", "NODE_REPORT"), json);
        if i % 2000 == 0 {
            let log = nmea.log();
            if log.contains("reports behind: dropped") || log.contains("not reading; closed") {
                dropped = true;
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(240), "flood too slow");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dropped && Instant::now() < deadline {
        let log = nmea.log();
        dropped = log.contains("reports behind: dropped") || log.contains("not reading; closed");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(dropped, "the stuck client was not dropped: {}", nmea.log());
    let rss = rss_kib(nmea.pid());
    assert!(rss > 0 && rss < 200 * 1024, "RSS {rss} KiB");
}

#[test]
fn gpsd_reads_the_stream_and_its_fix_is_the_vehicles() {
    let Some((gpsd, gpspipe)) = gpsd_paths() else {
        return;
    };
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(
        broker.port,
        &[
            format!("{ROOT}/kayak/NODE_REPORT"),
            format!("{ROOT}/kayak/USM_TIME"),
        ],
    );
    let _own = mqtt_util::spawn_vehicle(&config(dir.path(), "kayak", &url, ORIGIN), &[]);
    // gpsd must be told both its ports: fresh ones again if another test
    // took one first (it exits when its UDP port is taken, and runs on
    // without listening when its TCP port is: hence the check that gpsd
    // itself holds both).
    let (_gpsd, udp_port, gpsd_port) = mqtt_util::on_fresh_port("gpsd", |gpsd_port| {
        let udp_port = free_port();
        let mut g = Command::new(&gpsd);
        g.args([
            "-N",
            "-n",
            "-S",
            &gpsd_port.to_string(),
            &format!("udp://127.0.0.1:{udp_port}"),
        ]);
        let mut p = Proc::spawn("gpsd", g, dir.path().join(format!("gpsd-{gpsd_port}.log")));
        p.wait_listening(gpsd_port, mqtt_util::START)?;
        p.wait_holding(mqtt_util::Proto::Udp, udp_port, mqtt_util::START)?;
        Ok((p, udp_port, gpsd_port))
    });
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &[
            "--vehicles",
            "kayak",
            "--own",
            "kayak",
            "--udp",
            &format!("127.0.0.1:{udp_port}"),
        ],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of kayak", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    watch.post("kayak", "DESIRED_THRUST", "80");
    watch.post("kayak", "DESIRED_RUDDER", "10");
    let o = Command::new("timeout")
        .arg("40")
        .arg(&gpspipe)
        .args(["-w", "-n", "25", &format!("127.0.0.1:{gpsd_port}")])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    // Each NODE_REPORT's vehicle clock: the USM_TIME that follows it.
    let all: Vec<mqtt_util::Msg> = {
        let mut v = watch.since(0, &topic("kayak", "NODE_REPORT"));
        v.extend(watch.since(0, &topic("kayak", "USM_TIME")));
        v.sort_by_key(|m| m.at);
        v
    };
    let mut states: Vec<(f64, serde_json::Value)> = Vec::new();
    let mut pending: Option<serde_json::Value> = None;
    for m in &all {
        if m.topic.ends_with("NODE_REPORT") {
            pending = Some(node_report(&m.payload));
        } else if let (Some(r), Ok(clock)) = (pending.take(), m.payload.trim().parse::<f64>()) {
            states.push((clock, r));
        }
    }
    let mut tpvs = 0;
    for line in out.lines().filter(|l| l.contains("\"class\":\"TPV\"")) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(lat) = v["lat"].as_f64() else {
            continue;
        };
        // gpsd's first fix may come before it knows the date (no time).
        let Some(time) = v["time"].as_str() else {
            continue;
        };
        // "YYYY-MM-DDTHH:MM:SS.sssZ" → seconds of the day.
        let hms = &time[11..time.len() - 1];
        let mut it = hms.split(':').map(|x| x.parse::<f64>().unwrap());
        let sod = it.next().unwrap() * 3600.0 + it.next().unwrap() * 60.0 + it.next().unwrap();
        let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        let st = states
            .iter()
            .find(|(c, _)| {
                ((c.rem_euclid(86_400.0) - sod + 43_200.0).rem_euclid(86_400.0) - 43_200.0).abs()
                    < 0.006
            })
            .unwrap_or_else(|| panic!("no state at {time}: {line}"));
        let r = &st.1;
        assert!((f(r, "lat") - lat).abs() < 1e-7, "lat {line} vs {r}");
        assert!(
            (f(r, "lon") - v["lon"].as_f64().unwrap()).abs() < 1e-7,
            "lon {line} vs {r}"
        );
        // gpsd's speed (m/s) from RMC's knots to 0.01 kn; track to 0.1°.
        if let Some(speed) = v["speed"].as_f64() {
            assert!((f(r, "sog") - speed).abs() < 0.006, "speed {line} vs {r}");
        }
        if let Some(track) = v["track"].as_f64() {
            assert!(
                ((f(r, "hog") - track + 540.0).rem_euclid(360.0) - 180.0).abs() < 0.051,
                "track {line} vs {r}"
            );
        }
        tpvs += 1;
    }
    assert!(tpvs >= 3, "gpsd gave {tpvs} fixes: {out}\n{}", nmea.log());
}

/// gpsd's TPV reports (mode, lat, eph) in a `gpspipe -w` log so far.
fn tpvs(log: &str) -> Vec<(u64, Option<f64>, Option<f64>)> {
    log.lines()
        .filter(|l| l.contains("\"class\":\"TPV\""))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (
                v["mode"].as_u64().unwrap_or(0),
                v["lat"].as_f64(),
                v["eph"].as_f64(),
            )
        })
        .collect()
}

/// Wait until gpsd's TPVs after the first `from` satisfy `ok` `n` times;
/// returns the count of TPVs then.
fn wait_tpvs(
    pipe: &Proc,
    from: usize,
    n: usize,
    ok: impl Fn(&(u64, Option<f64>, Option<f64>)) -> bool,
    what: &str,
) -> usize {
    let t0 = Instant::now();
    loop {
        let all = tpvs(&pipe.log());
        if all.iter().skip(from).filter(|t| ok(t)).count() >= n {
            return all.len();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "gpsd never showed {what}: {:?}",
            &all[from.min(all.len())..]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 40 item 4, live: a vehicle with `[sensors]` served by `usim nmea`
/// to a real gpsd. gpsd has a 2D+ fix (mode ≥ 2) and `eph` = HDOP ×
/// 19 m (gpsd's `P_UERE_NO_DGPS`, libgpsd_core.c `gpsd_error_model`), with
/// HDOP √(2(4² + 3²))/5 = 1.4 from the noise (docs/nmea.md); after
/// `USM_SENSOR gps=off` gpsd reports mode 1 (no fix) and no position,
/// while the vehicle's true position (`x`/`y`, `gt_x`) keeps moving; after
/// `gps=on` the fix is back.
#[test]
fn gpsd_loses_the_fix_in_a_live_gps_dropout_and_gets_it_back() {
    let Some((gpsd, gpspipe)) = mqtt_util::gpsd_paths() else {
        return;
    };
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(
        broker.port,
        &[
            format!("{ROOT}/kayak/NODE_REPORT"),
            format!("{ROOT}/kayak/NAV_Y"),
            format!("{ROOT}/kayak/TRUE_Y"),
        ],
    );
    let sensors = "\n[sensors]\nseed = 3\ngps_sigma = 4\ngps_bias_sigma = 3\ngps_bias_tau = 30\n";
    let _own = mqtt_util::spawn_vehicle(
        &config(dir.path(), "kayak", &url, &format!("{ORIGIN}{sensors}")),
        &[],
    );
    let (_gpsd, udp_port, gpsd_port) = mqtt_util::start_gpsd(&gpsd, dir.path());
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &[
            "--vehicles",
            "kayak",
            "--own",
            "kayak",
            "--udp",
            &format!("127.0.0.1:{udp_port}"),
        ],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of kayak", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    // Under way first (a post before the vehicle subscribed is lost).
    let t0 = Instant::now();
    while watch
        .latest(&topic("kayak", "NODE_REPORT"))
        .is_none_or(|r| node_report(&r)["speed"].as_f64().unwrap_or(0.0) < 0.5)
    {
        assert!(t0.elapsed() < mqtt_util::START, "kayak never got under way");
        watch.post("kayak", "DESIRED_THRUST", "80");
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut pc = Command::new(&gpspipe);
    pc.args(["-w", &format!("127.0.0.1:{gpsd_port}")]);
    let pipe = Proc::spawn("gpspipe", pc, dir.path().join("gpspipe.log"));
    let hdop = (2.0f64 * (16.0 + 9.0)).sqrt() / 5.0;
    let hdop = (hdop * 10.0).round() / 10.0;
    let fixed = |t: &(u64, Option<f64>, Option<f64>)| t.0 >= 2 && t.1.is_some();
    let n = wait_tpvs(&pipe, 0, 3, fixed, "a fix");
    let ephs: Vec<f64> = tpvs(&pipe.log())
        .iter()
        .filter(|t| fixed(t))
        .filter_map(|t| t.2)
        .collect();
    assert!(!ephs.is_empty(), "no eph: {}", pipe.log());
    for e in &ephs {
        assert!(
            (e - hdop * 19.0).abs() < 0.05,
            "eph {e} m, want {hdop} × 19 m"
        );
    }
    let before = watch.since(0, &topic("kayak", "NODE_REPORT")).len();
    watch.post("kayak", "USM_SENSOR", "gps=off");
    let none = |t: &(u64, Option<f64>, Option<f64>)| t.0 == 1;
    let m = wait_tpvs(&pipe, n, 3, none, "mode 1 after gps=off");
    let lost = tpvs(&pipe.log());
    assert!(
        lost[n..m].iter().filter(|t| none(t)).all(|t| t.1.is_none()),
        "{lost:?}"
    );
    // Meanwhile the NODE_REPORTs say no fix, and the true position moves.
    let reports: Vec<serde_json::Value> = watch
        .since(0, &topic("kayak", "NODE_REPORT"))
        .iter()
        .map(|m| node_report(&m.payload))
        .collect();
    let dark: Vec<&serde_json::Value> = reports[before..]
        .iter()
        .filter(|r| r["sensed"]["fix"] == 0)
        .collect();
    assert!(
        dark.len() >= 2,
        "no NODE_REPORT without a fix: {:?}",
        &reports[before..]
    );
    for r in &dark {
        assert!(
            r["sensed"]["x"].is_null() && r["sensed"]["hdop"].is_null(),
            "{r}"
        );
    }
    let (a, b) = (dark[0], dark[dark.len() - 1]);
    assert!(
        b["y"].as_f64() > a["y"].as_f64(),
        "the true track stopped: {a} {b}"
    );
    // NAV_Y is silent now (gpsd saw no fix 3 times: seconds after the
    // switch), TRUE_Y goes on.
    let mark = watch.mark();
    let t0 = Instant::now();
    while watch.since(mark, &topic("kayak", "TRUE_Y")).len() < 10 {
        assert!(t0.elapsed() < mqtt_util::START, "no TRUE_Y");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(watch.since(mark, &topic("kayak", "NAV_Y")).len(), 0);
    let ys: Vec<f64> = watch
        .since(mark, &topic("kayak", "TRUE_Y"))
        .iter()
        .map(|m| m.payload.parse().unwrap())
        .collect();
    assert!(ys[ys.len() - 1] > ys[0], "TRUE_Y {ys:?}");
    watch.post("kayak", "USM_SENSOR", "gps=on");
    wait_tpvs(&pipe, m, 3, fixed, "the fix back after gps=on");
    assert!(!watch.since(mark, &topic("kayak", "NAV_Y")).is_empty());
    assert!(!nmea.log().contains("panicked"), "{}", nmea.log());
}

#[test]
fn ais_input_is_published_per_mmsi_as_pyais_decodes_it() {
    if !have_pynmea() {
        return;
    }
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/ais/#")]);
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    // `usim nmea --ais-in` must be told its UDP port: a fresh one again
    // if another test took it first.
    let (nmea, ais_port) = mqtt_util::on_fresh_port("usim nmea --ais-in", |ais_port| {
        let mut nmea = spawn_nmea(
            dir.path(),
            broker.port,
            &[
                "--all",
                "--udp",
                &sink.local_addr().unwrap().to_string(),
                "--ais-in",
                &format!("127.0.0.1:{ais_port}"),
            ],
        );
        nmea.wait_holding(mqtt_util::Proto::Udp, ais_port, mqtt_util::START)?;
        Ok((nmea, ais_port))
    });
    assert!(
        nmea.wait_log("usim: NMEA/AIS of", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    // A published textbook type 1, a type 5 in two fragments (from our
    // replay of nmea_harbour), garbage and a bad checksum.
    let replay = dir.path().join("h.nmea");
    let o = Command::new(usim())
        .arg("replay")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/missions/nmea_harbour.toml"
        ))
        .arg("-o")
        .arg(dir.path().join("h.csv"))
        .arg("--nmea")
        .arg(&replay)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = std::fs::read_to_string(&replay).unwrap();
    let type5: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("!AIVDM,2,"))
        .take(2)
        .collect();
    let lines = [
        "!AIVDM,1,1,,B,177KQJ5000G?tO`K>RA1wUbN0TKH,0*5C".to_string(),
        format!("{}\r\n{}", type5[0], type5[1]),
        "not AIS at all".to_string(),
        "!AIVDM,1,1,,B,177KQJ5000G?tO`K>RA1wUbN0TKH,0*00".to_string(),
    ];
    let out = UdpSocket::bind("127.0.0.1:0").unwrap();
    for l in &lines {
        out.send_to(l.as_bytes(), ("127.0.0.1", ais_port)).unwrap();
    }
    let decoded = decode(
        dir.path(),
        &[format!("{}\n", lines[0]), format!("{}\n", lines[1])],
    );
    for d in &decoded {
        let mmsi = d["mmsi"].as_u64().unwrap();
        let m = watch
            .wait_after(
                0,
                &format!("{ROOT}/ais/{mmsi}"),
                Duration::from_secs(20),
                |p| p.contains(&format!("\"last_type\":{}", d["msg_type"])),
            )
            .unwrap_or_else(|| panic!("no {ROOT}/ais/{mmsi}: {}", nmea.log()));
        let j: serde_json::Value = serde_json::from_str(&m.payload).unwrap();
        assert_eq!(j["mmsi"].as_u64(), Some(mmsi));
        if d["msg_type"] == 1 {
            assert!(
                (j["lat"].as_f64().unwrap() - d["lat"].as_f64().unwrap()).abs() < 1e-6,
                "{j} {d}"
            );
            assert!(
                (j["lon"].as_f64().unwrap() - d["lon"].as_f64().unwrap()).abs() < 1e-6,
                "{j} {d}"
            );
            assert_eq!(j["sog_kn"].as_f64(), d["speed"].as_f64());
            assert_eq!(j["cog_deg"].as_f64(), d["course"].as_f64());
            assert_eq!(j["heading_deg"], d["heading"]);
        } else {
            assert_eq!(j["name"], d["shipname"]);
            assert_eq!(j["ship_type"], d["ship_type"]);
            let len = d["to_bow"].as_u64().unwrap() + d["to_stern"].as_u64().unwrap();
            assert_eq!(j["length_m"].as_u64(), Some(len));
        }
    }
    assert!(
        nmea.wait_log("AIS input: line", mqtt_util::START),
        "{}",
        nmea.log()
    );
    assert!(!nmea.log().contains("panicked"));
}

#[test]
fn bad_options_are_refused_with_clear_messages() {
    for (args, want) in [
        (
            &["--udp", "255.255.255.255:10110"][..],
            "a broadcast address needs --broadcast",
        ),
        (
            &["--udp", "127.0.0.1:10110", "--talker", "gp"][..],
            "a talker id is two capital letters",
        ),
        (
            &["--udp", "127.0.0.1:10110", "--sentences", "GGA,XYZ"][..],
            "unknown sentence \"XYZ\"",
        ),
        (
            &["--udp", "127.0.0.1:10110", "--own-rate", "0"][..],
            "--own-rate must be a positive number",
        ),
        (&["--udp", "nowhere"][..], "expected HOST:PORT"),
    ] {
        let o = Command::new(usim())
            .args(["nmea", "--all", "--broker", "mqtt://127.0.0.1:1"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    }
}

/// The TCP address `usim nmea` printed.
fn tcp_addr_of(nmea: &Proc) -> String {
    nmea.log()
        .split("tcp://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("a tcp:// address in the log")
        .to_string()
}

/// Everything a TCP client can read within `for_` (or until it has `enough` bytes).
fn tcp_read(s: &mut TcpStream, for_: Duration, enough: usize) -> (String, bool) {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65_536];
    let t0 = Instant::now();
    while t0.elapsed() < for_ && got.len() < enough {
        match s.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), false)
}

fn report_json(k: u32, t: f64) -> String {
    format!(
        r#"{{"k":{k},"t":{t},"lat":42.3,"lon":-71.1,"sog":1.5,"hog":80,"heading":81,"depth":0,"altitude":null}}"#
    )
}

/// Issue 37 items 11 and 13: 4,096 one-off NODE_REPORT names fill the
/// vehicle table; a vehicle started after them is still served, and a TCP
/// client that connects later gets its name (AIS type 5, decoded by pyais)
/// at once, not after the 6-minute static interval.
#[test]
fn a_vehicle_started_after_4096_one_off_names_is_served_and_named_at_once() {
    if !have_pynmea() {
        return;
    }
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &["--all", "--tcp", "127.0.0.1:0", "--max-rate", "1e9"],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of every vehicle", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let tcp_addr = tcp_addr_of(&nmea);
    let pub_ = Watcher::new(broker.port, &[format!("{ROOT}/nothing")]);
    for i in 0..4_100u32 {
        pub_.publish(
            &topic(&format!("oneoff{i}"), "NODE_REPORT"),
            report_json(0, 0.0),
        );
        // Each name's report is held for a USM_TIME; the next report of
        // the same name, or its USM_TIME, sends it out.
        pub_.publish(&topic(&format!("oneoff{i}"), "USM_TIME"), "1700000000");
    }
    assert!(
        nmea.wait_log("vehicles served: forgot", Duration::from_secs(120)),
        "the table never filled: {}",
        nmea.log()
    );
    // The late vehicle reports (with its clock) every 0.2 s from now on.
    let late_mmsi = usim::nmea::default_mmsi("late");
    let mut k = 0u32;
    let report = |k: &mut u32| {
        pub_.publish(
            &topic("late", "NODE_REPORT"),
            report_json(*k, f64::from(*k) * 0.2),
        );
        pub_.publish(
            &topic("late", "USM_TIME"),
            format!("{}", 1.7e9 + f64::from(*k) * 0.2),
        );
        *k += 1;
    };
    for _ in 0..5 {
        report(&mut k);
        std::thread::sleep(Duration::from_millis(200));
    }
    // A plotter connects now: every vehicle's static data comes first.
    let mut plotter = TcpStream::connect(&tcp_addr).unwrap();
    let mut text = String::new();
    // Read on for 3 s after the first single-fragment message: on a loaded
    // machine another vehicle's message may come before the late one's.
    let t0 = Instant::now();
    let mut first_single: Option<Instant> = None;
    while t0.elapsed() < Duration::from_secs(30)
        && first_single.is_none_or(|t| t.elapsed() < Duration::from_secs(3))
    {
        let (more, closed) = tcp_read(&mut plotter, Duration::from_millis(200), usize::MAX);
        assert!(!closed, "plotter closed: {}", nmea.log());
        text.push_str(&more);
        if first_single.is_none() && text.contains("!AIVDM,1,1") {
            first_single = Some(Instant::now());
        }
        report(&mut k);
    }
    // Only whole lines go to the decoder.
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let lines: Vec<String> = whole.lines().map(|l| format!("{l}\n")).collect();
    let decoded = decode(dir.path(), &lines);
    let late: Vec<&serde_json::Value> = decoded
        .iter()
        .filter(|d| d["mmsi"].as_u64() == Some(u64::from(late_mmsi)))
        .collect();
    assert!(
        late.iter()
            .any(|d| d["msg_type"] == 5 && d["shipname"] == "LATE"),
        "no type 5 of the late vehicle at connect ({} messages): {}",
        decoded.len(),
        nmea.log()
    );
    assert!(
        late.iter().any(|d| d["msg_type"] == 1),
        "no position report of the late vehicle: {}",
        nmea.log()
    );
    // The statics at connect name at most 4,096 vehicles: the table is bounded.
    let statics = decoded.iter().filter(|d| d["msg_type"] == 5).count();
    assert!((100..=4096).contains(&statics), "{statics} statics");
    assert!(!nmea.log().contains("panicked"));
}

/// Issue 37 item 11: 10,000 one-off MMSIs in one burst fill the AIS input
/// table; a target heard after them is still published.
#[test]
fn an_ais_target_heard_after_10000_one_off_mmsis_is_published() {
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/ais/366999999")]);
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (mut nmea, ais_port) = mqtt_util::on_fresh_port("usim nmea --ais-in", |ais_port| {
        let mut nmea = spawn_nmea(
            dir.path(),
            broker.port,
            &[
                "--all",
                "--udp",
                &sink.local_addr().unwrap().to_string(),
                "--ais-in",
                &format!("127.0.0.1:{ais_port}"),
            ],
        );
        nmea.wait_holding(mqtt_util::Proto::Udp, ais_port, mqtt_util::START)?;
        Ok((nmea, ais_port))
    });
    assert!(
        nmea.wait_log("usim: NMEA/AIS of", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let line = |mmsi: u32| {
        let p = usim::nmea::ais::Position {
            mmsi,
            lat: 43.8,
            lon: -70.3,
            sog_ms: 1.0,
            cog_deg: 90.0,
            heading_deg: 90.0,
            rot_deg_min: 0.0,
            utc_second: 5,
        };
        let mut out = Vec::new();
        usim::nmea::ais::frame(&mut out, "AI", "VDM", &usim::nmea::ais::type1_bits(&p), 0);
        out
    };
    // Many lines per datagram (a loopback socket buffer holds a few
    // hundred datagrams), paced so that none is lost.
    let out = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut dgram = Vec::new();
    for i in 0..10_000u32 {
        dgram.extend(line(201_000_000 + i));
        if dgram.len() > 60_000 || i == 9_999 {
            out.send_to(&dgram, ("127.0.0.1", ais_port)).unwrap();
            dgram.clear();
            std::thread::sleep(Duration::from_millis(150));
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    out.send_to(&line(366_999_999), ("127.0.0.1", ais_port))
        .unwrap();
    let m = watch
        .wait_after(
            0,
            &format!("{ROOT}/ais/366999999"),
            Duration::from_secs(20),
            |_| true,
        )
        .unwrap_or_else(|| panic!("the new target was not published: {}", nmea.log()));
    let j: serde_json::Value = serde_json::from_str(&m.payload).unwrap();
    assert_eq!(j["mmsi"].as_u64(), Some(366_999_999));
    nmea.signal(libc::SIGINT);
    assert!(nmea.wait_exit(Duration::from_secs(60)).is_some());
    // Every one of the 10,001 was decoded (none refused) and the table
    // forgot exactly one, the first of the burst: the burst did fill it.
    let log = nmea.log();
    assert!(
        log.contains("(0 input lines refused, 0 never published"),
        "{log}"
    );
    assert!(log.contains(" 10001 AIS targets published"), "{log}");
    assert!(log.contains("1 AIS targets forgotten"), "{log}");
}

/// Issue 37 item 12: 64 idle sockets from one host do not lock a chart
/// plotter out, even one on the same host: the host keeps at most 8, the
/// plotter gets in and is served.
#[test]
fn sixty_four_idle_sockets_from_one_host_do_not_lock_a_plotter_out() {
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nmea = spawn_nmea(
        dir.path(),
        broker.port,
        &["--vehicles", "own", "--own", "own", "--tcp", "127.0.0.1:0"],
    );
    assert!(
        nmea.wait_log("usim: NMEA/AIS of own", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let tcp_addr = tcp_addr_of(&nmea);
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(&tcp_addr).unwrap())
        .collect();
    // 64 from one address: 56 of them closed (logged at 1, 2, 4, ... 32).
    assert!(
        nmea.wait_log("32 closed so far", Duration::from_secs(30)),
        "{}",
        nmea.log()
    );
    let mut plotter = TcpStream::connect(&tcp_addr).unwrap();
    let pub_ = Watcher::new(broker.port, &[format!("{ROOT}/nothing")]);
    let mut text = String::new();
    let t0 = Instant::now();
    let mut k = 0u32;
    while t0.elapsed() < Duration::from_secs(30) && !text.contains("$GPGGA") {
        pub_.publish(&topic("own", "NODE_REPORT"), report_json(k, f64::from(k)));
        pub_.publish(
            &topic("own", "USM_TIME"),
            format!("{}", 1.7e9 + f64::from(k)),
        );
        k += 1;
        let (more, closed) = tcp_read(&mut plotter, Duration::from_millis(500), usize::MAX);
        assert!(!closed, "the plotter was refused: {}", nmea.log());
        text.push_str(&more);
    }
    assert!(
        text.contains("$GPGGA"),
        "no GGA for the plotter: {}",
        nmea.log()
    );
    // Of the 64 idle sockets only 7 are still open (8 per address with the plotter).
    std::thread::sleep(Duration::from_millis(500));
    let open = idle
        .into_iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut buf = [0u8; 65_536];
            loop {
                match (&*s).read(&mut buf) {
                    Ok(0) => return false,
                    Ok(_) => continue,
                    Err(_) => return true,
                }
            }
        })
        .count();
    assert_eq!(open, 7, "{}", nmea.log());
}

/// Issue 38: the in-process NMEA path. A known start: 2026-01-15 12:00 UTC
/// (`--start-time`), the origin, heading 30°.
const TAP_START: f64 = 1_768_478_400.0;

/// A config at the origin of [`ORIGIN`] heading 30° (rudder 0 keeps it).
fn tap_config(dir: &Path, name: &str, url: &str, x: f64) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\nprefix = \"NAV\"\n\
         start_pos = \"x={x}, y=0, heading=30, speed=0, depth=0\"\napp_tick = 20\n{ORIGIN}\n\
         [mqtt]\nbroker = \"{url}\"\ntopic_root = \"{ROOT}\"\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Seconds of the UTC day of a pynmea2 `HH:MM:SS[.ffffff]` time.
fn second_of_day(hms: &str) -> f64 {
    let hms = hms.split('+').next().unwrap_or(hms);
    let mut it = hms.split(':').map(|x| x.parse::<f64>().unwrap());
    it.next().unwrap() * 3600.0 + it.next().unwrap() * 60.0 + it.next().unwrap()
}

/// The NODE_REPORT of `name` (seen on the broker) whose vehicle clock,
/// `TAP_START + t`, is `sod` (UTC seconds of the day, to 6 ms).
fn report_at(reports: &[serde_json::Value], sod: f64) -> Option<&serde_json::Value> {
    reports.iter().find(|r| {
        let clock = TAP_START + r["t"].as_f64().unwrap_or(f64::NAN);
        ((clock.rem_euclid(86_400.0) - sod + 43_200.0).rem_euclid(86_400.0) - 43_200.0).abs()
            < 0.006
    })
}

/// Every NODE_REPORT of `name` seen on the broker, once one of clock
/// `TAP_START + t` at or past `sod` (UTC seconds of the day) arrived: the
/// sentences leave in process before the broker delivers the same
/// iteration's report.
fn reports_through(watch: &Watcher, name: &str, sod: f64) -> Vec<serde_json::Value> {
    let day = TAP_START.rem_euclid(86_400.0);
    let _ = watch.wait_after(
        0,
        &topic(name, "NODE_REPORT"),
        Duration::from_secs(20),
        |p| {
            serde_json::from_str::<serde_json::Value>(p)
                .ok()
                .and_then(|r| r["t"].as_f64())
                .is_some_and(|t| day + t >= sod)
        },
    );
    watch
        .since(0, &topic(name, "NODE_REPORT"))
        .iter()
        .map(|m| node_report(&m.payload))
        .collect()
}

/// A decoded field as a number (pynmea2 gives some as text).
fn num(v: &serde_json::Value, k: &str) -> f64 {
    match &v[k] {
        serde_json::Value::String(s) => s.parse().unwrap_or(f64::NAN),
        x => x.as_f64().unwrap_or(f64::NAN),
    }
}

/// Bearing (degrees true) and distance (m) from `a` to `b`, (lat, lon) in
/// degrees, flat earth: metres per degree of the WGS 84 ellipsoid at
/// 42.36° N (the series 111132.954 − 559.822 cos 2φ + 1.175 cos 4φ and
/// 111412.84 cos φ − 93.5 cos 3φ + 0.118 cos 5φ).
fn bearing_from(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let north = (b.0 - a.0) * 111_080.3;
    let east = (b.1 - a.1) * 82_384.1;
    (
        east.atan2(north).to_degrees().rem_euclid(360.0),
        east.hypot(north),
    )
}

#[test]
fn usim_run_nmea_udp_sends_the_vehicles_own_state_in_process() {
    if !have_pynmea() {
        return;
    }
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/kayak/NODE_REPORT")]);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = sock.local_addr().unwrap().to_string();
    let cfg = tap_config(dir.path(), "kayak", &url, 0.0);
    let start = TAP_START.to_string();
    let v = mqtt_util::spawn_vehicle(&cfg, &["--nmea-udp", &to, "--start-time", &start]);
    // The first own-ship set comes at the first iteration: at the origin.
    let mut lines = Vec::new();
    let t0 = Instant::now();
    while !lines.iter().any(|l: &String| l.starts_with("$GPGGA")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no GGA: {}",
            v.log()
        );
        lines.extend(udp_lines(&sock, Duration::from_millis(200)));
    }
    watch.post("kayak", "DESIRED_THRUST", "80");
    let t1 = Instant::now();
    while t1.elapsed() < Duration::from_secs(60) {
        lines.extend(udp_lines(&sock, Duration::from_secs(1)));
        let n = lines.iter().filter(|l| l.starts_with("$GPGGA")).count();
        if t1.elapsed() > Duration::from_secs(6) && n >= 6 {
            break;
        }
    }
    let decoded = decode(dir.path(), &lines);
    let f = num;
    let ggas: Vec<&serde_json::Value> = decoded.iter().filter(|d| d["s"] == "GGA").collect();
    assert!(ggas.len() >= 6, "{decoded:?}");
    let sod = |g: &serde_json::Value| second_of_day(g["time"].as_str().unwrap());
    let reports = reports_through(&watch, "kayak", sod(ggas[ggas.len() - 1]));
    // The first fix is the origin of the config (x = y = 0).
    let first = (f(ggas[0], "latitude"), f(ggas[0], "longitude"));
    assert!(
        (first.0 - 42.358456).abs() < 1e-7 && (first.1 + 71.087589).abs() < 1e-7,
        "{first:?}"
    );
    // Each fix is the state the vehicle published at that clock (the UTC
    // of the sentence is --start-time + t): MQTT is the other path.
    for g in &ggas {
        if let Some(r) = report_at(&reports, sod(g)) {
            assert!(
                (f(r, "lat") - f(g, "latitude")).abs() < 1e-7
                    && (f(r, "lon") - f(g, "longitude")).abs() < 1e-7,
                "GGA {g} vs NODE_REPORT {r}"
            );
        }
    }
    assert!(
        ggas.iter()
            .filter(|g| report_at(&reports, sod(g)).is_some())
            .count()
            >= 4,
        "GGA times are no vehicle clocks: {ggas:?}"
    );
    // Thrust 80 with rudder 0: it went off along its heading of 30° on
    // the UTM grid (x, y: docs/model.md), i.e. 30° plus the grid
    // convergence true north: atan(tan(λ − λ₀) sin φ) (Snyder, Map
    // Projections, eq. 8-1 on the sphere) with λ₀ = −69°, the central
    // meridian of zone 19 (⌊(λ + 180)/6⌋ + 1).
    let (phi, dl) = (
        42.358456f64.to_radians(),
        (-71.087589f64 + 69.0).to_radians(),
    );
    let true_course = 30.0 + (dl.tan() * phi.sin()).atan().to_degrees();
    let last = ggas[ggas.len() - 1];
    let (bearing, dist) = bearing_from(first, (f(last, "latitude"), f(last, "longitude")));
    assert!(
        dist > 3.0 && (bearing - true_course).abs() < 0.2,
        "{bearing}° (expected {true_course}°), {dist} m"
    );
    for d in &decoded {
        match d["s"].as_str().unwrap() {
            "HDT" => assert!((f(d, "heading") - 30.0).abs() < 0.051, "{d}"),
            "VDO" => assert_eq!(
                d["mmsi"].as_u64(),
                Some(u64::from(usim::nmea::default_mmsi("kayak")))
            ),
            "VDM" => panic!("the own ship is no AIS target: {d}"),
            _ => {}
        }
    }
    let log = v.log();
    assert!(
        log.contains(&format!("NMEA/AIS of kayak to udp://{to}")),
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn usim_fleet_nmea_tcp_serves_the_other_vehicles_as_ais_targets() {
    if !have_pynmea() {
        return;
    }
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/+/NODE_REPORT")]);
    let a = tap_config(dir.path(), "kayak", &url, 0.0);
    let b = tap_config(dir.path(), "tgt", &url, 100.0);
    let mut cmd = Command::new(usim());
    cmd.arg("fleet")
        .arg(&a)
        .arg(&b)
        .args(["--nmea-own", "kayak", "--nmea-tcp", "127.0.0.1:0"])
        .args(["--start-time", &TAP_START.to_string()]);
    let fleet = Proc::spawn("usim fleet", cmd, dir.path().join("fleet.log"));
    assert!(
        fleet.wait_log("NMEA/AIS of the fleet to tcp://", Duration::from_secs(60)),
        "{}",
        fleet.log()
    );
    let log = fleet.log();
    let addr = log
        .split("NMEA/AIS of the fleet to tcp://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    let mut tcp = TcpStream::connect(&addr).unwrap();
    // Connected while the fleet checks its names (the tap opens first):
    // tgt's first sight, with its type 1 and 5, comes on this connection.
    watch.post("tgt", "DESIRED_THRUST", "50");
    let (text, _) = tcp_read(&mut tcp, Duration::from_secs(15), usize::MAX);
    let lines: Vec<String> = text
        .split_inclusive('\n')
        .filter(|l| l.ends_with("\r\n"))
        .map(String::from)
        .collect();
    let decoded = decode(dir.path(), &lines);
    // The fleet's clock at the last own-ship fix: tgt's reports up to it.
    let last_fix = decoded
        .iter()
        .filter(|d| d["s"] == "GGA")
        .filter_map(|d| d["time"].as_str())
        .map(second_of_day)
        .fold(0.0, f64::max);
    let reports = reports_through(&watch, "tgt", last_fix);
    let f = num;
    let tgt_mmsi = u64::from(usim::nmea::default_mmsi("tgt"));
    let (mut positions, mut statics) = (0, 0);
    for d in decoded.iter().filter(|d| d["s"] == "VDM") {
        assert_eq!(
            d["mmsi"].as_u64(),
            Some(tgt_mmsi),
            "only tgt is a target: {d}"
        );
        if d["msg_type"] == 5 {
            statics += 1;
            assert_eq!(d["shipname"], "TGT");
            continue;
        }
        positions += 1;
        assert!(
            reports
                .iter()
                .any(|r| (f(r, "lat") - f(d, "lat")).abs() < 1.4e-6
                    && (f(r, "lon") - f(d, "lon")).abs() < 1.4e-6
                    && ((f(r, "heading") - f(d, "heading") + 540.0).rem_euclid(360.0) - 180.0)
                        .abs()
                        < 0.51),
            "AIS {d} is no state of tgt"
        );
    }
    assert!(positions >= 1 && statics >= 1, "{decoded:?}");
    // kayak is the own ship: GGA at its start (the origin), !AIVDO.
    let gga = decoded.iter().find(|d| d["s"] == "GGA").expect("a GGA");
    assert!((f(gga, "latitude") - 42.358456).abs() < 1e-7, "{gga}");
    assert!(decoded.iter().any(|d| d["s"] == "VDO"), "{decoded:?}");
    assert!(!fleet.log().contains("panicked"), "{}", fleet.log());
}

#[test]
fn gpsd_reads_usim_run_nmea_udp_and_its_fix_is_the_vehicles() {
    let Some((gpsd, gpspipe)) = gpsd_paths() else {
        return;
    };
    let broker = Broker::start(BrokerKind::Embedded).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let watch = Watcher::new(broker.port, &[format!("{ROOT}/kayak/NODE_REPORT")]);
    let (_gpsd, udp_port, gpsd_port) = mqtt_util::start_gpsd(&gpsd, dir.path());
    let cfg = tap_config(dir.path(), "kayak", &url, 0.0);
    let to = format!("127.0.0.1:{udp_port}");
    let start = TAP_START.to_string();
    let v = mqtt_util::spawn_vehicle(&cfg, &["--nmea-udp", &to, "--start-time", &start]);
    assert!(
        v.wait_log("NMEA/AIS of kayak", Duration::from_secs(60)),
        "{}",
        v.log()
    );
    watch.post("kayak", "DESIRED_THRUST", "80");
    let o = Command::new("timeout")
        .arg("40")
        .arg(&gpspipe)
        .args(["-w", "-n", "20", &format!("127.0.0.1:{gpsd_port}")])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let tpvs: Vec<serde_json::Value> = out
        .lines()
        .filter(|l| l.contains("\"class\":\"TPV\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // "YYYY-MM-DDTHH:MM:SS.sssZ" → UTC seconds of the day.
    let sod = |time: &str| second_of_day(&time[11..time.len() - 1]);
    let last = tpvs
        .iter()
        .filter_map(|v| v["time"].as_str())
        .map(sod)
        .fold(0.0, f64::max);
    let reports = reports_through(&watch, "kayak", last);
    let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    let mut fixes = 0;
    for line in &tpvs {
        let (Some(lat), Some(time)) = (line["lat"].as_f64(), line["time"].as_str()) else {
            continue;
        };
        // The date is --start-time's.
        assert!(time.starts_with("2026-01-15T"), "{line}");
        let Some(r) = report_at(&reports, sod(time)) else {
            panic!(
                "no state at {time}: {line}; {} reports, t = {:?}",
                reports.len(),
                reports
                    .iter()
                    .map(|r| f(r, "t"))
                    .take(100)
                    .collect::<Vec<_>>()
            );
        };
        assert!((f(r, "lat") - lat).abs() < 1e-7, "lat {line} vs {r}");
        assert!(
            (f(r, "lon") - line["lon"].as_f64().unwrap()).abs() < 1e-7,
            "lon {line} vs {r}"
        );
        fixes += 1;
    }
    assert!(fixes >= 3, "gpsd gave {fixes} fixes: {out}\n{}", v.log());
}
