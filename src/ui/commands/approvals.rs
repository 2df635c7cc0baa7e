//! `/approvals`: the tools the user allowed for this session ("s" on an
//! approval request), and taking such an allowance back. Both front ends;
//! the listing is a read of the session, a revoke is
//! [`Op::RevokeApproval`](crate::protocol::Op).
//!
//! Invariant: revoking only removes a session allowance; `--approve` on the
//! command line and `[security]` settings are reported, never changed here.

pub(crate) const USAGE: &str = "usage: /approvals [list | revoke <tool> | revoke all]";

/// `None`: list; `Some(None)`: revoke everything; `Some(Some(tool))`:
/// revoke one tool.
pub(crate) fn parse(args: &[String]) -> Result<Option<Option<String>>, String> {
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["list"] => Ok(None),
        ["revoke", "all"] | ["revoke", "*"] => Ok(Some(None)),
        ["revoke", tool] => Ok(Some(Some(tool.to_string()))),
        _ => Err(USAGE.into()),
    }
}
