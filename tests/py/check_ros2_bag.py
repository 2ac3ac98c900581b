"""Read a ROS 2 bag that `usim replay --ros2` wrote with two independent
readers, decoding every message (tests/ros2_bag.rs):

* rosbags (AnyReader on the bare .mcap, the Kilted type store for the
  message definitions; the bag's own ros2msg schemas are parsed too),
* mcap-ros2-support (the MCAP library's ROS 2 decoder, which reads the
  ros2msg schemas the bag carries and nothing else).

Prints one JSON object: per reader the messages decoded per topic, and
from rosbags the last odometry pose and stamp of each vehicle.
"""
import json
import sys
from pathlib import Path

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

path = Path(sys.argv[1])
out = {"rosbags": {}, "mcap_ros2": {}, "types": {}, "last_odom": {}, "profile": None}

with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_KILTED)) as r:
    for conn, t, raw in r.messages():
        m = r.deserialize(raw, conn.msgtype)
        out["rosbags"][conn.topic] = out["rosbags"].get(conn.topic, 0) + 1
        out["types"][conn.topic] = conn.msgtype
        if conn.msgtype == "nav_msgs/msg/Odometry":
            p, q = m.pose.pose.position, m.pose.pose.orientation
            out["last_odom"][conn.topic] = {
                "stamp": [m.header.stamp.sec, m.header.stamp.nanosec],
                "log_time": t,
                "position": [p.x, p.y, p.z],
                "orientation": [q.x, q.y, q.z, q.w],
                "frame": m.header.frame_id,
                "child": m.child_frame_id,
            }

with open(path, "rb") as f:
    reader = make_reader(f, decoder_factories=[DecoderFactory()])
    out["profile"] = reader.get_header().profile
    for schema, channel, message, decoded in reader.iter_decoded_messages():
        assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
        out["mcap_ros2"][channel.topic] = out["mcap_ros2"].get(channel.topic, 0) + 1

print(json.dumps(out))
