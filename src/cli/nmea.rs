//! `usim nmea`: live vehicles as NMEA 0183 and AIS over UDP and TCP
//! (docs/nmea.md).
use std::path::PathBuf;
use std::process::ExitCode;

use super::live::{addr, addrs, ToolArgs};
use crate::live::nmea_out::NmeaOutOptions;
use crate::mqtt::nmea_bridge::{self, NmeaOptions};
use crate::nmea::{check_talker, Identity, Options, Selection};

pub use crate::live::nmea_out::{DEFAULT_MAX_RATE, STATIC_WARMUP_S};

/// Arguments of `usim nmea`.
#[derive(Debug, clap::Args)]
#[command(
    group(clap::ArgGroup::new("which").required(true).args(["vehicles", "all"])),
    group(clap::ArgGroup::new("out").required(true).multiple(true).args(["udp", "tcp"])),
    after_help = "Examples:\n  usim nmea --all --own alpha --udp 127.0.0.1:10110          # OpenCPN: UDP input on port 10110\n  usim nmea --all --own alpha --tcp 0.0.0.0:10110 --config configs/kayak.toml\n  gpsd -N -n udp://127.0.0.1:10110 & gpspipe -w              # gpsd reads it\n\nOwn ship: GGA, RMC, VTG, HDT, ZDA (DPT under water, XDR in a sea) and !AIVDO; every other vehicle: !AIVDM\ntype 1 at the class A intervals and type 5 at first sight, after 30 s, 1, 2 and 4 min, then every\n6 min (--static-interval); a TCP client gets every vehicle's type 5 when it connects.\nVehicles need a lat/lon origin.\n\nLimits: 4096 vehicles and 10000 AIS input targets (a new one makes it forget the one heard\nleast recently), 64 TCP clients and 8 per IP address (a new connection always gets in: the\nlongest-connected client of its own address, or when all 64 are taken of the address holding\nthe most, is closed), 1024 queued reports per TCP client (a client further behind is dropped)."
)]
pub struct NmeaArgs {
    /// Vehicles to serve, comma-separated.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub vehicles: Vec<String>,
    /// Serve every vehicle under the topic root.
    #[arg(long)]
    pub all: bool,
    /// The own ship (NMEA sentences and !AIVDO); the others are AIS targets.
    #[arg(long, value_name = "NAME")]
    pub own: Option<String>,
    /// Send to this UDP address (repeatable).
    #[arg(long, value_name = "HOST:PORT")]
    pub udp: Vec<String>,
    /// Allow broadcast UDP destinations (off by default).
    #[arg(long)]
    pub broadcast: bool,
    /// Serve NMEA to TCP clients on this address (port 0: any free port).
    #[arg(long, value_name = "HOST:PORT")]
    pub tcp: Option<String>,
    /// Vehicle configs for AIS static data (`mmsi`, `platform_length`,
    /// `platform_beam`, `ais_ship_type`), comma-separated.
    #[arg(long, value_name = "A.toml,B.toml", value_delimiter = ',')]
    pub config: Vec<PathBuf>,
    /// Sentences to send, comma-separated (default: all of GGA,RMC,VTG,HDT,ZDA,DPT,VDO,VDM).
    #[arg(long, value_name = "GGA,RMC,...", value_delimiter = ',')]
    pub sentences: Vec<String>,
    /// Talker id of GGA, RMC, VTG, ZDA.
    #[arg(long, value_name = "XX", default_value = "GP")]
    pub talker: String,
    /// Talker id of HDT and DPT.
    #[arg(long, value_name = "XX", default_value = "II")]
    pub instrument_talker: String,
    /// Own-ship sentences per second (at most one set per report).
    #[arg(long, value_name = "HZ", default_value_t = 1.0)]
    pub own_rate: f64,
    /// AIS position reports every S seconds instead of the class A intervals.
    #[arg(long, value_name = "S")]
    pub ais_interval: Option<f64>,
    /// AIS static data (type 5) every S seconds.
    #[arg(long, value_name = "S", default_value_t = 360.0)]
    pub static_interval: f64,
    /// Most sentences per second sent; more are dropped and counted.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RATE)]
    pub max_rate: f64,
    /// Listen for AIS (!AIVDM) on this UDP address and publish each target
    /// to {root}/ais/{MMSI} as JSON.
    #[arg(long, value_name = "HOST:PORT")]
    pub ais_in: Option<String>,
    /// Stop after S seconds (default: on Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    #[command(flatten)]
    pub tool: ToolArgs,
}

