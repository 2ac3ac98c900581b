"""pLogger's wildcard logging and uMS's comms summaries against `usim moosdb`.

Usage: moos_plogger_check.py PORT COMMUNITY
Exits 0 when every check holds; prints each check.

Three pymoos clients (the C++ MOOS client library) play a mission's apps:
`sim` posts NAV_X, NAV_Y (doubles) and NODE_REPORT_LOCAL (a string) at
10 Hz, `helm` subscribes to NAV_X and DEPLOY (never written) and posts
IVPHELM_STATE and DESIRED_SPEED. A fourth client, `pLogger`, speaks the
V10 wire protocol directly (written here from the protocol, not from usim's
code), because pymoos cannot send a server request: it does what pLogger's
`WildCardLogging = true` does (MOOSEssentials/pLogger/MOOSLogger.cpp,
HandleWildCardLogging): every second `Q VAR_SUMMARY` with id -2
(CMOOSCommClient::ServerRequest), then a registration for each name it has
not yet seen, and it logs whatever mail arrives. Expected: the log holds
every variable the apps published and the DB's own DB_* variables, each
from its writer, and nothing else. DB_VARSUMMARY, DB_QOS, DB_RWSUMMARY and
DB_CLIENTS are decoded as the MOOS sources define them (CMOOSDB in
libMOOS/DB/MOOSDB.cpp; DB_QOS and DB_RWSUMMARY as the client library's
CMOOSCommClient::ProcessClientCommsStatusSummary parses them).
"""
import re
import socket
import struct
import sys
import threading
import time

import pymoos

PORT = int(sys.argv[1])
COMMUNITY = sys.argv[2]
DB_NAME = "MOOSDB_" + COMMUNITY
DB_OWN = {"DB_TIME", "DB_UPTIME", "DB_CLIENTS", "DB_EVENT", "DB_VARSUMMARY", "DB_QOS", "DB_RWSUMMARY"}
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


# ---- the V10 wire format (little-endian; strings are int32 length + bytes) ----

