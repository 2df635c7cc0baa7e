//! The seccomp programs tool children run under, built in navi and
//! installed in the child just before `exec`.
//!
//! Every call the programs refuse fails with EPERM ("Operation not
//! permitted"); nothing is killed. What they refuse:
//! - terminal input and console control for every sandboxed child and for
//!   every child of root ([`terminal_only`]): `ioctl` TIOCSTI (push input
//!   into a terminal), TIOCLINUX (console selection/paste), TIOCCONS
//!   (redirect the console), TIOCSETD (change a line discipline);
//! - in the sandbox ([`sandbox`]): device nodes (`mknod`/`mknodat` of a
//!   character or block device), `setsid` (so nothing a tool starts leaves
//!   its session and outlives the call), io_uring (which bypasses seccomp),
//!   and, without the network, `socket()` for every family but `AF_UNIX`;
//! - where the read-only mount namespace is unavailable ([`Spec::metadata`]):
//!   every change of file metadata — `chmod`, `chown`, `utime(s)`,
//!   extended attributes, `FS_IOC_SETFLAGS` (chattr) — since nothing else
//!   would stop them on files outside the writable roots.
//!
//! On x86_64 the x32 system call numbers (bit 30 set) are refused as a whole,
//! so none of the above can be reached through the other table.
#![allow(unsafe_code)]

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;

/// `ioctl` requests no tool may make. (The casts matter where libc's
/// request type is not `u64`, e.g. musl.)
#[allow(clippy::unnecessary_cast)]
const TERMINAL_IOCTLS: [u64; 4] = [
    libc::TIOCSTI as u64,
    libc::TIOCLINUX as u64,
    libc::TIOCCONS as u64,
    libc::TIOCSETD as u64,
];

/// `FS_IOC_FSSETXATTR` (`_IOW('X', 32, struct fsxattr)`), not in libc.
const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;

/// System calls newer than libc's tables (same number on every
/// architecture with the common table).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
const NEW_METADATA_CALLS: [i64; 3] = [
    452, // fchmodat2
    463, // setxattrat
    466, // removexattrat
];
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const NEW_METADATA_CALLS: [i64; 0] = [];

/// What a sandboxed child's program refuses beyond the fixed set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// The child may open network sockets.
    pub(crate) network: bool,
    /// Refuse every metadata change (no read-only mounts to do it by path).
    pub(crate) metadata: bool,
}

type Err = String;

fn err(e: seccompiler::BackendError) -> Err {
    format!("cannot build the seccomp filter: {e}")
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, Err> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, Err> {
    SeccompRule::new(conds).map_err(err)
}

fn ioctl_rules(requests: &[u64]) -> Result<Vec<SeccompRule>, Err> {
    requests
        .iter()
        .map(|r| rule(vec![cond(1, SeccompCmpOp::Eq, *r)?]))
        .collect()
}

/// Rules refusing `mknod`'s mode argument `arg` for devices.
fn device_rules(arg: u8) -> Result<Vec<SeccompRule>, Err> {
    let fmt = libc::S_IFMT as u64;
    [libc::S_IFCHR, libc::S_IFBLK]
        .iter()
        .map(|kind| rule(vec![cond(arg, SeccompCmpOp::MaskedEq(fmt), *kind as u64)?]))
        .collect()
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, Err> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("no seccomp filter for this CPU: {e}"))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let prog: BpfProgram = filter.try_into().map_err(err)?;
    Ok(guard_x32(prog))
}

/// On x86_64, refuses every x32 system call right after the architecture
/// check (the x32 table reaches the same kernel code under other numbers).
fn guard_x32(prog: BpfProgram) -> BpfProgram {
    if std::env::consts::ARCH != "x86_64" || prog.len() < 3 {
        return prog;
    }
    // BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JGE | BPF_K, BPF_RET | BPF_K.
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    let errno = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA);
    let guard = [
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0, // seccomp_data.nr
        },
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
    ];
    // The first three instructions are the architecture check; the rest
    // loads the number again and uses only relative jumps.
    let mut out = Vec::with_capacity(prog.len() + guard.len());
    out.extend_from_slice(&prog[..3]);
    out.extend_from_slice(&guard);
    out.extend_from_slice(&prog[3..]);
    out
}

/// The program for children outside the sandbox run by root: terminal
/// ioctls only.
pub(crate) fn terminal_only() -> Result<BpfProgram, Err> {
    static PROG: std::sync::OnceLock<Result<BpfProgram, Err>> = std::sync::OnceLock::new();
    PROG.get_or_init(|| {
        let mut rules = BTreeMap::new();
        rules.insert(libc::SYS_ioctl, ioctl_rules(&TERMINAL_IOCTLS)?);
        compile(rules)
    })
    .clone()
}

/// The program for a sandboxed child.
pub(crate) fn sandbox(spec: Spec) -> Result<BpfProgram, Err> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut ioctls = TERMINAL_IOCTLS.to_vec();
    if spec.metadata {
        #[allow(clippy::unnecessary_cast)]
        let setflags = libc::FS_IOC_SETFLAGS as u64;
        ioctls.extend([setflags, FS_IOC_FSSETXATTR]);
    }
    rules.insert(libc::SYS_ioctl, ioctl_rules(&ioctls)?);
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_mknod, device_rules(1)?);
    rules.insert(libc::SYS_mknodat, device_rules(2)?);
    rules.insert(libc::SYS_setsid, Vec::new());
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    if !spec.network {
        let not_unix = cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
        rules.insert(libc::SYS_socket, vec![rule(vec![not_unix])?]);
    }
    if spec.metadata {
        let mut calls = vec![
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
        ];
        #[cfg(target_arch = "x86_64")]
        calls.extend([
            libc::SYS_chmod,
            libc::SYS_chown,
            libc::SYS_lchown,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ]);
        calls.extend(NEW_METADATA_CALLS);
        for c in calls {
            rules.insert(c, Vec::new());
        }
    }
    compile(rules)
}

/// Installs `prog` without `no_new_privs` (needs CAP_SYS_ADMIN: root).
/// In the child; no allocation.
pub(crate) fn install_privileged(prog: &BpfProgram) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(prog.len()).unwrap_or(u16::MAX),
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at a live program of `len` instructions with
    // the kernel's layout (seccompiler's `sock_filter` is `#[repr(C)]`).
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_compile() {
        assert!(!terminal_only().unwrap().is_empty());
        for network in [false, true] {
            for metadata in [false, true] {
                let p = sandbox(Spec { network, metadata }).unwrap();
                assert!(p.len() > 10);
            }
        }
    }
}
