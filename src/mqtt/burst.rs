//! The publications of a whole fleet iteration as a few large writes on a
//! second, publish-only MQTT connection (docs/fleets.md, "10,000 live
//! vehicles").
//!
//! Why: rumqttc's event loop takes one request from its channel per poll
//! and flushes the socket after each, so 10,000 vehicles at 10 Hz
//! (`NODE_REPORT` + `USM_TIME`: 200,000 messages/s) cost 200,000 channel
//! hand-overs, allocations of topic and payload and `write` system calls a
//! second — more than the one thread of the fleet has. Here the tick
//! encodes every QoS 0 `PUBLISH` packet (MQTT 3.1.1 §3.3) of the iteration
//! into one [`PacketBuf`] (no allocation per message once the buffer has
//! grown), and a writer task sends it with a handful of `write` calls.
//!
//! The connection is a plain MQTT 3.1.1 client of its own (client id
//! `{fleet client id}-pub`, clean session, same credentials, no will, no
//! subscriptions), reconnected with back-off when the broker goes away. An
//! iteration's buffer that finds the writer still busy with earlier ones
//! (a broker that does not keep up) or the connection down is dropped
//! whole and counted, as rumqttc's full request channel drops single
//! publications: QoS 0 telemetry is replaced by the next iteration's.
//! Only `mqtt://`: with `mqtts://` the fleet publishes through rumqttc.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tracing::{info, warn};

use super::endpoint::BrokerUrl;

/// Largest remaining length of an MQTT packet (§2.2.3).
const MAX_REMAINING: usize = 268_435_455;
/// Iteration buffers the writer may hold beyond the one it is writing: a
/// broker more than this many iterations behind loses whole iterations
/// (one: a command's effect waits for at most two buffers, not a queue).
const QUEUED_ITERATIONS: usize = 1;

/// QoS 0 `PUBLISH` packets, encoded back to back.
#[derive(Debug, Default)]
pub struct PacketBuf {
    bytes: Vec<u8>,
    messages: u64,
    /// Packet boundaries about every [`CHUNK`] bytes: (byte offset,
    /// messages before it). The writer sends a chunk at a time and may
    /// abandon the rest for a newer iteration.
    marks: Vec<(usize, u64)>,
}

/// Bytes the writer sends before it looks for a newer iteration.
pub const CHUNK: usize = 64 * 1024;

impl PacketBuf {
    /// An empty buffer.
    pub fn new() -> PacketBuf {
        PacketBuf::default()
    }

    /// Append one QoS 0, non-retained `PUBLISH` of `payload` on `topic`.
    /// False (nothing appended) if the topic is over 65,535 bytes or the
    /// packet over MQTT's largest.
    pub fn publish(&mut self, topic: &str, payload: &[u8]) -> bool {
        let Ok(topic_len) = u16::try_from(topic.len()) else {
            return false;
        };
        let remaining = 2 + topic.len() + payload.len();
        if remaining > MAX_REMAINING {
            return false;
        }
        let last = self.marks.last().map_or(0, |m| m.0);
        if self.bytes.len() - last >= CHUNK {
            self.marks.push((self.bytes.len(), self.messages));
        }
        self.bytes.push(0x30); // PUBLISH, DUP 0, QoS 0, RETAIN 0
        let mut x = remaining;
        loop {
            let mut b = (x % 128) as u8;
            x /= 128;
            if x > 0 {
                b |= 0x80;
            }
            self.bytes.push(b);
            if x == 0 {
                break;
            }
        }
        self.bytes.extend_from_slice(&topic_len.to_be_bytes());
        self.bytes.extend_from_slice(topic.as_bytes());
        self.bytes.extend_from_slice(payload);
        self.messages += 1;
        true
    }

    /// Messages in the buffer.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// The encoded packets.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Empty it, keeping its memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.messages = 0;
        self.marks.clear();
    }

    /// The packets in pieces of about [`CHUNK`] bytes, each ending on a
    /// packet boundary, with the number of messages after each piece's
    /// start.
    pub fn chunks(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        let starts = std::iter::once((0, 0)).chain(self.marks.iter().copied());
        let ends = self
            .marks
            .iter()
            .map(|m| m.0)
            .chain(std::iter::once(self.bytes.len()));
        starts
            .zip(ends)
            .map(|((start, before), end)| (&self.bytes[start..end], self.messages - before))
    }
}

