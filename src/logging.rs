//! Logging to a daily-rolling file in the data dir — never to the terminal,
//! which belongs to the UI.
use std::path::Path;

/// Keeps the background log writer alive; drop it at exit to flush.
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

pub fn init(dir: &Path, level: &str) -> LogGuard {
    if std::fs::create_dir_all(dir).is_err() {
        return LogGuard(None);
    }
    let appender = tracing_appender::rolling::daily(dir, "navi.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_new(format!("warn,navi={level}"))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,navi=info"));
    let ok = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .is_ok();
    LogGuard(ok.then_some(guard))
}
