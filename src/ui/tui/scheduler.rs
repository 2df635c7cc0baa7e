//! The frame scheduler: redraw requests are coalesced into at most one frame
//! per `1 / max_fps` (codex-rs `FrameRequester` style).
//!
//! Invariants: any number of `request()` calls between two frames produce one
//! frame; a frame is never drawn sooner than `interval` after the previous
//! one; with no request pending, nothing is drawn (idle costs nothing).
use std::time::{Duration, Instant};

/// How often spinners move while something runs.
pub(crate) const ANIMATION: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub(crate) struct FrameScheduler {
    interval: Duration,
    last: Option<Instant>,
    pending: bool,
    pub(crate) frames: u64,
}

impl FrameScheduler {
    pub(crate) fn new(max_fps: u32) -> Self {
        let fps = max_fps.clamp(1, 240);
        FrameScheduler {
            interval: Duration::from_secs(1) / fps,
            last: None,
            pending: true,
            frames: 0,
        }
    }

    pub(crate) fn request(&mut self) {
        self.pending = true;
    }

    /// When the next frame may be drawn; `None` when none is requested.
    pub(crate) fn due(&self, now: Instant) -> Option<Instant> {
        if !self.pending {
            return None;
        }
        Some(match self.last {
            Some(l) => (l + self.interval).max(now),
            None => now,
        })
    }

    pub(crate) fn drawn(&mut self, now: Instant) {
        self.last = Some(now);
        self.pending = false;
        self.frames += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_and_caps() {
        let mut s = FrameScheduler::new(50);
        let t0 = Instant::now();
        assert_eq!(s.due(t0), Some(t0));
        s.drawn(t0);
        assert_eq!(s.due(t0), None);
        for _ in 0..100 {
            s.request();
        }
        assert_eq!(s.due(t0), Some(t0 + Duration::from_millis(20)));
        let later = t0 + Duration::from_millis(50);
        assert_eq!(s.due(later), Some(later));
        s.drawn(later);
        assert_eq!(s.frames, 2);
    }
}
