//! Probe for `scripts/bench_view.sh`: one page-like WebSocket client of
//! `usim view` plus one MQTT subscriber of the same broker. For every
//! vehicle iteration `k` seen in a frame, the latency is the time from the
//! `NODE_REPORT` with that `k` reaching the MQTT subscriber to the frame
//! reaching the WebSocket client. Also samples the server's CPU time and
//! memory from /proc.
//!
//!   view_probe WS_URL MQTT_PORT TOPIC_ROOT SECONDS SERVER_PID
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use tokio_tungstenite::tungstenite::Message;

fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (tick(11) + tick(12)) / hz
}

fn status_kib(pid: u32, key: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(key).and_then(|r| {
                r.trim_start_matches(':')
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0.0)
}

fn pct(xs: &mut [f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let i = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("usage: view_probe WS_URL MQTT_PORT TOPIC_ROOT SECONDS SERVER_PID");
        std::process::exit(2);
    }
    let (ws_url, port, root) = (&a[1], a[2].parse::<u16>().expect("port"), a[3].clone());
    let seconds: f64 = a[4].parse().expect("seconds");
    let pid: u32 = a[5].parse().expect("pid");

    // MQTT side: arrival time of each (vehicle, k).
    let seen: Arc<Mutex<HashMap<(String, u64), Instant>>> = Arc::default();
    let mut opts = MqttOptions::new(
        format!("view-probe-{}", std::process::id()),
        "127.0.0.1",
        port,
    );
    opts.set_max_packet_size(256 * 1024, 64 * 1024);
    let (client, mut el) = AsyncClient::new(opts, 64);
    {
        let seen = Arc::clone(&seen);
        let root = root.clone();
        tokio::spawn(async move {
            loop {
                match el.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        let _ = client
                            .subscribe(format!("{root}/+/NODE_REPORT"), QoS::AtMostOnce)
                            .await;
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let now = Instant::now();
                        let name = p.topic.split('/').rev().nth(1).unwrap_or("").to_string();
                        let k = serde_json::from_slice::<serde_json::Value>(&p.payload)
                            .ok()
                            .and_then(|v| v["k"].as_f64());
                        if let Some(k) = k {
                            let mut s = seen.lock().unwrap();
                            s.insert((name, k as u64), now);
                            if s.len() > 200_000 {
                                let cut = now - Duration::from_secs(5);
                                s.retain(|_, t| *t > cut);
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        eprintln!("probe MQTT: {e}");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        });
    }

    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url.as_str())
        .await
        .expect("connect to usim view");
    let warmup = Duration::from_secs(3);
    let t_start = Instant::now();
    let mut measuring = false;
    let (mut cpu0, mut t0) = (0.0, Instant::now());
    let mut last_k: HashMap<String, u64> = HashMap::new();
    let mut lat_ms: Vec<f64> = Vec::new();
    let (mut frames, mut bytes, mut vehicles, mut missing) = (0u64, 0u64, 0usize, 0u64);
    while let Ok(Some(Ok(msg))) = tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
        let now = Instant::now();
        if !measuring && now - t_start >= warmup {
            measuring = true;
            cpu0 = cpu_s(pid);
            t0 = now;
        }
        if measuring && now - t0 >= Duration::from_secs_f64(seconds) {
            break;
        }
        let Message::Text(text) = msg else { continue };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if v["type"] != "frame" {
            continue;
        }
        let vs = v["vehicles"].as_array().cloned().unwrap_or_default();
        vehicles = vs.len();
        if measuring {
            frames += 1;
            bytes += text.len() as u64;
        }
        let seen = seen.lock().unwrap();
        for veh in &vs {
            let (Some(name), Some(k)) = (veh["name"].as_str(), veh["report"]["k"].as_f64()) else {
                continue;
            };
            let k = k as u64;
            if last_k.get(name) == Some(&k) {
                continue;
            }
            last_k.insert(name.to_string(), k);
            if !measuring {
                continue;
            }
            match seen.get(&(name.to_string(), k)) {
                Some(t) => lat_ms.push(now.saturating_duration_since(*t).as_secs_f64() * 1e3),
                None => missing += 1,
            }
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = (cpu_s(pid) - cpu0) / wall * 100.0;
    let n = lat_ms.len();
    let (p50, p99) = (pct(&mut lat_ms, 0.5), pct(&mut lat_ms, 0.99));
    let max = lat_ms.last().copied().unwrap_or(f64::NAN);
    println!(
        "usim view: {vehicles} vehicles, {wall:.0} s measured, {:.1} frames/s, {:.0} KiB/s to the page",
        frames as f64 / wall,
        bytes as f64 / wall / 1024.0
    );
    println!(
        "  server CPU {cpu:.1} %  RSS {:.1} MiB (peak {:.1} MiB)",
        status_kib(pid, "VmRSS") / 1024.0,
        status_kib(pid, "VmHWM") / 1024.0
    );
    println!(
        "  NODE_REPORT -> page latency ms: p50 {p50:.1}  p99 {p99:.1}  max {max:.1}  over {n} updates ({missing} not matched)   target p99 <= 100   {}",
        if p99 <= 100.0 { "PASS" } else { "FAIL" }
    );
}
