"""Check a `usim replay --nmea` file with pynmea2 and pyais against the
replay's own per-vehicle CSVs (tests/nmea_oracles.rs).

usage: check_nmea.py RUN.nmea CSV_DIR START_TIME OWN MMSI_JSON

MMSI_JSON maps each vehicle name to {"mmsi": n or null, "length": m,
"beam": m, "ship_type": n}; a null MMSI is computed here from the rule of
docs/nmea.md (200000000 + FNV-1a-32(name) mod 1000000).

Every line must parse (pynmea2 with check=True: the checksum is verified;
pyais for the AIS messages, fragments joined), and each field must equal
the vehicle's state within the precision of its sentence. Prints OK and
counts on success; exits 1 with the first mismatch otherwise.
"""
import csv
import datetime
import json
import math
import os
import sys

import pynmea2
from pyais import decode

KN = 3600.0 / 1852.0


def fnv_mmsi(name):
    h = 0x811C9DC5
    for b in name.encode("utf-8"):
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return 200000000 + h % 1000000


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def near(a, b, tol):
    return abs(a - b) <= tol


def ang_near(a, b, tol):
    d = (a - b + 540.0) % 360.0 - 180.0
    return abs(d) <= tol


def half_up(x):
    return int(math.floor(x + 0.5))


