#!/usr/bin/env python3
"""Read a `usim replay -o run.mcap` file with the Python `mcap` package
(pip install mcap) and check it against the CSV of the same mission:

    check_mcap.py RUN.mcap RUN.csv MISSION.toml

Checks: every channel has a JSON schema and JSON messages; the state
channel has one message per CSV row and its fields equal the row's, by
column name (null = nan); the pose, tf (and location if lat/lon exist)
channels have one message per row; each posted variable has its own
channel with as many messages as the mission posts by the end of the run.
Prints OK and exits 0, or prints what differs and exits 1."""
import csv
import json
import math
import sys
try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # the CPython 3.10 venv of .ci/run
    import tomli as tomllib
from collections import defaultdict

from mcap.reader import make_reader


def main(mcap_path, csv_path, mission_path):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(mission_path, "rb") as f:
        mission = tomllib.load(f)
    errors = []
    by_topic = defaultdict(list)
    schemas = {}
    with open(mcap_path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        for ch in summary.channels.values():
            sc = summary.schemas[ch.schema_id]
            schemas[ch.topic] = sc.name
            if sc.encoding != "jsonschema" or ch.message_encoding != "json":
                errors.append(f"{ch.topic}: encodings {sc.encoding}/{ch.message_encoding}")
            json.loads(sc.data)
        for _schema, channel, message in reader.iter_messages(log_time_order=False):
            by_topic[channel.topic].append((message.log_time, json.loads(message.data)))

    state_topics = [t for t, s in schemas.items() if s == "usim.State"]
    if len(state_topics) != 1:
        errors.append(f"state channels: {state_topics}")
        return report(errors)
    vehicle = state_topics[0].split("/")[1]
    n = len(rows)
    for topic in ("/tf", f"/{vehicle}/state", f"/{vehicle}/pose"):
        if len(by_topic[topic]) != n:
            errors.append(f"{topic}: {len(by_topic[topic])} messages, CSV has {n} rows")
    fixes = sum(1 for r in rows if not math.isnan(float(r["lat"])))
    if len(by_topic.get(f"/{vehicle}/location", [])) != fixes:
        errors.append(f"location: {len(by_topic.get(f'/{vehicle}/location', []))} vs {fixes}")

    for r, (_, state) in zip(rows, by_topic[f"/{vehicle}/state"]):
        for col, text in r.items():
            want = float(text)
            got = state.get(col, "missing")
            if got == "missing":
                errors.append(f"k={r['k']}: no {col}")
            elif got is None:
                if not math.isnan(want):
                    errors.append(f"k={r['k']} {col}: null vs {text}")
            elif abs(got - want) > (5e-7 if col == "t" else 0.0):
                errors.append(f"k={r['k']} {col}: {got} vs {text}")
        if len(errors) > 20:
            break

    last_t = float(rows[-1]["t"])
    want_cmds = defaultdict(int)
    for p in mission.get("post", []):
        if float(p["t"]) <= last_t + 1e-9:
            want_cmds[p["var"].strip()] += 1
    got_cmds = {t.split("/cmd/")[1]: len(m) for t, m in by_topic.items() if "/cmd/" in t}
    if dict(want_cmds) != got_cmds:
        errors.append(f"commands: {got_cmds} vs mission {dict(want_cmds)}")
    return report(errors, f"{n} states, {sum(got_cmds.values())} commands, {len(schemas)} channels")


def report(errors, what=""):
    if errors:
        print("\n".join(errors[:20]))
        return 1
    print(f"OK {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
