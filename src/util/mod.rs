//! Small helpers every layer may use: text, time, paths, network addresses,
//! URLs and image headers.
//!
//! Invariant: nothing here imports another module of the crate (the bottom
//! layer of docs/architecture.md; `tests/layering.rs` checks it), so any
//! module can depend on these without closing an import circle.
pub(crate) mod image_probe;
pub(crate) mod net;
pub(crate) mod paths;
pub(crate) mod text;
pub(crate) mod time;
pub(crate) mod url_auth;
