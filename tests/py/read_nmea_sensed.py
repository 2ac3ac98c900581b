"""Read a `usim replay --nmea` file of an own ship with `[sensors]` with
pynmea2 and pyais, next to the replay's CSV of that ship (its true state),
for tests/nmea_oracles.rs.

usage: read_nmea_sensed.py RUN.nmea OWN.csv START_TIME

Prints one JSON object per own-ship report (the sentences of one mission
time `t`, from the GGA's UTC): the GGA's fix quality, satellites and HDOP
as written, the GGA position's error from the true lat/lon of the CSV row
at `t` in metres (east, north; WGS-84 radii of curvature), RMC status and
mode, RMC SOG minus the true SOG (knots), HDT minus the true heading
(degrees), and the AIS own-ship report's lat/lon as pyais decodes them.
All checks of these numbers are in the Rust test.
"""
import csv
import datetime
import json
import math
import sys

import pynmea2
from pyais import decode

A = 6378137.0
E2 = 6.69437999014e-3
KN = 3600.0 / 1852.0


def radii(lat_deg):
    s = math.sin(math.radians(lat_deg))
    w = 1.0 - E2 * s * s
    return A * (1.0 - E2) / w ** 1.5, A / math.sqrt(w)


def num(v):
    return float(v) if v not in ("", "nan") else math.nan


def main():
    path, csv_path, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(csv_path) as f:
        rows = {round(num(r["t"]), 6): {k: num(v) for k, v in r.items()} for r in csv.DictReader(f)}
    day0 = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    out = []
    cur = None
    for line in open(path, newline="").read().split("\r\n"):
        if line.startswith("$"):
            m = pynmea2.parse(line, check=True)
            kind = m.sentence_type
            if kind == "GGA":
                ts = m.timestamp
                secs = ts.hour * 3600 + ts.minute * 60 + ts.second + ts.microsecond / 1e6
                t = round(day0.timestamp() + secs - start, 6)
                r = rows[t]
                cur = {"t": t, "qual": m.gps_qual, "sats": m.num_sats, "hdop": m.horizontal_dil}
                if m.lat:
                    mr, nr = radii(r["lat"])
                    cur["err_n"] = math.radians(m.latitude - r["lat"]) * mr
                    cur["err_e"] = math.radians(m.longitude - r["lon"]) * nr * math.cos(math.radians(r["lat"]))
                else:
                    cur["lat_field"] = m.lat
                out.append(cur)
            elif kind == "RMC" and cur is not None:
                r = rows[cur["t"]]
                cur["rmc_status"] = m.status
                cur["rmc_mode"] = m.mode_indicator
                cur["rmc_lat_field"] = m.lat
                if m.spd_over_grnd is not None:
                    cur["sog_err_kn"] = m.spd_over_grnd - r["sog"] * KN
            elif kind == "HDT" and cur is not None and m.heading:
                r = rows[cur["t"]]
                cur["hdg_err"] = (float(m.heading) - r["heading"] + 540.0) % 360.0 - 180.0
        elif line.startswith("!AIVDO,1,1") and cur is not None:
            msg = decode(line.encode())
            if msg.msg_type == 1:
                cur["ais_lat"] = msg.lat
                cur["ais_lon"] = msg.lon
    for o in out:
        print(json.dumps(o))


main()
