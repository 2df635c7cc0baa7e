//! Logging to a daily-rolling file in the data dir — never to the terminal,
//! which belongs to the UI.
//!
//! Writes are synchronous: Navi logs little, and a background writer thread
//! would cost a thread (and a malloc arena) in every short `navi run`.
use std::path::Path;

/// Held for the life of the program; kept so logging can grow a flushing
/// writer again without touching callers.
pub struct LogGuard(());

pub fn init(dir: &Path, level: &str) -> LogGuard {
    if std::fs::create_dir_all(dir).is_err() {
        return LogGuard(());
    }
    let appender = tracing_appender::rolling::daily(dir, "navi.log");
    let filter = tracing_subscriber::EnvFilter::try_new(format!("warn,navi={level}"))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,navi=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(appender)
        .with_ansi(false)
        .try_init();
    LogGuard(())
}
