"""Decode NMEA 0183 / AIS lines with pynmea2 and pyais (tests/nmea_oracles.rs).

usage: decode_nmea.py LINES_FILE

Prints one JSON object per sentence or whole AIS message. pynmea2 parses
with check=True (a missing or wrong checksum fails), pyais joins the
fragments of multi-fragment messages. Exits 1 on the first line either
library refuses.
"""
import json
import sys

import pynmea2
from pyais import decode


def main():
    frags = []
    for line in open(sys.argv[1]).read().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            if line.startswith("$"):
                m = pynmea2.parse(line, check=True)
                out = {"s": m.sentence_type}
                for name in ("latitude", "longitude", "gps_qual", "spd_over_grnd", "true_course",
                             "heading", "status", "mode_indicator", "faa_mode", "altitude"):
                    if hasattr(m, name):
                        v = getattr(m, name)
                        out[name] = v if isinstance(v, (int, float, str)) or v is None else str(v)
                if m.sentence_type in ("GGA", "RMC", "ZDA") and m.timestamp is not None:
                    out["time"] = m.timestamp.isoformat()
                print(json.dumps(out))
            elif line.startswith("!"):
                f = line.split(",")
                frags.append(line.encode())
                if f[1] != f[2]:
                    continue
                msg = decode(*frags)
                frags = []
                d = {k: (v if isinstance(v, (int, float, str)) or v is None else int(v))
                     for k, v in msg.asdict().items() if not isinstance(v, bytes)}
                d["s"] = "VDO" if line.startswith("!AIVDO") else "VDM"
                print(json.dumps(d))
            else:
                raise ValueError("neither $ nor !")
        except Exception as e:  # noqa: BLE001 - report any refusal with its line
            print(f"REFUSED {line!r}: {type(e).__name__}: {e}")
            sys.exit(1)


main()
