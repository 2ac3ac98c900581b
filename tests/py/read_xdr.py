"""Read an NMEA 0183 file with pynmea2 (the oracle) and print, as JSON, each
XDR sentence's transducers with the UTC time of the GGA before it:
[{"t": seconds of the day, "PTCH": deg, "ROLL": deg, "HEAVE": m,
  "types": [...], "units": [...]}, ...]. tests/environment_outputs.rs
compares them with the replay's CSV.

Usage: read_xdr.py FILE.nmea
"""
import json
import sys

import pynmea2

out, t = [], None
with open(sys.argv[1], encoding="ascii") as f:
    for line in f:
        line = line.strip()
        if not line.startswith("$"):
            continue
        msg = pynmea2.parse(line, check=True)
        if isinstance(msg, pynmea2.types.talker.GGA):
            ts = msg.timestamp
            t = ts.hour * 3600 + ts.minute * 60 + ts.second + ts.microsecond / 1e6
        elif isinstance(msg, pynmea2.types.talker.XDR):
            rec = {"t": t, "types": [], "units": []}
            for i in range(msg.num_transducers):
                tr = msg.get_transducer(i)
                rec[tr.id] = float(tr.value)
                rec["types"].append(tr.type)
                rec["units"].append(tr.units)
            out.append(rec)
print(json.dumps(out))
