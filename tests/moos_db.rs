//! `usim moosdb` with real MOOS clients: pymoos 2022.1 (the C++ MOOS
//! client library) connects several clients, is poisoned on a duplicate
//! name, registers (plain, with an interval, wildcard), notifies doubles
//! and strings, receives mail in order with the right source, community
//! and times, sees DB_CLIENTS/DB_TIME/DB_UPTIME, and agrees on the clock
//! under MOOSTimeWarp (tests/py/moos_db_check.py). Hostile input over raw
//! sockets: a wrong protocol string, garbage, a truncated packet, an
//! oversize length, a silent client: each a log line, no crash, and the
//! DB keeps serving.
//!
//! Issue 37 (tests/py/moos_db_hostile.py): subscribers that never read a
//! 1 MiB value, 1,100 slow handshakes under a 1,024 file limit, hostile
//! wildcard filters against 40,000-character names; each while a pymoos
//! client checks its own mail or connection. `--bind` with `--mqtt`.
mod moos_util;
mod mqtt_util;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use moos_util::*;
use mqtt_util::{Broker, BrokerKind};
use usim::moos::codec::{
    decode_packet, encode_packet, protocol_bytes, DataType, FrameReader, Message, MsgType,
};

#[test]
fn pymoos_clients_against_usim_moosdb() {
    if !have_pymoos("pymoos_clients_against_usim_moosdb") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (db, port) = moosdb(dir.path(), "basic", &["--moos_community=tcomm"]);
    let out = run_py(
        "moos_db_check.py",
        &[&port.to_string(), "basic"],
        Duration::from_secs(120),
    );
    assert_py(&out, "moos_db_check basic");
    assert!(
        db.log().contains("already exists"),
        "the poison is logged:\n{}",
        db.log()
    );
}

#[test]
fn pymoos_clocks_agree_under_time_warp() {
    if !have_pymoos("pymoos_clocks_agree_under_time_warp") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_db, port) = moosdb(dir.path(), "warp", &["--moos_time_warp=10"]);
    let out = run_py(
        "moos_db_check.py",
        &[&port.to_string(), "warp", "10"],
        Duration::from_secs(60),
    );
    assert_py(&out, "moos_db_check warp");
}

/// pLogger's `WildCardLogging = true` against `usim moosdb`: a client
/// doing what pLogger does (`Q VAR_SUMMARY`, a registration per name)
/// logs every variable pymoos apps publish and the DB's own DB_* ones;
/// DB_VARSUMMARY, DB_QOS, DB_RWSUMMARY and DB_CLIENTS decode as the MOOS
/// sources define them (tests/py/moos_plogger_check.py, docs/moosdb.md).
#[test]
fn plogger_wildcard_logging_and_the_db_summaries() {
    if !have_pymoos("plogger_wildcard_logging_and_the_db_summaries") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_db, port) = moosdb(dir.path(), "plogger", &["--moos_community=plog"]);
    let out = run_py(
        "moos_plogger_check.py",
        &[&port.to_string(), "plog"],
        Duration::from_secs(120),
    );
    assert_py(&out, "moos_plogger_check");
}

/// A kernel figure of process `pid` from /proc (`VmHWM`: peak resident
/// memory), KiB.
fn proc_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Issue 37 item 1: 8 pymoos subscribers of a 1 MiB value whose mail
/// callback never returns (so the client library stops reading its
/// socket), 100 writes at 20 Hz: each is dropped with a log line once
/// 16 MiB are queued for it, the DB's peak resident memory stays far
/// below the 800 MiB the queues would otherwise hold, and a live pymoos
/// client keeps its 20 Hz mail.
#[test]
fn subscribers_that_never_read_are_dropped_and_memory_stays_bounded() {
    if !have_pymoos("subscribers_that_never_read_are_dropped_and_memory_stays_bounded") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (db, port) = moosdb(dir.path(), "stall", &["--moos_timeout=30"]);
    let out = run_py(
        "moos_db_hostile.py",
        &[&port.to_string(), "stall"],
        Duration::from_secs(120),
    );
    assert_py(&out, "moos_db_hostile stall");
    assert!(
        db.wait_log("does not read its mail", Duration::from_secs(10)),
        "{}",
        db.log()
    );
    let peak = proc_kib(db.pid(), "VmHWM:").expect("VmHWM of the DB");
    println!("figures: moosdb peak resident memory {} MiB", peak / 1024);
    // 8 x 16 MiB queued at most, one value in flight per client, the
    // writer's packet buffer: well under 300 MiB.
    assert!(
        peak < 300 * 1024,
        "moosdb peak RSS {peak} KiB:\n{}",
        db.log()
    );
    let drops = db.log().matches("does not read its mail").count();
    assert!(
        drops >= 8,
        "each stalled subscriber dropped once:\n{}",
        db.log()
    );
}

