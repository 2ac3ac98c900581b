//! ROS 2, sans-IO: the CDR encoding ([`cdr`]), the message types usim
//! publishes and reads ([`msg`]), the names of topics, frames and DDS types
//! ([`names`]), their QoS ([`qos`]), lock-step rules ([`lockstep`]), and the mapping between usim's state
//! and commands and those messages ([`convert`]). No socket, clock or file
//! here: the DDS participant (`crate::dds`) and the ROS 2 bag writer
//! (`crate::replay::mcap`) are the shells over it (docs/ros2.md).
pub mod cdr;
pub mod convert;
pub mod lockstep;
pub mod msg;
pub mod names;
pub mod qos;
