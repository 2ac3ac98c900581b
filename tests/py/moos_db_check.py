"""Real pymoos clients (the C++ MOOS client library) against `usim moosdb`.

Usage: moos_db_check.py PORT SCENARIO [WARP]
Scenarios: basic, warp. Exits 0 when every check holds; prints each check.
Expected behaviour is MOOSDB's (our MOOS protocol notes, docs/moos.md).
"""
import sys
import time

import pymoos

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
WARP = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def client(name, regs=(), wild=()):
    c = pymoos.comms()

    def on_connect():
        for var, interval in regs:
            c.register(var, interval)
        for app, var, interval in wild:
            c.register(var, app, interval)
        # Last: its mail shows that the DB has every registration above.
        c.register("READY_" + name, 0)
        return True

    c.set_on_connect_callback(on_connect)
    c.set_quiet(True)
    c.run("localhost", PORT, name)
    return c


def wait(cond, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def registered(c, name, writer, timeout=60.0):
    """Wait until the DB has `c`'s registrations: `writer` posts READY_name
    until `c` gets it (rather than a fixed pause, which a loaded machine
    may overrun)."""
    end = time.time() + timeout
    while time.time() < end:
        writer.notify("READY_" + name, 1.0, -1)
        t = time.time() + 0.3
        while time.time() < t:
            if any(m.key() == "READY_" + name for m in c.fetch()):
                return True
            time.sleep(0.02)
    return False


def collect(c, into):
    for m in c.fetch():
        into.append(m)
    return into


def basic():
    pub = client("pub")
    plain = client("plain", regs=[("DBL", 0), ("STR", 0)])
    slow = client("slow", regs=[("FAST", 1.0)])
    wild = client("wild", wild=[("pub", "NAV_*", 0)])
    for c, n in [(pub, "pub"), (plain, "plain"), (slow, "slow"), (wild, "wild")]:
        check(c.wait_until_connected(30000), f"{n} connected")
    for c, n in [(plain, "plain"), (slow, "slow"), (wild, "wild")]:
        check(registered(c, n, pub), f"{n} registered")
    # A duplicate name is poisoned: it never connects.
    dup = client("pub")
    check(not dup.wait_until_connected(2500), "a second client named 'pub' is refused")
    dup.close(True)
    # Doubles and strings, in order, with source, community, time.
    t0 = pymoos.time()
    for i in range(20):
        pub.notify("DBL", float(i), -1)
        pub.notify("STR", f"s{i}", -1)
    got = []
    wait(lambda: len([m for m in collect(plain, got) if m.key() in ("DBL", "STR")]) >= 40)
    mine = [m for m in got if m.key() in ("DBL", "STR")]
    check(len(mine) == 40, f"plain received 40 messages (got {len(mine)})")
    dbl = [m.double() for m in mine if m.key() == "DBL"]
    check(dbl == [float(i) for i in range(20)], "doubles in order")
    strs = [m.string() for m in mine if m.key() == "STR"]
    check(strs == [f"s{i}" for i in range(20)], "strings in order")
    check(all(m.is_double() for m in mine if m.key() == "DBL"), "DBL arrives as double")
    check(all(m.is_string() for m in mine if m.key() == "STR"), "STR arrives as string")
    check(all(m.source() == "pub" for m in mine), "source is the writer")
    check(all(m.community() == "tcomm" for m in mine), "community is the DB's")
    check(all(abs(m.time() - t0) < 5.0 for m in mine), "times are the writer's MOOS time")
    # Types are fixed by the first write: a string to DBL is refused.
    pub.notify("DBL", "oops", -1)
    pub.notify("DBL", 99.0, -1)
    got = []
    wait(lambda: any(m.key() == "DBL" and m.is_double() and m.double() == 99.0 for m in collect(plain, got)))
    check(not any(m.key() == "DBL" and m.is_string() for m in got), "string write to a double variable not delivered")
    # Registration interval: writes every 0.1 s for 3 s, interval 1 s.
    end = time.time() + 3.0
    while time.time() < end:
        pub.notify("FAST", 1.0, -1)
        time.sleep(0.1)
    got = []
    time.sleep(0.5)
    collect(slow, got)
    n = len([m for m in got if m.key() == "FAST"])
    check(2 <= n <= 5, f"interval 1 s over 3 s of 10 Hz writes: 2..5 deliveries (got {n})")
    # Wildcard: NAV_* from pub, not OTHER.
    pub.notify("NAV_X", 3.0, -1)
    pub.notify("NAV_Y", 4.0, -1)
    pub.notify("OTHER", 5.0, -1)
    got = []
    wait(lambda: {"NAV_X", "NAV_Y"} <= {m.key() for m in collect(wild, got)})
    keys = {m.key() for m in got}
    check({"NAV_X", "NAV_Y"} <= keys, f"wildcard NAV_* delivered NAV_X, NAV_Y ({sorted(keys)})")
    check("OTHER" not in keys, "wildcard did not deliver OTHER")
    # DB_CLIENTS lists the clients; DB_TIME and DB_UPTIME are doubles.
    dbw = client("dbwatch", regs=[("DB_CLIENTS", 0), ("DB_TIME", 0), ("DB_UPTIME", 0)])
    got = []
    wait(lambda: {"DB_CLIENTS", "DB_TIME", "DB_UPTIME"} <= {m.key() for m in collect(dbw, got)})
    cl = [m.string() for m in got if m.key() == "DB_CLIENTS"]
    check(bool(cl) and all(n + "," in cl[-1] for n in ["pub", "plain", "slow", "wild"]), f"DB_CLIENTS lists the clients ({cl[-1:]})")
    check(any(m.key() == "DB_TIME" and m.is_double() for m in got), "DB_TIME is a double")
    check(any(m.key() == "DB_UPTIME" and m.is_double() and m.double() >= 0 for m in got), "DB_UPTIME is a double >= 0")
    for c in [pub, plain, slow, wild, dbw]:
        c.close(True)


def warp():
    pymoos.set_moos_timewarp(WARP)
    a = client("wa")
    b = client("wb", regs=[("W", 0), ("DB_TIME", 0)])
    check(a.wait_until_connected(30000) and b.wait_until_connected(30000), "connected under warp")
    check(registered(b, "wb", a), "wb registered")
    a.notify("W", 1.0, -1)
    got = []
    wait(lambda: {"W", "DB_TIME"} <= {m.key() for m in collect(b, got)})
    now = pymoos.time()
    unwarped = time.time()
    for m in got:
        check(abs(m.time() - now) < 5.0 * WARP, f"{m.key()} time {m.time():.1f} agrees with the client's MOOS time {now:.1f}")
    check(abs(now - unwarped * WARP) < 5.0 * WARP, "MOOS time is Unix time x warp")
    dbt = [m.double() for m in got if m.key() == "DB_TIME"]
    check(bool(dbt) and abs(dbt[-1] - now) < 5.0 * WARP, "DB_TIME agrees with the client's warped clock")
    a.close(True)
    b.close(True)


{"basic": basic, "warp": warp}[SCENARIO]()
print("FAILURES: %d" % len(failures))
sys.exit(1 if failures else 0)
