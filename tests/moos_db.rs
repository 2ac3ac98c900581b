//! `usim moosdb` with real MOOS clients: pymoos 2022.1 (the C++ MOOS
//! client library) connects several clients, is poisoned on a duplicate
//! name, registers (plain, with an interval, wildcard), notifies doubles
//! and strings, receives mail in order with the right source, community
//! and times, sees DB_CLIENTS/DB_TIME/DB_UPTIME, and agrees on the clock
//! under MOOSTimeWarp (tests/py/moos_db_check.py). Hostile input over raw
//! sockets: a wrong protocol string, garbage, a truncated packet, an
//! oversize length, a silent client: each a log line, no crash, and the
//! DB keeps serving.
mod moos_util;
mod mqtt_util;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use moos_util::*;
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
