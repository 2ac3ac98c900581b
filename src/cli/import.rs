//! `usim import-moos`: a MOOS `.moos` file's uSimMarine block as a usim
//! vehicle config (docs/formats.md §8). The conversion is
//! [`crate::moos_import::import`]; this module reads and writes the files.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::moos_import;

/// Arguments of `usim import-moos`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "MOOS's rules: blanks removed, keys case-insensitive, `//` comments; \
LatOrigin/LongOrigin and Community come from the mission file.\n\
Every line that cannot be carried over is reported with its line number (stderr).\n\n\
Example:\n  usim import-moos alpha.moos -o configs/alpha.toml\n  usim run configs/alpha.toml"
)]
pub struct ImportArgs {
    /// The MOOS mission file (`.moos`).
    pub file: PathBuf,
    /// The ProcessConfig block to import: uSimMarine or uSimMarineV22
    /// (default: the first of them in the file).
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,
    /// Write the config here (default: stdout).
    #[arg(short, long, value_name = "OUT.toml")]
    pub output: Option<PathBuf>,
}

/// Text from the MOOS file with control and bidi characters escaped,
/// so a file cannot rewrite the terminal (issue 20 item 24).
fn esc(text: &str) -> std::borrow::Cow<'_, str> {
    crate::text::escape_control(text)
}

/// Run `usim import-moos`.
pub fn run(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let text = crate::input_file::read_text(&a.file, crate::input_file::MAX_TEXT_BYTES)?;
    let imported = moos_import::import(&text, a.process.as_deref())
        .map_err(|e| anyhow::anyhow!("{}: {}", a.file.display(), esc(&e.to_string())))?;
    for u in &imported.unmapped {
        eprintln!(
            "usim: {}:{}: key `{}`: not imported: {}",
            a.file.display(),
            u.line,
            esc(&u.key),
            esc(&u.reason)
        );
    }
    // The result must load: check it as `usim run` will, and show its warnings.
    let shown = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("imported.toml"));
    let cfg = crate::config::parse_vehicle(&shown, &imported.toml).map_err(|e| {
        anyhow::anyhow!("the imported config does not load ({e}); please report this")
    })?;
    for w in &cfg.warnings {
        eprintln!("usim: warning: {}", esc(w));
    }
    match &a.output {
        Some(out) => {
            std::fs::write(out, &imported.toml)
                .with_context(|| format!("cannot write {}", out.display()))?;
            eprintln!(
                "usim: wrote {} (ProcessConfig = {}; {} line(s) not imported)",
                out.display(),
                esc(&imported.process),
                imported.unmapped.len()
            );
        }
        None => print!("{}", imported.toml),
    }
    Ok(ExitCode::SUCCESS)
}