/// The MQTT 3.1.1 `CONNECT` packet (§3.1): clean session, keep-alive
/// `keep_alive_s`, optional user name and password, no will.
pub fn connect_packet(
    client_id: &str,
    keep_alive_s: u16,
    credentials: Option<&(String, String)>,
) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&[0, 4, b'M', b'Q', b'T', b'T', 4]);
    let mut flags = 0x02u8; // clean session
    if credentials.is_some() {
        flags |= 0x80 | 0x40;
    }
    body.push(flags);
    body.extend_from_slice(&keep_alive_s.to_be_bytes());
    let mut string = |s: &str| {
        let n = s.len().min(u16::MAX as usize);
        body.extend_from_slice(&(n as u16).to_be_bytes());
        body.extend_from_slice(&s.as_bytes()[..n]);
    };
    string(client_id);
    if let Some((user, pass)) = credentials {
        string(user);
        string(pass);
    }
    let mut packet = vec![0x10];
    let mut x = body.len();
    loop {
        let mut b = (x % 128) as u8;
        x /= 128;
        if x > 0 {
            b |= 0x80;
        }
        packet.push(b);
        if x == 0 {
            break;
        }
    }
    packet.extend_from_slice(&body);
    packet
}

/// The tick's side of the publish-only connection.
#[derive(Debug)]
pub struct Burst {
    full: mpsc::Sender<PacketBuf>,
    empty: mpsc::Receiver<PacketBuf>,
    connected: Arc<AtomicBool>,
    /// Messages dropped by the writer after it took them (write failed).
    lost: Arc<AtomicU64>,
    /// Messages of an iteration left unsent for a newer one.
    superseded: Arc<AtomicU64>,
    /// A buffer the writer's full queue refused, reused next iteration.
    spare: Option<PacketBuf>,
}

impl Burst {
    /// Start the writer task (inside a tokio runtime).
    pub fn start(
        url: &BrokerUrl,
        client_id: String,
        credentials: Option<(String, String)>,
    ) -> Burst {
        let (full_tx, full_rx) = mpsc::channel(QUEUED_ITERATIONS);
        let (empty_tx, empty_rx) = mpsc::channel(QUEUED_ITERATIONS + 2);
        for _ in 0..QUEUED_ITERATIONS + 2 {
            let _ = empty_tx.try_send(PacketBuf::new());
        }
        let connected = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicU64::new(0));
        let superseded = Arc::new(AtomicU64::new(0));
        tokio::spawn(writer(
            format!("{}:{}", url.host, url.port),
            url.to_string(),
            client_id,
            credentials,
            full_rx,
            empty_tx,
            Arc::clone(&connected),
            Arc::clone(&lost),
            Arc::clone(&superseded),
        ));
        Burst {
            full: full_tx,
            empty: empty_rx,
            connected,
            lost,
            superseded,
            spare: None,
        }
    }

    /// An empty buffer for the next iteration, or `None` while the
    /// connection is down (the iteration is then not published, as with
    /// rumqttc while disconnected).
    pub fn take(&mut self) -> Option<PacketBuf> {
        if !self.connected.load(Ordering::Relaxed) {
            return None;
        }
        let mut b = self
            .spare
            .take()
            .or_else(|| self.empty.try_recv().ok())
            .unwrap_or_default();
        b.clear();
        Some(b)
    }

    /// Hand an iteration's packets to the writer. Returns the messages
    /// dropped: all of them if the writer is [`QUEUED_ITERATIONS`] behind.
    pub fn send(&mut self, buf: PacketBuf) -> u64 {
        if buf.messages() == 0 {
            self.spare = Some(buf);
            return 0;
        }
        match self.full.try_send(buf) {
            Ok(()) => 0,
            Err(mpsc::error::TrySendError::Full(b)) | Err(mpsc::error::TrySendError::Closed(b)) => {
                let n = b.messages();
                self.spare = Some(b);
                n
            }
        }
    }

    /// Messages the writer took but could not write (connection lost
    /// during the write), so far.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Messages the writer left unsent because a newer iteration was
    /// waiting (the broker did not keep up), so far.
    pub fn superseded(&self) -> u64 {
        self.superseded.load(Ordering::Relaxed)
    }
}

