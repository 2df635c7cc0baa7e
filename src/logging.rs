//! Logging to a daily file in the data dir — never to the terminal, which
//! belongs to the UI.
//!
//! Invariants: the log dir is created 0700 and every log file 0600 whatever
//! the umask (logs can hold prompts and paths); files are named
//! `navi.log.YYYY-MM-DD` (UTC). Writes are synchronous: Navi logs little,
//! and a background writer thread would cost a thread (and a malloc arena)
//! in every short `navi run`.
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Held for the life of the program; kept so logging can grow a flushing
/// writer again without touching callers.
pub(crate) struct LogGuard(());

/// The levels a `logging.level` directive may name.
pub(crate) const LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];

/// Checks a log level or filter: every comma-separated part is a level, or
/// `target=level`. `Err` says what is wrong with which part.
pub(crate) fn check_level(spec: &str) -> Result<(), String> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err("is empty".into());
    }
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let level = match part.split_once('=') {
            Some((target, level)) if !target.trim().is_empty() => level.trim(),
            Some(_) => return Err(format!("\"{part}\" has no target before '='")),
            None => part,
        };
        if !LEVELS.contains(&level.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "\"{level}\" is not a log level; use error, warn, info, debug, trace or off (or target=level, e.g. info,navi::llm=debug)"
            ));
        }
    }
    if tracing_subscriber::EnvFilter::try_new(compact(spec)).is_err() {
        return Err("is not a valid log filter".into());
    }
    Ok(())
}

/// The filter without blanks (`info, navi=debug` → `info,navi=debug`).
fn compact(spec: &str) -> String {
    spec.split_whitespace().collect()
}

/// Appends to today's log file, opened owner-only.
struct DailyFile {
    dir: PathBuf,
}

impl DailyFile {
    fn today(&self) -> io::Result<std::fs::File> {
        let stamp = crate::util::time::utc(std::time::SystemTime::now());
        let day = stamp.get(..10).unwrap_or("unknown");
        crate::private_fs::open_append(&self.dir.join(format!("navi.log.{day}")))
    }
}

/// One event's writer: the file, or nowhere when it cannot be opened.
struct EventWriter(Option<std::fs::File>);

impl Write for EventWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Some(f) => f.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0 {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for DailyFile {
    type Writer = EventWriter;

    fn make_writer(&'a self) -> Self::Writer {
        EventWriter(self.today().ok())
    }
}

pub(crate) fn init(dir: &Path, level: &str) -> LogGuard {
    if crate::private_fs::create_dir_all(dir).is_err() {
        return LogGuard(());
    }
    let filter = tracing_subscriber::EnvFilter::try_new(format!("warn,navi={}", compact(level)))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,navi=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(DailyFile {
            dir: dir.to_path_buf(),
        })
        .with_ansi(false)
        .try_init();
    LogGuard(())
}

#[cfg(test)]
mod tests {
    use super::check_level;

    #[test]
    fn levels_and_filters() {
        for ok in [
            "info",
            "DEBUG",
            "off",
            "info,navi::llm=debug",
            "warn, navi=trace",
        ] {
            assert!(check_level(ok).is_ok(), "{ok}");
        }
        for bad in ["verbose", "", "info,loud", "navi=chatty", "=debug"] {
            assert!(check_level(bad).is_err(), "{bad}");
        }
    }
}