/// Issue 37 item 2: under a 1,024 file limit, 1,100 sockets sending the
/// protocol string a byte every 2 s do not lock a pymoos client out (the
/// oldest unfinished handshakes are closed, logged), and a slow handshake
/// is closed at the 5 s whole-handshake deadline.
#[test]
fn slow_handshakes_do_not_lock_moos_apps_out() {
    if !have_pymoos("slow_handshakes_do_not_lock_moos_apps_out") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "ulimit -n 1024 && exec \"$0\" moosdb --moos_port=0",
        usim(),
    ]);
    let mut db = Proc::spawn("moosdb slowloris", cmd, dir.path().join("moosdb.log"));
    let port = db.wait_listen_port(START).expect("moosdb started");
    let out = run_py(
        "moos_db_hostile.py",
        &[&port.to_string(), "slowloris"],
        Duration::from_secs(120),
    );
    assert_py(&out, "moos_db_hostile slowloris");
    let log = db.log();
    assert!(
        log.contains("unfinished handshakes: closed the oldest"),
        "{log}"
    );
    assert!(
        log.contains("client app_after_slowloris connected"),
        "{log}"
    );
    assert!(
        !log.contains("accept failed"),
        "no file descriptor ran out:\n{log}"
    );
}

/// Issue 37 item 4: eight `*aaaa…b` wildcard filters (256 bytes, the
/// most allowed) and 21 new variables with 40,000-character names: a
/// pymoos client's 20 Hz mail never pauses for 0.5 s, and the one name
/// that matches is delivered to the filters' client.
#[test]
fn hostile_wildcards_do_not_stall_other_clients_mail() {
    if !have_pymoos("hostile_wildcards_do_not_stall_other_clients_mail") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_db, port) = moosdb(dir.path(), "wildcard", &[]);
    let out = run_py(
        "moos_db_hostile.py",
        &[&port.to_string(), "wildcard"],
        Duration::from_secs(120),
    );
    assert_py(&out, "moos_db_hostile wildcard");
}

/// Issue 37 item 5: `--bind 127.0.0.2 --mqtt URL`: the in-DB mirror dials
/// the address the DB listens on, and mirrors the community.
#[test]
fn moosdb_bound_to_another_address_mirrors_onto_mqtt() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let (db, _port) = moosdb(
        dir.path(),
        "bind",
        &[
            "--bind",
            "127.0.0.2",
            "--moos_community=bound",
            "--mqtt",
            &url,
        ],
    );
    assert!(
        db.wait_log("listening on 127.0.0.2:", Duration::from_secs(10)),
        "{}",
        db.log()
    );
    assert!(
        db.wait_log("mirroring community bound", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    assert!(
        db.log()
            .contains("usim_moosdb_mirror connected to the MOOSDB at 127.0.0.2:"),
        "{}",
        db.log()
    );
}

fn hello(name: &str) -> Vec<u8> {
    let mut b = protocol_bytes().to_vec();
    b.extend(encode_packet(&[Message {
        msg_type: MsgType::Data,
        data_type: DataType::String,
        key: "asynchronous".into(),
        sval: name.into(),
        time: 0.0,
        ..Message::default()
    }]));
    b
}

/// Connect a raw client, handshake, return the stream and the welcome.
fn raw_client(port: u16, name: &str) -> (TcpStream, Message) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&hello(name)).unwrap();
    let msgs = read_one(&mut s).expect("a welcome");
    (s, msgs.into_iter().next().unwrap())
}

fn read_one(s: &mut TcpStream) -> Option<Vec<Message>> {
    let mut r = FrameReader::new(1 << 20);
    let mut buf = [0u8; 4096];
    loop {
        if let Ok(Some(m)) = r.next_packet() {
            return Some(m);
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => r.push(&buf[..n]),
        }
    }
}

