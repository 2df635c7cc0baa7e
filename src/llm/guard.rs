//! Placeholder: replaced by the real stream guard.
