//! The actuators a setpoint can address and their MOOS names: one home
//! below both the model (which moves them) and the setpoint shaping of
//! `interp` (which smooths their setpoints).

/// The actuators a setpoint can address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Actuator {
    /// `DESIRED_THRUST`, percent.
    Thrust,
    /// `DESIRED_RUDDER`, percent.
    Rudder,
    /// `DESIRED_ELEVATOR`, percent.
    Elevator,
    /// `DESIRED_THRUST_L`, percent.
    ThrustL,
    /// `DESIRED_THRUST_R`, percent.
    ThrustR,
}

impl Actuator {
    /// All actuators, in a fixed order.
    pub const ALL: [Actuator; 5] = [
        Actuator::Thrust,
        Actuator::Rudder,
        Actuator::Elevator,
        Actuator::ThrustL,
        Actuator::ThrustR,
    ];

    /// The MOOS variable name.
    pub fn name(self) -> &'static str {
        match self {
            Actuator::Thrust => "DESIRED_THRUST",
            Actuator::Rudder => "DESIRED_RUDDER",
            Actuator::Elevator => "DESIRED_ELEVATOR",
            Actuator::ThrustL => "DESIRED_THRUST_L",
            Actuator::ThrustR => "DESIRED_THRUST_R",
        }
    }

    /// Parse a MOOS variable name.
    pub fn from_name(name: &str) -> Option<Actuator> {
        Actuator::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Index in [`Actuator::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}
