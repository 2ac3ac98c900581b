"""Oracle for usim's ROS 2 CDR codecs (tests/ros2_codec.rs).

Reads a JSON list of cases {"type": "pkg/msg/Type", "fields": {...},
"cdr": "hex", "padding": [byte offsets]} from the file named on the
command line. For each case, ROS 2's own serializer
(rclpy.serialization.serialize_message, the C typesupport of the message
package) builds the message from the fields and must give the same bytes
as usim, except at the alignment padding (which Fast CDR leaves unset, so
it holds whatever the buffer held; usim writes zeros there); and rclpy must
decode usim's bytes back into the same fields. tf2_msgs has no wheel on PyPI: its cases go
through rosbags' CDR serializer instead (its Kilted type store).
Prints "ok N" on success, exits 1 with the differences otherwise.
"""
import importlib
import json
import math
import sys

from rclpy.serialization import deserialize_message, serialize_message


def ros_class(name):
    pkg, kind, ty = name.split("/")
    # A service's request or response (std_srvs/srv/Trigger_Response).
    return getattr(importlib.import_module(f"{pkg}.{kind}"), ty)


def fill(msg, fields):
    types = msg.get_fields_and_field_types()
    for k, v in fields.items():
        if k not in types:
            raise KeyError(f"{type(msg).__name__} has no field {k}")
        cur = getattr(msg, k)
        if isinstance(v, dict):
            fill(cur, v)
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            # A sequence of messages: "sequence<pkg/Type>" names the element.
            elem = types[k].split("<", 1)[1].rstrip(">")
            pkg, ty = elem.split("/")
            cls = getattr(importlib.import_module(f"{pkg}.msg"), ty)
            setattr(msg, k, [fill(cls(), x) for x in v])
        else:
            setattr(msg, k, v)
    return msg


def to_plain(msg):
    if hasattr(msg, "get_fields_and_field_types"):
        return {k: to_plain(getattr(msg, k)) for k in msg.get_fields_and_field_types()}
    if hasattr(msg, "__len__") and not isinstance(msg, str):
        return [to_plain(x) for x in msg]
    if hasattr(msg, "item"):  # numpy scalar
        return msg.item()
    return msg


def same(a, b, path=""):
    """Exact equality, floats by bits (so -0.0 and NaN payloads count)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in same(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} elements != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in same(x, y, f"{path}[{i}]")]
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.copysign(1, fa) != math.copysign(1, fb) or not (fa == fb or (fa != fa and fb != fb)):
            return [f"{path}: {fa!r} != {fb!r}"]
        return []
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def rosbags_case(case):
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    decoded = ts.deserialize_cdr(bytes.fromhex(case["cdr"]), case["type"])

    def plain(m):
        if hasattr(m, "__dataclass_fields__"):
            return {k: plain(getattr(m, k)) for k in m.__dataclass_fields__ if k != "__msgtype__"}
        if isinstance(m, list):
            return [plain(x) for x in m]
        if hasattr(m, "tolist"):
            return m.tolist()
        return m

    out = same(plain(decoded), case["fields"], case["type"])
    again = ts.serialize_cdr(decoded, case["type"]).hex()
    if again != case["cdr"]:
        out.append(f"{case['type']}: rosbags writes {again}, usim {case['cdr']}")
    return out


def main():
    cases = json.load(open(sys.argv[1]))
    bad = []
    for case in cases:
        if case["type"].startswith("tf2_msgs/"):
            bad += rosbags_case(case)
            continue
        cls = ros_class(case["type"])
        ref = bytearray(serialize_message(fill(cls(), case["fields"])))
        ours = bytes.fromhex(case["cdr"])
        for i in case["padding"]:
            if i < len(ref):
                ref[i] = ours[i]
        ref = ref.hex()
        if ref != case["cdr"]:
            bad.append(f"{case['type']}: rclpy writes\n  {ref}\nusim writes\n  {case['cdr']}")
        back = to_plain(deserialize_message(bytes.fromhex(case["cdr"]), cls))
        bad += same(back, case["fields"], case["type"])
    if bad:
        print("\n".join(bad))
        sys.exit(1)
    print(f"ok {len(cases)}")


main()