def enc_str(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<i", len(b)) + b


def enc_msg(msg_type, key, sval="", dval=-1.0, time_=-1.0, data_type="S", source="pLogger", id_=-1):
    body = struct.pack("<i", id_) + msg_type.encode() + data_type.encode()
    body += enc_str(source) + enc_str("") + enc_str("") + enc_str(key)
    body += struct.pack("<ddd", time_, dval, -1.0) + enc_str(sval)
    return struct.pack("<i", len(body) + 4) + body


def enc_pkt(msgs):
    body = b"".join(msgs)
    return struct.pack("<iiB", len(body) + 9, len(msgs), 0) + body


def dec_pkt(buf):
    """Messages of one whole packet: dicts with the wire fields."""
    _total, count, _comp = struct.unpack_from("<iiB", buf, 0)
    off, out = 9, []
    for _ in range(count):
        (n,) = struct.unpack_from("<i", buf, off)
        p = off + 4
        (id_,) = struct.unpack_from("<i", buf, p)
        p += 4
        mt, dt = chr(buf[p]), chr(buf[p + 1])
        p += 2
        strs = []
        for _ in range(4):
            (ln,) = struct.unpack_from("<i", buf, p)
            strs.append(buf[p + 4 : p + 4 + ln].decode("utf-8", "replace"))
            p += 4 + ln
        t, d, d2 = struct.unpack_from("<ddd", buf, p)
        p += 24
        (ln,) = struct.unpack_from("<i", buf, p)
        sval = buf[p + 4 : p + 4 + ln].decode("utf-8", "replace")
        out.append(dict(id=id_, type=mt, dtype=dt, src=strs[0], aux=strs[1], comm=strs[2],
                        key=strs[3], time=t, dval=d, dval2=d2, sval=sval))
        off += n
    return out


class RawLogger:
    """pLogger's wildcard mode over a raw socket."""

    def __init__(self, name="pLogger"):
        self.name = name
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        self.s.sendall(b"ELKS CAN'T DANCE 2/8/10".ljust(32, b"\0"))
        self.s.sendall(enc_pkt([enc_msg("i", "asynchronous", name, time_=time.time(), source="")]))
        self.buf = b""
        welcome = self.read_packet()
        self.welcome = welcome[0] if welcome else None
        self.lock = threading.Lock()
        self.summaries = []  # VAR_SUMMARY replies
        self.log = []  # (key, src, type, value) of every N mail
        self.registered = set()
        self.stop = False
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.reader.start()

    def read_packet(self):
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack_from("<i", self.buf, 0)
                if len(self.buf) >= n:
                    pkt, self.buf = self.buf[:n], self.buf[n:]
                    return dec_pkt(pkt)
            chunk = self.s.recv(65536)
            if not chunk:
                return None
            self.buf += chunk

    def read_loop(self):
        self.s.settimeout(1.0)
        while not self.stop:
            try:
                msgs = self.read_packet()
            except socket.timeout:
                continue
            except OSError:
                return
            if msgs is None:
                return
            with self.lock:
                for m in msgs:
                    if m["type"] == "N" and m["key"] == "VAR_SUMMARY" and m["id"] == -2:
                        self.summaries.append(m)
                    elif m["type"] == "N":
                        self.log.append(m)

    def tick(self):
        """One pLogger iteration: a timing message, the VAR_SUMMARY request,
        and registrations for names seen in earlier replies."""
        with self.lock:
            names = []
            for m in self.summaries:
                names += [v for v in m["sval"].split(",") if v]
            new = [v for v in dict.fromkeys(names) if v not in self.registered and v != "MISSION_FILE"]
            self.registered.update(new)
        msgs = [enc_msg("T", "_async_timing", "", dval=0.0, time_=time.time(), data_type="D")]
        msgs.append(enc_msg("Q", "VAR_SUMMARY", "", id_=-2))
        msgs += [enc_msg("R", v, "", dval=0.0, data_type="D") for v in new]
        self.s.sendall(enc_pkt(msgs))

    def close(self):
        self.stop = True
        self.s.close()


def app(name, regs=()):
    c = pymoos.comms()

    def on_connect():
        for var in regs:
            c.register(var, 0)
        return True

    c.set_on_connect_callback(on_connect)
    c.set_quiet(True)
    c.run("localhost", PORT, name)
    check(c.wait_until_connected(30000), f"{name} connected")
    return c


# ---- decoders, as the MOOS sources define them ----

def chomp(s, tok=","):
    i = s.find(tok)
    return (s, "") if i < 0 else (s[:i], s[i + len(tok):])


def string_to_double(s):
    """MOOS::StringToDouble: throws unless MOOSIsNumeric."""
    t = s.strip(" \t\r\n")
    if any(ch not in "1234567890.eE-+" for ch in t):
        raise ValueError(f"MOOS::StringToDouble: {s} is not a number")
    return float(t) if t else 0.0


def decode_qos(v):
    out = {}
    while v:
        t, v = chomp(v)
        if not t:
            break
        c, t = chomp(t, "=")
        nums = []
        for _ in range(4):
            x, t = chomp(t, ":")
            nums.append(string_to_double(x))
        out[c] = nums
    return out


def decode_rw(v):
    out = {}
    while v:
        t, v = chomp(v)
        if not t:
            break
        c, t = chomp(t, "=")
        sub, t = chomp(t, "&")
        pub, t = chomp(t, "&")
        out[c] = ([x for x in sub.split(":") if x], [x for x in pub.split(":") if x])
    return out


LINE = re.compile(r"^(.{20}) (\d\d:\d\d:\d\d\.\d\d\d) {8} (.{20}) (\d+\.\d)(?: ?)Hz (.)  (.*)$")


def decode_varsummary(v):
    """CMOOSDB::UpdateSummaryVar: name(20) time(20) writer(20) freq(4)Hz type(2) value."""
    out = {}
    for line in v.split("\n"):
        if not line:
            continue
        m = LINE.match(line)
        if not m:
            check(False, f"DB_VARSUMMARY line {line!r} has the MOOSDB's layout")
            continue
        out[m.group(1).rstrip()] = dict(time=m.group(2), who=m.group(3).rstrip(),
                                       freq=float(m.group(4)), type=m.group(5), value=m.group(6))
    return out


# ---- the run ----

sim = app("sim")
helm = app("helm", regs=("NAV_X", "DEPLOY"))
time.sleep(0.3)
logger = RawLogger()
check(logger.welcome is not None and logger.welcome["type"] == "W", "the raw pLogger is welcomed")
posted = {"sim": set(), "helm": set()}
nav_x = []
stop = False


def sim_loop():
    i = 0
    while not stop:
        x = 0.25 * i + 0.01
        sim.notify("NAV_X", x, -1)
        sim.notify("NAV_Y", -2.0 * i, -1)
        sim.notify("NODE_REPORT_LOCAL", f"NAME=alpha,X={x},Y={-2.0 * i},SPD=1,HDG=90", -1)
        nav_x.append((time.time(), x))
        i += 1
        time.sleep(0.1)


posted["sim"] = {"NAV_X", "NAV_Y", "NODE_REPORT_LOCAL"}
th = threading.Thread(target=sim_loop, daemon=True)
th.start()
t_end = time.time() + 9.0
while time.time() < t_end:
    helm.notify("IVPHELM_STATE", "DRIVE", -1)
    helm.notify("DESIRED_SPEED", 1.5, -1)
    logger.tick()
    time.sleep(1.0)
posted["helm"] = {"IVPHELM_STATE", "DESIRED_SPEED"}
stop = True
th.join()
time.sleep(1.5)
logger.close()

with logger.lock:
    summaries = list(logger.summaries)
    log = list(logger.log)

# VAR_SUMMARY: the reply ServerRequest waits for.
check(len(summaries) >= 5, f"a VAR_SUMMARY reply to each request ({len(summaries)} of 9)")
first = summaries[0] if summaries else {}
check(first.get("src") == DB_NAME and first.get("dtype") == "S",
      f"VAR_SUMMARY comes from {DB_NAME} as a string ({first.get('src')!r})")
first_names = first.get("sval", "").split(",")
check(DB_OWN <= set(first_names), f"the first VAR_SUMMARY lists the DB's own variables ({first_names})")
check(first_names == sorted(first_names), "VAR_SUMMARY lists names in order")
last_names = set(summaries[-1]["sval"].split(",")) if summaries else set()
check("DEPLOY" in last_names, "a variable only registered for (DEPLOY) is listed")

# What the log holds.
logged = {}
for m in log:
    logged.setdefault(m["key"], set()).add(m["src"])
want = posted["sim"] | posted["helm"] | DB_OWN
check(set(logged) == want, f"the log holds exactly the apps' and the DB's variables "
      f"(missing {sorted(want - set(logged))}, extra {sorted(set(logged) - want)})")
for k in posted["sim"]:
    check(logged.get(k) == {"sim"}, f"{k} logged from sim ({logged.get(k)})")
for k in posted["helm"]:
    check(logged.get(k) == {"helm"}, f"{k} logged from helm ({logged.get(k)})")
for k in DB_OWN:
    check(logged.get(k) == {DB_NAME}, f"{k} logged from {DB_NAME} ({logged.get(k)})")
nx = [m for m in log if m["key"] == "NAV_X"]
check(len(nx) > 20, f"NAV_X is logged as it is posted ({len(nx)} of {len(nav_x)} posted)")
check([m["dval"] for m in nx] == [x for _, x in nav_x][-len(nx):],
      "the NAV_X logged are the last ones posted, in order, none lost")
check(all(m["dtype"] == "D" for m in nx), "NAV_X is logged as a double")

# The DB's postings, every 2 MOOS s.
times = [m["time"] for m in log if m["key"] == "DB_TIME"]
gaps = [b - a for a, b in zip(times, times[1:])]
check(len(times) >= 3 and all(g > 2.0 for g in gaps) and all(g < 5.0 for g in gaps),
      f"DB_TIME every 2 s while packets arrive (gaps {[round(g, 2) for g in gaps]})")
for key in ["DB_VARSUMMARY", "DB_QOS", "DB_RWSUMMARY", "DB_CLIENTS"]:
    n = len([m for m in log if m["key"] == key])
    check(n >= 3, f"{key} posted with DB_TIME ({n} times)")


def latest(key):
    ms = [m for m in log if m["key"] == key]
    return ms[-1] if ms else {"sval": "", "dtype": "?"}


clients = latest("DB_CLIENTS")
check(clients["sval"] == "pLogger,helm,sim,",
      f"DB_CLIENTS lists the newest connection first, each with a comma ({clients['sval']!r})")

vs = decode_varsummary(latest("DB_VARSUMMARY")["sval"])
check(set(vs) == last_names, "DB_VARSUMMARY has a line for every variable VAR_SUMMARY lists")
nav = vs.get("NAV_X", {})
check(nav.get("who") == "sim" and nav.get("type") == "D", f"NAV_X's line: writer sim, type D ({nav})")
check(nav.get("value") in {f"{x:.1f}" for _, x in nav_x}, "NAV_X's value is a posted one, one decimal")
# The posted rate over the last 5 s, against the DB's write-frequency filter.
t1 = nav_x[-1][0] if nav_x else 0.0
rate = len([1 for t, _ in nav_x if t > t1 - 5.0]) / 5.0
check(0.5 * rate <= nav.get("freq", 0.0) <= 1.5 * rate, f"NAV_X's frequency {nav.get('freq')} Hz near its rate {rate:.1f} Hz")
dep = vs.get("DEPLOY", {})
check(dep.get("who") == "(write pending)" and dep.get("type") == "~" and dep.get("value") == "",
      f"DEPLOY's line: (write pending), type ~ ({dep})")
node = vs.get("NODE_REPORT_LOCAL", {})
check(node.get("type") == "S" and node.get("value", "").endswith("...") and len(node.get("value", "")) == 25,
      f"a long string is cut to 22 characters and ... ({node.get('value')!r})")
own = vs.get("DB_TIME", {})
check(own.get("who") == DB_NAME, f"DB_TIME's writer is {DB_NAME} ({own})")

try:
    qos = decode_qos(latest("DB_QOS")["sval"])
    check(set(qos) == {"sim", "helm", "pLogger"}, f"DB_QOS has every client ({sorted(qos)})")
    rec, mx, mn, avg = qos.get("pLogger", [0, 0, 0, 0])
    check(0 <= mn <= mx < 5000.0, f"pLogger's timing latencies min {mn} ms <= max {mx} ms")
    check(rec >= 0 and 0 <= avg < 5000.0, f"pLogger's recent {rec} and average {avg} ms (after 5 timings)")
except ValueError as e:
    check(False, f"DB_QOS parses as the MOOS client library parses it: {e}")

rw = decode_rw(latest("DB_RWSUMMARY")["sval"])
check(list(rw) == ["pLogger", "helm", "sim"], f"DB_RWSUMMARY lists clients as DB_CLIENTS does ({list(rw)})")
check(rw.get("helm") == (["DEPLOY", "NAV_X"], ["DESIRED_SPEED", "IVPHELM_STATE"]),
      f"helm subscribes DEPLOY, NAV_X and publishes DESIRED_SPEED, IVPHELM_STATE ({rw.get('helm')})")
check(rw.get("sim") == ([], ["NAV_X", "NAV_Y", "NODE_REPORT_LOCAL"]), f"sim publishes its three ({rw.get('sim')})")
check(set(rw.get("pLogger", ([], []))[0]) == last_names, "pLogger subscribes to every listed variable")

for c in [sim, helm]:
    c.close(True)
print("FAILURES:", failures if failures else "none", flush=True)
sys.exit(1 if failures else 0)
