//! One snapshot of the workspace, taken on a thread of its own: at a
//! session's start (the first, possibly large one) and at each turn's start
//! (ready by the time the model's first writing tool comes).
//!
//! A session without an index yet first counts what there is to hash
//! (`git ls-files --others`, stopped at the limit): more files than
//! `[checkpoints].max_files` turns checkpoints off for the workspace, more
//! than [`WAIT_LIMIT`] new ones marks the snapshot as one no turn waits for.
use super::shadow::{Seed, Shadow};
use std::path::PathBuf;
use tokio::sync::watch;

/// A turn waits for a first snapshot that hashes at most this many files;
/// a larger one runs in the background and the turns before it is done are
/// not recorded (they say so).
pub(crate) const WAIT_LIMIT: usize = 2_000;

/// Where and how to record one workspace.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Place {
    pub(crate) data_dir: PathBuf,
    pub(crate) workspace: PathBuf,
    /// Directories tools can write besides the workspace.
    pub(crate) untrusted: Vec<PathBuf>,
    pub(crate) max_files: usize,
}

impl Place {
    pub(crate) fn shadow(&self, session: &str) -> Result<Shadow, String> {
        Shadow::open_guarded(&self.data_dir, &self.workspace, session, &self.untrusted)
    }
}

/// Where a snapshot is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Phase {
    /// Looking at what there is to record.
    Counting,
    /// Hashing `files` new files; `big`: no turn waits for it.
    Hashing {
        files: usize,
        big: bool,
    },
    Done(Outcome),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// The tree, and a note when some files could not be read.
    Tree(String, Option<String>),
    /// Checkpoints are off for this workspace: why.
    Off(String),
    /// Another git (an earlier navi's, still hashing) holds the index.
    Busy,
    Failed(String),
}

/// The message when a workspace is over the limit.
fn too_many(max: usize) -> String {
    format!(
        "checkpoints are off in this workspace: it holds more than {} files (add generated directories to .gitignore, or raise [checkpoints].max_files)",
        thousands(max)
    )
}

pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Takes the snapshot, telling `tx` how it goes.
pub(crate) fn run(place: &Place, session: &str, tx: &watch::Sender<Phase>) -> Outcome {
    // Nothing waits for it yet: the turn's own work goes first.
    let sh = match place.shadow(session) {
        Ok(s) => s.in_background(),
        Err(e) => return Outcome::Failed(e),
    };
    // A git of an earlier navi may still be finishing: a short wait.
    for _ in 0..60 {
        if !sh.busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if sh.busy() {
        return Outcome::Busy;
    }
    let mut seed = sh.seed();
    for attempt in 0..2 {
        if seed != Seed::Existing {
            let tracked = sh.tracked();
            let room = (place.max_files + 1).saturating_sub(tracked);
            let new = match sh.untracked(room) {
                Ok(n) => n,
                Err(e) => return Outcome::Failed(e),
            };
            if tracked + new > place.max_files {
                sh.reset_index();
                return Outcome::Off(too_many(place.max_files));
            }
            tx.send_replace(Phase::Hashing {
                files: new,
                big: new > WAIT_LIMIT,
            });
        } else {
            tx.send_replace(Phase::Hashing {
                files: 0,
                big: false,
            });
        }
        match sh.snapshot() {
            Ok((tree, note)) => {
                if sh.tracked() > place.max_files {
                    return Outcome::Off(too_many(place.max_files));
                }
                return Outcome::Tree(tree, note);
            }
            Err(e) if e.contains("index.lock") => return Outcome::Busy,
            Err(e) if e.starts_with("git is not") || e.starts_with("cannot run") => {
                return Outcome::Failed(e);
            }
            Err(e) => {
                // An index git cannot use (borrowed objects gone, a damaged
                // file): start again from nothing, once.
                sh.reset_index();
                if attempt == 1 {
                    return Outcome::Failed(e);
                }
                seed = Seed::Fresh;
            }
        }
    }
    Outcome::Failed("the checkpoint could not be taken".into())
}