def main():
    path, csv_dir, start, own, ids = sys.argv[1:6]
    start = float(start)
    ids = json.loads(ids)
    rows = {}
    for name in ids:
        with open(os.path.join(csv_dir, name + ".csv")) as f:
            rows[name] = [{k: float(v) if v not in ("", "nan") else math.nan for k, v in r.items()} for r in csv.DictReader(f)]
    by_t = {n: {round(r["t"], 6): r for r in rs} for n, rs in rows.items()}
    mmsi_of = {n: (v["mmsi"] if v["mmsi"] is not None else fnv_mmsi(n)) for n, v in ids.items()}
    name_of = {m: n for n, m in mmsi_of.items()}
    if len(name_of) != len(mmsi_of):
        fail("two vehicles share an MMSI")
    counts = {}
    window = None  # mission time of the last own-ship GGA
    frags = []
    lines = open(path, newline="").read().split("\r\n")
    if lines[-1] != "":
        fail("the file does not end in CRLF")
    for line in lines[:-1]:
        if len(line) > 82:
            fail(f"longer than 82 characters: {line}")
        if line.startswith("$"):
            m = pynmea2.parse(line, check=True)
            kind = m.sentence_type
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("GGA", "RMC", "ZDA"):
                ts = m.timestamp
                secs = ts.hour * 3600 + ts.minute * 60 + ts.second + ts.microsecond / 1e6
                day0 = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
                t = round(day0.timestamp() + secs - start, 6)
                if kind == "GGA":
                    window = t
                elif t != window:
                    fail(f"{kind} time {t} is not the GGA's {window}: {line}")
            r = by_t[own].get(window)
            if r is None:
                fail(f"no CSV row of {own} at t={window} for {line}")
            if kind == "GGA":
                if m.gps_qual != 8:
                    fail(f"fix quality {m.gps_qual}, want 8: {line}")
                if not (near(m.latitude, r["lat"], 1e-7) and near(m.longitude, r["lon"], 1e-7)):
                    fail(f"GGA position {m.latitude},{m.longitude} != {r['lat']},{r['lon']}")
                if not near(float(m.altitude), -r["depth"], 0.0051):
                    fail(f"GGA altitude {m.altitude} != -depth {r['depth']}")
            elif kind == "RMC":
                if m.status != "A" or m.mode_indicator != "S":
                    fail(f"RMC status/mode: {line}")
                d = datetime.datetime.fromtimestamp(start + window, datetime.timezone.utc).date()
                if m.datestamp != d:
                    fail(f"RMC date {m.datestamp} != {d}")
                if not (near(m.latitude, r["lat"], 1e-7) and near(m.longitude, r["lon"], 1e-7)):
                    fail(f"RMC position: {line}")
                if not near(m.spd_over_grnd, r["sog"] * KN, 0.0051):
                    fail(f"RMC SOG {m.spd_over_grnd} kn != {r['sog'] * KN}")
                if not ang_near(m.true_course, r["hog"], 0.051):
                    fail(f"RMC COG {m.true_course} != {r['hog']}")
            elif kind == "VTG":
                if m.faa_mode != "S":
                    fail(f"VTG mode: {line}")
                if not (near(float(m.spd_over_grnd_kts), r["sog"] * KN, 0.0051) and near(float(m.spd_over_grnd_kmph), r["sog"] * 3.6, 0.0051)):
                    fail(f"VTG speed: {line} vs {r['sog']} m/s")
                if not ang_near(float(m.true_track), r["hog"], 0.051):
                    fail(f"VTG COG: {line} vs {r['hog']}")
            elif kind == "HDT":
                if not ang_near(float(m.heading), r["heading"], 0.051):
                    fail(f"HDT {m.heading} != {r['heading']}")
            elif kind == "ZDA":
                d = datetime.datetime.fromtimestamp(start + window, datetime.timezone.utc)
                if (int(m.day), int(m.month), int(m.year)) != (d.day, d.month, d.year):
                    fail(f"ZDA date: {line} vs {d}")
            elif kind == "DPT":
                if not near(float(m.depth), r["altitude"], 0.0051) or not near(float(m.offset), r["depth"], 0.0051):
                    fail(f"DPT {line} vs altitude {r['altitude']} depth {r['depth']}")
            else:
                fail(f"unexpected sentence {line}")
        elif line.startswith("!"):
            f = line.split(",")
            frags.append(line.encode())
            if f[1] != f[2]:
                continue
            msg = decode(*frags)
            frags = []
            vdo = line.startswith("!AIVDO")
            name = name_of.get(msg.mmsi)
            if name is None:
                fail(f"unknown MMSI {msg.mmsi}: {line}")
            if vdo != (name == own):
                fail(f"{name}: VDO/VDM wrong: {line}")
            key = f"type{msg.msg_type}"
            counts[key] = counts.get(key, 0) + 1
            v = ids[name]
            if msg.msg_type == 5:
                if msg.shipname != name.upper():
                    fail(f"name {msg.shipname!r} != {name.upper()!r}")
                ln, bm = half_up(v["length"]), half_up(v["beam"])
                if (msg.to_bow + msg.to_stern, msg.to_port + msg.to_starboard) != (ln, bm):
                    fail(f"{name}: dimensions {msg.asdict()} != {ln} x {bm}")
                if int(msg.ship_type) != v["ship_type"]:
                    fail(f"{name}: ship type {msg.ship_type} != {v['ship_type']}")
                continue
            if msg.msg_type != 1:
                fail(f"unexpected type {msg.msg_type}")
            # The report is of one step in [window, window + 1] (the lines of
            # vehicles before the own ship in the mission come before its GGA).
            w = window if window is not None else 0.0
            cands = [r for r in rows[name] if w - 1e-6 <= r["t"] <= w + 1 + 1e-6]
            ok = False
            for r in cands:
                sec = int(round((start + r["t"]) * 100) // 100 % 60)
                sog = r["sog"] * KN
                if (msg.second == sec
                        and near(msg.lat, r["lat"], 1.4e-6) and near(msg.lon, r["lon"], 1.4e-6)
                        and near(msg.speed, sog, 0.051)
                        and ang_near(msg.course, r["hog"], 0.051)
                        and ang_near(msg.heading, r["heading"], 0.5)):
                    ok = True
                    break
            if not ok:
                fail(f"{name}: no state in t=[{w},{w + 1}] matches {msg.asdict()}")
    if frags:
        fail("unfinished multi-fragment message at the end")
    print("OK", json.dumps(counts, sort_keys=True))


main()