/// Connect, `CONNECT`, wait for `CONNACK` (accepted).
async fn open(addr: &str, connect: &[u8]) -> std::io::Result<TcpStream> {
    let mut s = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .map_err(|_| std::io::Error::other("connection timeout"))??;
    s.set_nodelay(true)?;
    s.write_all(connect).await?;
    let mut ack = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut ack))
        .await
        .map_err(|_| std::io::Error::other("no CONNACK within 5 s"))??;
    if ack[0] != 0x20 || ack[1] != 2 {
        return Err(std::io::Error::other(format!(
            "expected CONNACK, got {ack:02x?}"
        )));
    }
    if ack[3] != 0 {
        return Err(std::io::Error::other(format!(
            "broker refused the connection (CONNACK return code {})",
            ack[3]
        )));
    }
    Ok(s)
}

/// Keep-alive of the publish-only connection, s. The tick publishes every
/// period, which counts as activity; the `PINGREQ` covers idle stretches.
const KEEP_ALIVE_S: u16 = 30;

/// Connect (and send CONNECT), retrying with a backoff from 100 ms to 5 s;
/// the first failure of a run of them is logged.
async fn open_with_backoff(addr: &str, connect: &[u8], url: &str) -> TcpStream {
    let mut backoff = Duration::from_millis(100);
    let mut warned = false;
    loop {
        match open(addr, connect).await {
            Ok(s) => return s,
            Err(e) => {
                if !warned {
                    warn!("publish connection to {url}: {e}; retrying");
                    warned = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// The broker sends only PINGRESP here: read and discard; EOF or an error
/// ends the task (and so the connection).
async fn discard_reads(mut rd: tokio::net::tcp::OwnedReadHalf) {
    let mut sink = [0u8; 256];
    loop {
        match rd.read(&mut sink).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Write one iteration's packets a chunk at a time; when a newer iteration
/// is waiting, the rest of this one is dropped for it (the newer reports
/// replace these), so a broker that falls behind delays a command's effect
/// by about one chunk and its own backlog, not by whole iterations. Buffers
/// go back to `empty`; unsent messages are counted as `lost` (write error)
/// or `superseded`.
async fn write_iteration(
    wr: &mut tokio::net::tcp::OwnedWriteHalf,
    mut buf: PacketBuf,
    full: &mut mpsc::Receiver<PacketBuf>,
    empty: &mpsc::Sender<PacketBuf>,
    lost: &AtomicU64,
    superseded: &AtomicU64,
) -> std::io::Result<()> {
    let mut failed = None;
    loop {
        let mut newer = None;
        for (chunk, left) in buf.chunks() {
            if let Ok(b) = full.try_recv() {
                superseded.fetch_add(left, Ordering::Relaxed);
                newer = Some(b);
                break;
            }
            if let Err(e) = wr.write_all(chunk).await {
                lost.fetch_add(left, Ordering::Relaxed);
                failed = Some(e);
                break;
            }
        }
        match newer {
            Some(b) if failed.is_none() => {
                let _ = empty.try_send(std::mem::replace(&mut buf, b));
            }
            _ => break,
        }
    }
    let _ = empty.try_send(buf);
    failed.map_or(Ok(()), Err)
}

#[allow(clippy::too_many_arguments)]
async fn writer(
    addr: String,
    url: String,
    client_id: String,
    credentials: Option<(String, String)>,
    mut full: mpsc::Receiver<PacketBuf>,
    empty: mpsc::Sender<PacketBuf>,
    connected: Arc<AtomicBool>,
    lost: Arc<AtomicU64>,
    superseded: Arc<AtomicU64>,
) {
    let connect = connect_packet(&client_id, KEEP_ALIVE_S, credentials.as_ref());
    loop {
        let stream = open_with_backoff(&addr, &connect, &url).await;
        info!("publish connection to {url} open (client id {client_id})");
        let (rd, mut wr) = stream.into_split();
        connected.store(true, Ordering::Relaxed);
        let mut reader = tokio::spawn(discard_reads(rd));
        let idle = Duration::from_secs(u64::from(KEEP_ALIVE_S) / 2);
        let why = loop {
            tokio::select! {
                biased;
                _ = &mut reader => break "closed by the broker".to_string(),
                buf = full.recv() => {
                    let Some(buf) = buf else {
                        // The fleet stopped.
                        let _ = wr.write_all(&[0xE0, 0]).await;
                        reader.abort();
                        return;
                    };
                    let sent = write_iteration(&mut wr, buf, &mut full, &empty, &lost, &superseded);
                    if let Err(e) = sent.await {
                        break e.to_string();
                    }
                }
                _ = tokio::time::sleep(idle) => {
                    if let Err(e) = wr.write_all(&[0xC0, 0]).await {
                        break e.to_string();
                    }
                }
            }
        };
        connected.store(false, Ordering::Relaxed);
        reader.abort();
        warn!("publish connection to {url} lost: {why}; reconnecting");
        // Buffers queued meanwhile go back empty (their iterations are lost).
        while let Ok(buf) = full.try_recv() {
            lost.fetch_add(buf.messages(), Ordering::Relaxed);
            let _ = empty.try_send(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_packets_follow_mqtt_3_1_1() {
        let mut b = PacketBuf::new();
        assert!(b.publish("a/b", b"xy"));
        // §3.3: fixed header 0x30, remaining length 2 + 3 + 2 = 7.
        assert_eq!(b.bytes(), &[0x30, 7, 0, 3, b'a', b'/', b'b', b'x', b'y']);
        // Remaining length 200 takes two bytes: 200 = 0x48 + 1 * 128 (§2.2.3).
        let payload = vec![b'z'; 200 - 2 - 1];
        let start = b.bytes().len();
        assert!(b.publish("t", &payload));
        assert_eq!(&b.bytes()[start..start + 3], &[0x30, 0xC8, 0x01]);
        assert_eq!(b.messages(), 2);
        b.clear();
        assert!(b.bytes().is_empty() && b.messages() == 0);
        assert!(!b.publish(&"x".repeat(70_000), b""));
    }

    #[test]
    fn chunks_cover_the_buffer_on_packet_boundaries() {
        let mut b = PacketBuf::new();
        let payload = vec![b'p'; 1000];
        for _ in 0..300 {
            assert!(b.publish("v/NODE_REPORT", &payload));
        }
        let chunks: Vec<(&[u8], u64)> = b.chunks().collect();
        assert!(chunks.len() >= 4, "{}", chunks.len());
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.0.iter().copied()).collect();
        assert_eq!(joined, b.bytes());
        // Every chunk starts with a PUBLISH header; the counts fall to the
        // last chunk's packets.
        assert!(chunks.iter().all(|c| c.0[0] == 0x30));
        assert_eq!(chunks[0].1, 300);
        let packet = 1 + 2 + 2 + 13 + 1000;
        let last = chunks.last().unwrap();
        assert_eq!(last.1 as usize * packet, last.0.len());
        b.clear();
        assert_eq!(b.chunks().count(), 1);
    }

    #[test]
    fn connect_packet_follows_mqtt_3_1_1() {
        let p = connect_packet("id", 30, None);
        // §3.1: protocol name "MQTT", level 4, flags clean session, keep-alive 30.
        assert_eq!(
            p,
            [0x10, 14, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 30, 0, 2, b'i', b'd']
        );
        let creds = ("u".to_string(), "pw".to_string());
        let p = connect_packet("id", 30, Some(&creds));
        assert_eq!(p[9], 0xC2);
        assert_eq!(&p[p.len() - 7..], &[0, 1, b'u', 0, 2, b'p', b'w']);
    }
}
