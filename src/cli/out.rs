//! Writing results to stdout for scripts and pipes.
//!
//! A reader that goes away (`navi sessions list | head -1`) is not an error:
//! the command stops writing and exits 0 without a message, as `cat` or `rg`
//! do. Every command writes through [`line`]/[`text`] (which map a broken
//! pipe to [`Failure::quiet`]); [`quiet_on_broken_pipe`] covers any write
//! that still goes through `print!`.
use super::Failure;
use std::io::Write;

pub(crate) use crate::app::launch::is_broken_pipe;

fn io_failure(e: std::io::Error) -> Failure {
    if is_broken_pipe(&e) {
        Failure::quiet()
    } else {
        Failure::runtime(format!("cannot write to stdout: {e}"))
    }
}

/// Writes `s` to stdout and flushes.
pub(crate) fn text(s: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes()).map_err(io_failure)?;
    out.flush().map_err(io_failure)
}

/// Writes `s` and a newline to stdout.
pub(crate) fn line(s: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes()).map_err(io_failure)?;
    out.write_all(b"\n").map_err(io_failure)?;
    out.flush().map_err(io_failure)
}

/// Makes a `print!` to a closed stdout end the process with exit 0 instead
/// of a panic message and exit 101. Other panics keep the default report.
pub(crate) fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info)
    }));
}

/// `outln!("…", args)?`: one line on stdout, broken pipe → quiet exit.
#[macro_export]
#[doc(hidden)]
macro_rules! outln {
    ($($t:tt)*) => { $crate::cli::out::line(&format!($($t)*)) };
}
