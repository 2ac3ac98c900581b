//! The live shell: MQTT bridge for one vehicle process, embedded broker, tools.
