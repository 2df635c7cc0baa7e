//! Type-ahead protection for questions asked on a terminal (approvals).
//!
//! Invariant: an answer to a question is read only from input typed after the
//! question was shown. Keys typed earlier (while an answer streamed) sit in
//! the terminal's input queue; [`discard`] drops them with `tcflush(TCIFLUSH)`
//! so a stray `y⏎` can never approve a command.
//!
//! The only `unsafe` here are the two ioctl-style libc calls on a descriptor
//! the caller owns.
#![allow(unsafe_code)]

use std::os::fd::AsRawFd;

/// Drops input typed but not yet read on the terminal `fd`. Returns how many
/// bytes were dropped (0 when `fd` is not a terminal or nothing was pending).
pub(crate) fn discard(fd: &impl AsRawFd) -> usize {
    let fd = fd.as_raw_fd();
    let mut pending: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at
    // a live local; an invalid fd just makes the call fail.
    let ok = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut pending) } == 0;
    // SAFETY: tcflush only takes an fd and a constant; a non-terminal fd
    // makes it fail with ENOTTY, which is ignored.
    let flushed = unsafe { libc::tcflush(fd, libc::TCIFLUSH) } == 0;
    if ok && flushed {
        usize::try_from(pending).unwrap_or(0)
    } else {
        0
    }
}

/// [`discard`] on standard input.
pub(crate) fn discard_stdin() -> usize {
    discard(&std::io::stdin())
}

/// Drops key events the terminal library already read and buffered (keys
/// typed right behind the previous line, in the same read). Call after
/// [`discard`], while no editor is reading.
pub(crate) fn drain_key_buffer() -> usize {
    let mut n = 0;
    while n < 4096 && crossterm::event::poll(std::time::Duration::ZERO).unwrap_or(false) {
        if crossterm::event::read().is_err() {
            break;
        }
        n += 1;
    }
    n
}

/// How many bytes a read on stdin returns without blocking: with the
/// terminal in canonical (cooked) mode only finished lines count. 0 when
/// stdin is not a terminal or nothing is pending.
pub(crate) fn pending_stdin() -> usize {
    let fd = std::io::stdin().as_raw_fd();
    let mut pending: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at
    // a live local; an invalid fd just makes the call fail.
    let ok = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut pending) } == 0;
    if ok {
        usize::try_from(pending).unwrap_or(0)
    } else {
        0
    }
}
