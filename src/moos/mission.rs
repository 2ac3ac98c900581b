//! The mission-wide keys of a `.moos` file that a MOOSDB and every MOOS
//! app read (`ServerHost`, `ServerPort`, `Community`, `MOOSTimeWarp`,
//! `ClientTimeout`). Sans-IO: a function of the text. MOOS's reading rules:
//! blanks removed, `//` starts a comment, keys case-insensitive, the value
//! after the first `=`; only lines outside `ProcessConfig` blocks count.

/// Default MOOSDB port (`DEFAULT_MOOS_SERVER_PORT`).
pub const DEFAULT_PORT: u16 = 9000;
/// Largest time warp MOOS allows (`MAX_TIME_WARP`).
pub const MAX_TIME_WARP: f64 = 400.0;

/// The mission-wide settings.
#[derive(Debug, Clone, PartialEq)]
pub struct MissionGlobals {
    /// `ServerHost` (default `localhost`).
    pub server_host: String,
    /// `ServerPort` (default 9000).
    pub server_port: u16,
    /// `Community` (default `MOOS`... usim uses `"usim"` when absent).
    pub community: Option<String>,
    /// `MOOSTimeWarp` (default 1, at most 400).
    pub time_warp: f64,
    /// `ClientTimeout`, real s (default 5).
    pub client_timeout: f64,
    /// Warnings with line numbers (values that were not understood).
    pub warnings: Vec<String>,
}

impl Default for MissionGlobals {
    fn default() -> Self {
        MissionGlobals {
            server_host: "localhost".into(),
            server_port: DEFAULT_PORT,
            community: None,
            time_warp: 1.0,
            client_timeout: 5.0,
            warnings: Vec::new(),
        }
    }
}

/// Read the mission-wide keys from the text of a `.moos` file.
pub fn read_globals(text: &str) -> MissionGlobals {
    let mut g = MissionGlobals::default();
    let mut depth = 0usize;
    let mut pending_block = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line: String = raw
            .split("//")
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
            .collect();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('{') {
            depth += 1;
            pending_block = false;
            continue;
        }
        if line.starts_with('}') {
            depth = depth.saturating_sub(1);
            continue;
        }
        if depth > 0 || pending_block {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let num = |what: &str, g: &mut MissionGlobals| -> Option<f64> {
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Some(x),
                _ => {
                    g.warnings
                        .push(format!("line {n}: {what} = {v:?} is not a number; ignored"));
                    None
                }
            }
        };
        match k.to_ascii_lowercase().as_str() {
            "processconfig" => {
                if v.ends_with('{') {
                    depth += 1;
                } else {
                    pending_block = true;
                }
            }
            "serverhost" if !v.is_empty() => g.server_host = v.to_string(),
            "serverport" => match v.parse::<u16>() {
                Ok(p) if p > 0 => g.server_port = p,
                _ => g.warnings.push(format!(
                    "line {n}: ServerPort = {v:?} is not a port; using {}",
                    g.server_port
                )),
            },
            "community" if !v.is_empty() => g.community = Some(v.to_string()),
            "moostimewarp" => {
                if let Some(w) = num("MOOSTimeWarp", &mut g) {
                    if w > 0.0 && w <= MAX_TIME_WARP {
                        g.time_warp = w;
                    } else {
                        g.warnings.push(format!(
                            "line {n}: MOOSTimeWarp = {v} is outside (0, {MAX_TIME_WARP}]; using 1"
                        ));
                    }
                }
            }
            "clienttimeout" => {
                if let Some(t) = num("ClientTimeout", &mut g) {
                    if t > 0.0 {
                        g.client_timeout = t;
                    }
                }
            }
            _ => {}
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_outside_blocks_only() {
        let g = read_globals(
            "ServerHost = localhost\nServerPort = 9123 // db\nCommunity = alpha\n\
             MOOSTimeWarp = 10\nProcessConfig = uSimMarine\n{\n ServerPort = 1\n Community = x\n}\n\
             ClientTimeout = 2.5\nMOOSTimeWarp = 1000\n",
        );
        assert_eq!(g.server_port, 9123);
        assert_eq!(g.community.as_deref(), Some("alpha"));
        assert_eq!(g.time_warp, 10.0);
        assert_eq!(g.client_timeout, 2.5);
        assert_eq!(g.warnings.len(), 1);
        assert!(g.warnings[0].starts_with("line 11"));
    }
}