fn positive(what: &str, v: f64) -> anyhow::Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        anyhow::bail!("{what} must be a positive number, got {v}")
    }
}

/// Run `usim nmea`.
pub fn run(a: NmeaArgs) -> anyhow::Result<ExitCode> {
    check_talker(&a.talker).map_err(|e| anyhow::anyhow!("--talker: {e}"))?;
    check_talker(&a.instrument_talker).map_err(|e| anyhow::anyhow!("--instrument-talker: {e}"))?;
    let sentences = if a.sentences.is_empty() {
        Selection::default()
    } else {
        Selection::parse(&a.sentences).map_err(|e| anyhow::anyhow!("--sentences: {e}"))?
    };
    let engine = Options {
        talker: a.talker.clone(),
        instrument_talker: a.instrument_talker.clone(),
        sentences,
        own_interval_s: 1.0 / positive("--own-rate", a.own_rate)?,
        ais_interval_s: a
            .ais_interval
            .map(|s| positive("--ais-interval", s))
            .transpose()?,
        static_interval_s: positive("--static-interval", a.static_interval)?,
        static_warmup_s: STATIC_WARMUP_S,
    };
    let mut identities = Vec::new();
    for path in &a.config {
        let cfg = crate::config::load_vehicle(path)?;
        identities.push(Identity::of_config(&cfg));
    }
    let duration = super::live::optional_seconds(a.duration, "--duration")?;
    let out = NmeaOutOptions {
        own: a.own,
        identities,
        engine,
        udp: addrs("--udp", &a.udp)?,
        broadcast: a.broadcast,
        tcp: a.tcp.as_deref().map(|s| addr("--tcp", s)).transpose()?,
        max_rate: positive("--max-rate", a.max_rate)?,
        flag_prefix: "",
    };
    let opts = NmeaOptions {
        conn: a.tool.connection()?,
        vehicles: (!a.all).then_some(a.vehicles),
        out,
        ais_in: a
            .ais_in
            .as_deref()
            .map(|s| addr("--ais-in", s))
            .transpose()?,
        duration,
    };
    let rt = super::live::runtime()?;
    let s = rt.block_on(nmea_bridge::run(&opts, |tcp| {
        let mut to: Vec<String> = opts.out.udp.iter().map(|a| format!("udp://{a}")).collect();
        if let Some(t) = tcp {
            to.push(format!("tcp://{t}"));
        }
        eprintln!(
            "usim: NMEA/AIS of {} from {} to {}",
            match &opts.vehicles {
                Some(v) => v.join(", "),
                None => "every vehicle".into(),
            },
            opts.conn.url,
            to.join(" and ")
        );
    }))?;
    eprintln!(
        "usim: {} reports, {} lines sent, {} dropped by --max-rate, {} UDP errors, {} slow TCP clients dropped, {} TCP clients closed to make room, {} vehicles refused, {} forgotten, {} AIS targets published ({} input lines refused, {} never published: MQTT queue full), {} AIS targets forgotten",
        s.reports, s.lines, s.rate_dropped, s.udp_errors, s.slow_clients, s.displaced_clients, s.refused, s.forgotten, s.ais_published, s.ais_bad, s.ais_unpublished, s.ais_forgotten
    );
    Ok(ExitCode::SUCCESS)
}
