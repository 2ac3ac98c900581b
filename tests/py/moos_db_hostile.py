"""Hostile clients against `usim moosdb` (issue 37), with real pymoos
clients (the C++ MOOS client library) checking that the DB keeps serving.

Usage: moos_db_hostile.py PORT SCENARIO
Scenarios:
  stall      8 pymoos subscribers of a 1 MiB value that never read (their
             mail callback blocks, so the library stops reading its
             socket); a live client must keep its 20 Hz mail.
  slowloris  1,100 sockets sending the protocol string a byte every 1.5 s;
             a fresh one sending a byte every 2 s is closed by the
             whole-handshake deadline (5 s); then a pymoos client must
             connect.
  wildcard   8 `*aaaa...b` wildcard filters, then variables with
             40,000-character names; a live client must keep its 20 Hz mail.
Exits 0 when every check holds; prints each check and the figures.
"""
import os
import resource
import socket
import sys
import threading
import time

import pymoos

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
PROTOCOL = b"ELKS CAN'T DANCE 2/8/10".ljust(32, b"\0")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def client(name, regs=(), wild=(), on_mail=None):
    c = pymoos.comms()

    def on_connect():
        for var, interval in regs:
            c.register(var, interval)
        for app, var, interval in wild:
            c.register(var, app, interval)
        return True

    c.set_on_connect_callback(on_connect)
    if on_mail is not None:
        c.set_on_mail_callback(on_mail)
    c.set_quiet(True)
    c.run("127.0.0.1", PORT, name)
    return c


