//! Soak test (run it with `scripts/soak.sh MINUTES`): one vehicle on a real
//! mosquitto under a mixed flood of valid and hostile messages while the
//! broker is killed (SIGKILL) and restarted every 30 s.
//!
//! It reports
//! * the vehicle's RSS every 5 s (it should stay flat);
//! * per broker epoch, QoS 1 commands lost after the reconnection: once the
//!   vehicle publishes again on the new broker, 100 `USM_RESET` messages
//!   (QoS 1) are sent; each applied one raises the vehicle's
//!   `USM_RESET_COUNT`; lost = sent − applied, read before the next kill;
//! * the vehicle's tick lateness p50/p99/max (its `--stats` file at exit).
//!
//! `cargo run --release --example soak -- MINUTES USIM_BINARY [MOSQUITTO]`
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

const ROOT: &str = "soak";
const NAME: &str = "soaker";
const EPOCH: Duration = Duration::from_secs(30);
const RESETS_PER_EPOCH: u64 = 100;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn start_broker(mosquitto: &str, dir: &Path, port: u16) -> Child {
    let conf = dir.join("mosquitto.conf");
    std::fs::write(
        &conf,
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"),
    )
    .expect("write mosquitto.conf");
    let child = Command::new(mosquitto)
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "mosquitto did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// What the observer has seen.
#[derive(Default)]
struct Seen {
    reset_count: f64,
    last_time_at: Option<Instant>,
}

/// A client whose connection is driven (and reconnected) by a thread.
fn client(id: &str, port: u16, subscribe: Vec<String>, seen: Option<Arc<Mutex<Seen>>>) -> Client {
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_keep_alive(Duration::from_secs(5));
    o.set_max_packet_size(1 << 20, 1 << 20);
    o.set_clean_session(true);
    let (c, mut conn) = Client::new(o, 10_000);
    let c2 = c.clone();
    std::thread::spawn(move || {
        for ev in conn.iter() {
            match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    for f in &subscribe {
                        let _ = c2.try_subscribe(f.clone(), QoS::AtMostOnce);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    if let Some(seen) = &seen {
                        let mut s = seen.lock().unwrap();
                        if p.topic.ends_with("/USM_RESET_COUNT") {
                            if let Ok(v) = String::from_utf8_lossy(&p.payload).parse() {
                                s.reset_count = v;
                            }
                        } else if p.topic.ends_with("/USM_TIME") {
                            s.last_time_at = Some(Instant::now());
                        }
                    }
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    c
}

fn topic(var: &str) -> String {
    format!("{ROOT}/{NAME}/{var}")
}

/// Valid and hostile messages, in rotation.
fn flood_message(i: u64) -> (String, Vec<u8>) {
    let (var, payload): (&str, Vec<u8>) = match i % 16 {
        0 => ("DESIRED_THRUST", format!("{}", i % 100).into_bytes()),
        1 => (
            "DESIRED_RUDDER",
            format!("{}", (i % 60) as i64 - 30).into_bytes(),
        ),
        2 => ("DESIRED_THRUST", b"1e308".to_vec()),
        3 => ("DESIRED_RUDDER", b"nan".to_vec()),
        4 => ("USM_RESET", b"x=1e10".to_vec()),
        5 => ("USM_RESET", b"x=1e308,y=1e308".to_vec()),
        6 => ("DRIFT_X", b"1e20".to_vec()),
        7 => ("DESIRED_THRUST", b"\x1b]0;pwned\x07\x1b[2J".to_vec()),
        8 => {
            // 50 distinct future times per message: grows to the cap, refused after
            let base = 1e9 + (i as f64) * 100.0;
            let list: Vec<String> = (0..50)
                .map(|k| format!("[1,{}]", base + k as f64))
                .collect();
            (
                "SET",
                format!("[\"DESIRED_ELEVATOR\",\"Merge\",[{}]]", list.join(",")).into_bytes(),
            )
        }
        9 if i % 1600 == 9 => ("SET", br#"["DESIRED_ELEVATOR","ClearAll",[]]"#.to_vec()),
        10 if i % 800 == 10 => ("DESIRED_RUDDER", vec![b'7'; 100_000]),
        11 => ("NOT_A_VARIABLE", b"1".to_vec()),
        12 => ("DRIFT_VECTOR_ADD", b"90, 0".to_vec()),
        13 => ("SET", b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".to_vec()),
        14 => ("USM_SIM_PAUSED", b"false".to_vec()),
        _ => ("DESIRED_ELEVATOR", b"0".to_vec()),
    };
    (topic(var), payload)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let minutes: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let usim = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "target/release/usim".into());
    let mosquitto = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "/usr/sbin/mosquitto".into());
    let dir = std::env::temp_dir().join(format!("usim-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let port = free_port();
    let mut broker = start_broker(&mosquitto, &dir, port);

    let cfg = dir.join("soaker.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"{NAME}\"\nprefix = \"NAV\"\napp_tick = 20\n[mqtt]\nbroker = \"mqtt://127.0.0.1:{port}\"\ntopic_root = \"{ROOT}\"\n"
        ),
    )
    .expect("config");
    let stats = dir.join("stats.json");
    let log = std::fs::File::create(dir.join("vehicle.log")).expect("log");
    let mut vehicle = Command::new(&usim)
        .arg("run")
        .arg(&cfg)
        .arg("--stats")
        .arg(&stats)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start usim run");
    let pid = vehicle.id();

    let seen = Arc::new(Mutex::new(Seen::default()));
    let _observer = client(
        "soak-observer",
        port,
        vec![topic("USM_RESET_COUNT"), topic("USM_TIME")],
        Some(Arc::clone(&seen)),
    );
    let sender = client("soak-sender", port, vec![], None);
    let flooder = client("soak-flooder", port, vec![], None);

    // The flood: up to 800 messages/s (about 500/s on a loaded machine), QoS 0
    // and 1 mixed, until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicU64::new(0));
    let flood = {
        let (stop, flooded) = (Arc::clone(&stop), Arc::clone(&flooded));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..8 {
                    let (t, p) = flood_message(i);
                    let qos = if i % 2 == 0 {
                        QoS::AtMostOnce
                    } else {
                        QoS::AtLeastOnce
                    };
                    if flooder.try_publish(t, qos, false, p).is_ok() {
                        flooded.fetch_add(1, Ordering::Relaxed);
                    }
                    i += 1;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };

    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(minutes * 60.0);
    let mut rss: Vec<(f64, u64)> = Vec::new();
    let mut losses: Vec<(u32, u64, i64)> = Vec::new();
    let mut expected = 0.0;
    let mut epoch = 0u32;
    let mut next_rss = Instant::now();
    println!(
        "soak: {minutes} min, broker killed every {} s, vehicle pid {pid}",
        EPOCH.as_secs()
    );
    while Instant::now() < end {
        epoch += 1;
        let epoch_start = Instant::now();
        // Wait for the vehicle to publish on this broker again.
        let back = loop {
            if let Some(at) = seen.lock().unwrap().last_time_at {
                if at > epoch_start {
                    break Some(at);
                }
            }
            if epoch_start.elapsed() > Duration::from_secs(20) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let reconnect_s = back.map(|b| (b - epoch_start).as_secs_f64());
        std::thread::sleep(Duration::from_millis(500));
        let mut sent = 0;
        for _ in 0..RESETS_PER_EPOCH {
            if sender
                .try_publish(topic("USM_RESET"), QoS::AtLeastOnce, false, "x=0,y=0")
                .is_ok()
            {
                sent += 1;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        expected += sent as f64;
        // Time for the last ones to be applied and USM_RESET_COUNT posted,
        // also when the run ends within this epoch.
        std::thread::sleep(Duration::from_secs(2));
        while epoch_start.elapsed() < EPOCH && Instant::now() < end {
            if Instant::now() >= next_rss {
                rss.push((t0.elapsed().as_secs_f64(), rss_kib(pid)));
                next_rss += Duration::from_secs(5);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let applied = seen.lock().unwrap().reset_count;
        let lost = (expected - applied) as i64;
        losses.push((epoch, sent, lost));
        expected = applied; // count losses per epoch, not cumulatively
        println!(
            "epoch {epoch}: vehicle back after {} s; {sent} QoS 1 USM_RESET sent, lost {lost}; RSS {} KiB",
            reconnect_s.map_or("-".into(), |s| format!("{s:.2}")),
            rss_kib(pid)
        );
        if Instant::now() < end {
            let _ = broker.kill();
            let _ = broker.wait();
            std::thread::sleep(Duration::from_secs(1));
            broker = start_broker(&mosquitto, &dir, port);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = flood.join();
    unsafe_sigterm(pid);
    let _ = vehicle.wait();
    let _ = broker.kill();
    let _ = broker.wait();

    println!("\nRSS over time (s, KiB):");
    for (t, r) in &rss {
        print!("{t:.0}:{r} ");
    }
    println!();
    let (lo, hi) = rss
        .iter()
        .skip(1)
        .fold((u64::MAX, 0), |(lo, hi), (_, r)| (lo.min(*r), hi.max(*r)));
    println!("RSS after the first sample: min {lo} KiB, max {hi} KiB");
    let lost: Vec<i64> = losses.iter().map(|l| l.2).collect();
    println!("QoS 1 commands lost per reconnect: {lost:?}");
    println!("flood messages sent: {}", flooded.load(Ordering::Relaxed));
    match std::fs::read_to_string(&stats) {
        Ok(s) => {
            let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
            println!(
                "vehicle: ticks {} skipped {} lateness p50 {} ms p99 {} ms max {} ms; bad messages {}, mailbox drops {}, connections {}",
                v["ticks"], v["skipped"], v["lateness_p50_ms"], v["lateness_p99_ms"],
                v["lateness_max_ms"], v["bad_messages"], v["mail_dropped"], v["connections"]
            );
        }
        Err(e) => println!("no stats file: {e}"),
    }
    let _ = std::io::stdout().flush();
    let keep: PathBuf = dir.join("vehicle.log");
    println!("vehicle log: {}", keep.display());
}

/// SIGTERM through `kill(1)`: a clean stop that writes the stats file.
fn unsafe_sigterm(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
}