fn closed_within(s: &mut TcpStream, t: Duration) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    while t0.elapsed() < t {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn hostile_clients_get_a_log_line_and_the_db_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let (db, port) = moosdb(dir.path(), "hostile", &["--moos_timeout=2"]);
    // A wrong protocol string: closed, logged (MOOSDB: "Incompatible wire protocol").
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut wrong = [0u8; 32];
    wrong[..22].copy_from_slice(b"ELKS CAN'T DANCE 2/8/9");
    s.write_all(&wrong).unwrap();
    assert!(
        closed_within(&mut s, Duration::from_secs(30)),
        "wrong protocol: connection closed"
    );
    assert!(
        db.wait_log("Incompatible wire protocol", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    // A duplicate name over the wire: a poison message, then closed.
    let (mut keep, w) = raw_client(port, "keeper");
    assert_eq!(w.msg_type, MsgType::Welcome);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&hello("keeper")).unwrap();
    let p = read_one(&mut s).expect("a poison packet");
    assert_eq!(p[0].msg_type, MsgType::Poison);
    assert!(p[0].sval.contains("already exists"), "{:?}", p[0].sval);
    // Issue 37 item 20a: a client name over 256 bytes is poisoned; a name
    // packet over 64 KiB (an 8 MiB name) is not even read.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&hello(&"n".repeat(300))).unwrap();
    let p = read_one(&mut s).expect("a poison packet");
    assert_eq!(p[0].msg_type, MsgType::Poison);
    assert!(p[0].sval.contains("at most 256"), "{:?}", p[0].sval);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = s.write_all(&hello(&"n".repeat(8 << 20)));
    assert!(
        closed_within(&mut s, Duration::from_secs(30)),
        "8 MiB name: closed"
    );
    assert!(
        db.wait_log("packet announces", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    // Garbage after a good handshake: logged, that client disconnected.
    let (mut g, _) = raw_client(port, "garbage");
    g.write_all(&[
        0x11, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0,
    ])
    .unwrap();
    assert!(
        closed_within(&mut g, Duration::from_secs(30)),
        "garbage: connection closed"
    );
    assert!(
        db.wait_log("garbage: not a MOOS packet", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    // An oversize length: closed at once, nothing allocated for it.
    let (mut o, _) = raw_client(port, "oversize");
    o.write_all(&i32::MAX.to_le_bytes()).unwrap();
    assert!(
        closed_within(&mut o, Duration::from_secs(30)),
        "oversize: connection closed"
    );
    assert!(
        db.wait_log("oversize: not a MOOS packet", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    // A truncated packet, then the socket closes: a disconnection.
    let (mut t, _) = raw_client(port, "truncated");
    let pkt = encode_packet(&[Message::notify_double("X", 1.0, 0.0)]);
    t.write_all(&pkt[..pkt.len() / 2]).unwrap();
    drop(t);
    assert!(
        db.wait_log("client truncated disconnected", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    // A silent client is dropped after ClientTimeout (2 s here); the
    // keeper, which keeps talking, is not.
    let (mut silent, _) = raw_client(port, "silent");
    let t0 = Instant::now();
    let mut ping = Message {
        msg_type: MsgType::Timing,
        source: "keeper".into(),
        ..Message::default()
    };
    while t0.elapsed() < Duration::from_secs(4) {
        ping.time = 0.0;
        keep.write_all(&encode_packet(std::slice::from_ref(&ping)))
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        closed_within(&mut silent, Duration::from_secs(30)),
        "silent client dropped"
    );
    assert!(
        db.wait_log("disconnecting silent", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    assert!(!db.log().contains("disconnecting keeper"), "{}", db.log());
    // The DB still serves: the keeper's timing echo comes back.
    keep.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = decode_packet(&[]);
    let mut echoed = false;
    keep.write_all(&encode_packet(std::slice::from_ref(&ping)))
        .unwrap();
    for _ in 0..20 {
        match read_one(&mut keep) {
            Some(ms) if ms.iter().any(|m| m.msg_type == MsgType::Timing) => {
                echoed = true;
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    assert!(
        echoed,
        "timing echo after the hostile clients:\n{}",
        db.log()
    );
}