class Ticker:
    """A writer posting TICK at 20 Hz and a live client timing its mail."""

    def __init__(self):
        self.pub = client("tick_pub")
        self.live = client("live", regs=[("TICK", 0)])
        check(self.pub.wait_until_connected(30000), "tick_pub connected")
        check(self.live.wait_until_connected(30000), "live connected")
        self.stop = threading.Event()
        self.arrivals = []
        self.sent = 0
        threading.Thread(target=self._post, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _post(self):
        while not self.stop.is_set():
            self.pub.notify("TICK", float(self.sent), -1)
            self.sent += 1
            time.sleep(0.05)

    def _read(self):
        while not self.stop.is_set():
            for m in self.live.fetch():
                if m.key() == "TICK":
                    self.arrivals.append(time.time())
            time.sleep(0.01)

    def wait_flowing(self, timeout=30.0):
        end = time.time() + timeout
        while time.time() < end and len(self.arrivals) < 5:
            time.sleep(0.05)
        return len(self.arrivals) >= 5

    def mark(self):
        return (len(self.arrivals), self.sent, time.time())

    def report(self, mark, max_gap):
        n0, s0, t0 = mark
        got = self.arrivals[n0:]
        sent = self.sent - s0
        times = [t0] + got + [time.time()]
        gap = max(b - a for a, b in zip(times, times[1:]))
        print(f"figures: live got {len(got)} of {sent} TICKs, largest gap {gap:.3f} s", flush=True)
        check(len(got) >= 0.6 * sent, f"live got at least 60% of its 20 Hz mail ({len(got)} of {sent})")
        check(gap < max_gap, f"largest gap in live's mail under {max_gap} s ({gap:.3f} s)")


def stall():
    ticker = Ticker()
    check(ticker.wait_flowing(), "TICK mail flows")
    block = threading.Event()
    entered = []

    def stalled(i):
        def on_mail():
            entered.append(i)
            block.wait()  # never returns: the library stops reading
            return True
        return on_mail

    subs = [client(f"stalled{i}", regs=[("BIG", 0)], on_mail=stalled(i)) for i in range(8)]
    big = client("big_pub")
    check(all(s.wait_until_connected(30000) for s in subs), "8 stalled subscribers connected")
    check(big.wait_until_connected(30000), "big_pub connected")
    # Small BIG writes until each stalled client is stuck in its callback.
    end = time.time() + 30
    while time.time() < end and len(set(entered)) < 8:
        big.notify("BIG", "x", -1)
        time.sleep(0.1)
    check(len(set(entered)) == 8, "every stalled subscriber got mail and stopped reading")
    mark = ticker.mark()
    value = "v" * (1024 * 1024)
    for _ in range(100):
        big.notify("BIG", value, -1)
        time.sleep(0.05)
    time.sleep(1.0)
    ticker.report(mark, 1.0)
    ticker.stop.set()


def slow_socket(first=1):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(PROTOCOL[:first])
    return s


def closed_by_peer(s):
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def slowloris():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1400
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    socks = []
    stop = threading.Event()

    def trickle():
        # The next byte of the protocol string every 1.5 s on each socket
        # (from the start, while the others are still being opened).
        sent = {}
        while not stop.wait(1.5):
            for s in list(socks):
                n = sent.get(id(s), 1)
                if n < 31:
                    try:
                        s.sendall(PROTOCOL[n:n + 1])
                    except OSError:
                        pass
                    sent[id(s)] = n + 1

    threading.Thread(target=trickle, daemon=True).start()
    for i in range(1100):
        try:
            socks.append(slow_socket())
        except OSError as e:
            check(False, f"slow socket {i}: {e}")
            break
    print(f"figures: {len(socks)} slow handshakes open", flush=True)
    # A fresh slow socket is closed by the whole-handshake deadline; by
    # then a DB that kept every slow handshake has run out of descriptors.
    t0 = time.time()
    s = slow_socket()
    sent = 1
    closed_at = None
    while time.time() - t0 < 12 and closed_at is None:
        time.sleep(0.25)
        if closed_by_peer(s):
            closed_at = time.time() - t0
            break
        if time.time() - t0 >= 2.0 * sent:
            try:
                s.setblocking(True)
                s.sendall(PROTOCOL[sent:sent + 1])
            except OSError:
                closed_at = time.time() - t0
            sent += 1
    print(f"figures: a byte-every-2-s handshake closed after {closed_at} s", flush=True)
    check(closed_at is not None and 4.0 <= closed_at <= 8.0,
          f"a byte-every-2-s handshake is closed at the 5 s deadline ({closed_at})")
    # The slow sockets are still trickling: a MOOS app connects.
    t0 = time.time()
    app = client("app_after_slowloris")
    ok = app.wait_until_connected(15000)
    check(ok, f"a pymoos client connects among 1,100 slow handshakes ({time.time() - t0:.2f} s)")
    stop.set()
    for x in socks + [s]:
        x.close()
    app.close(True)


def wildcard():
    ticker = Ticker()
    check(ticker.wait_flowing(), "TICK mail flows")
    pattern = "*" + "a" * 254 + "b"
    got = []
    # Eight filters (app patterns `*`, `*?`, ... `*???????`: all match the writer).
    filt = client("filters", wild=[("*" + "?" * i, pattern, 0) for i in range(8)])
    check(filt.wait_until_connected(30000), "filters connected")
    pub = client("name_pub")
    check(pub.wait_until_connected(30000), "name_pub connected")
    time.sleep(1.0)
    mark = ticker.mark()
    for i in range(20):
        pub.notify("a" * 39_990 + f"{i:09d}x", 1.0, -1)
        time.sleep(0.1)
    hit = "a" * 40_000 + "b"
    pub.notify(hit, 2.0, -1)
    end = time.time() + 10
    while time.time() < end and not any(m.key() == hit for m in got):
        got.extend(filt.fetch())
        time.sleep(0.05)
    ticker.report(mark, 0.5)
    check(any(m.key() == hit for m in got), "the 40,001-character name matching the filters is delivered")
    check(not any(m.key().endswith("x") for m in got), "names not matching are not delivered")
    ticker.stop.set()


{"stall": stall, "slowloris": slowloris, "wildcard": wildcard}[SCENARIO]()
print("FAILURES: %d" % len(failures), flush=True)
sys.stdout.flush()
os._exit(1 if failures else 0)
