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
    after_help = "The file is expanded as nsplug does first (#include with <tag>, #define, \
#ifdef/#ifndef/#elseifdef/#else/#endif, $(MACRO), %(MACRO), $(MACRO=DEFAULT)); \
an undefined macro is an error naming its file:line. Bounds: includes nest at most 32 \
deep; at most 1,000,000 lines and 64 MiB are read in all (an include counted each time \
it is read) and 16 MiB written.\n\
MOOS's rules: blanks removed, keys case-insensitive, `//` comments; \
LatOrigin/LongOrigin and Community come from the mission file; pNodeReporter's \
platform_type/platform_length are read. Another app's block (pMarinePIDV22) is read only \
with --pid-from, as uSimMarineV22 configures its PID in its own block.\n\
Every line that cannot be carried over is reported with its line number (stderr).\n\n\
Example:\n  usim import-moos meta_vehicle.moos -D VNAME=alpha -D START_POS=0,0 -o configs/alpha.toml\n  usim run configs/alpha.toml"
)]
pub struct ImportArgs {
    /// The MOOS mission file (`.moos`).
    pub file: PathBuf,
    /// The ProcessConfig block to import: uSimMarine or uSimMarineV22
    /// (default: the first of them in the file).
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,
    /// Also take the V22 embedded PID's settings from this block (e.g.
    /// pMarinePIDV22), for running the vehicle without that app: usim then
    /// closes the loop itself. Without it only the simulator's own block is
    /// read, as uSimMarineV22 does.
    #[arg(long, value_name = "BLOCK")]
    pub pid_from: Option<String>,
    /// Write the config here (default: stdout).
    #[arg(short, long, value_name = "OUT.toml")]
    pub output: Option<PathBuf>,
    /// Define an nsplug macro, as `nsplug FILE KEY=VALUE` does (repeatable):
    /// `$(KEY)` becomes VALUE, `%(KEY)` VALUE in upper case.
    #[arg(short = 'D', long = "define", value_name = "KEY=VALUE", value_parser = crate::nsplug::parse_define)]
    pub define: Vec<(String, String)>,
    /// Keep an undefined `$(MACRO)` as written (and report it) instead of
    /// refusing the file.
    #[arg(long)]
    pub keep_undefined: bool,
}

/// Text from the MOOS file with control and bidi characters escaped,
/// so a file cannot rewrite the terminal (issue 20 item 24).
fn esc(text: &str) -> std::borrow::Cow<'_, str> {
    crate::text::escape_control(text)
}

/// The `[obstacles]` table's `file` for an obstacle file the `.moos`
/// names `file` (relative to the `.moos`): kept as written when the config
/// lands in the `.moos` file's directory (or `file` is absolute), else the
/// file's absolute path, so the config finds it wherever it is written.
fn obstacle_file_for(a: &ImportArgs, file: &str) -> String {
    let here = |p: &std::path::Path| -> PathBuf {
        let d = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::canonicalize(&d).unwrap_or(d)
    };
    if std::path::Path::new(file).is_absolute() {
        return file.to_string();
    }
    let moos_dir = here(&a.file);
    let out_dir = here(
        a.output
            .as_deref()
            .unwrap_or(std::path::Path::new("imported.toml")),
    );
    if moos_dir == out_dir {
        return file.to_string();
    }
    let full = moos_dir.join(file);
    std::fs::canonicalize(&full)
        .unwrap_or(full)
        .to_string_lossy()
        .into_owned()
}

/// Run `usim import-moos`.
pub fn run(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let opts = crate::nsplug::Options {
        defines: a.define.clone(),
        keep_undefined: a.keep_undefined,
    };
    let expanded = crate::nsplug::preprocess_file(&a.file, &opts)
        .map_err(|e| anyhow::anyhow!("{}", esc(&e.to_string())))?;
    for n in &expanded.notes {
        eprintln!("usim: nsplug: {}", esc(n));
    }
    for k in &expanded.kept {
        eprintln!(
            "usim: {}:{}: undefined macro `{}` kept as written (--keep-undefined)",
            esc(&k.file),
            k.line,
            esc(&k.name)
        );
    }
    let imported = moos_import::import_with(
        &expanded.text,
        &moos_import::ImportOptions {
            block: a.process.as_deref(),
            pid_from: a.pid_from.as_deref(),
            ..Default::default()
        },
    )
    .map_err(|e| anyhow::anyhow!("{}: {}", a.file.display(), esc(&e.to_string())))?;
    let mut imported = imported;
    if let Some(b) = imported.obstacles.clone() {
        let file = obstacle_file_for(&a, &b.file);
        if file != b.file {
            imported.toml = imported.toml.replace(&b.toml(), &b.toml_with_file(&file));
        }
    }
    if let Some(p) = &imported.pid_from {
        eprintln!(
            "usim: the V22 embedded PID's settings come from ProcessConfig = {} (--pid-from): usim closes the loop itself, so run the vehicle without that app",
            esc(p)
        );
    }
    if let Some((p, line)) = &imported.pid_app {
        eprintln!(
            "usim: {}: note: ProcessConfig = {} is another app's block: its gains are not imported (uSimMarine and uSimMarineV22 read only their own block); --pid-from {} runs them in usim's V22 embedded PID instead",
            expanded.place(*line),
            esc(p),
            esc(p)
        );
    }
    for u in &imported.unmapped {
        eprintln!(
            "usim: {}: key `{}`: not imported: {}",
            expanded.place(u.line),
            esc(&u.key),
            esc(&u.reason)
        );
    }
    if !imported.toml.lines().any(|l| l.starts_with("name = ")) {
        eprintln!(
            "usim: {}: no `Community` line, so the config has no `name` and usim will call the vehicle `vehicle`; name it with `usim run --name NAME` or add `name = \"NAME\"` to the config",
            a.file.display()
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
