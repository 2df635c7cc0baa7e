"""The sandbox probe: tries every escape of issue 37 and 35 item 4 from
inside a tool process and prints one line `PROBE=` + JSON: probe -> "ok"
(it worked) or the errno name (it was refused). Its argument (argv[1], or
{"args": ...} on stdin for a user tool) is a JSON object with "outside" (a
file outside every writable root, owned by the user), "targets" (files
that must stay unchanged: git configs, navi's config) and "inside" (a
writable directory; "$TMPDIR" means the private temporary directory)."""
import errno, fcntl, json, os, stat, struct, sys, termios

if len(sys.argv) > 1:
    ARGS = json.loads(sys.argv[1])
else:  # a user tool: its arguments come as JSON on stdin
    ARGS = json.loads(json.load(sys.stdin)["args"])
R = {}


def t(name, f):
    try:
        f()
        R[name] = "ok"
    except OSError as e:
        R[name] = errno.errorcode.get(e.errno, str(e.errno))
    except Exception as e:  # noqa: BLE001 - reported, not raised
        R[name] = "X:" + type(e).__name__


def close_after(fd_fn, then):
    fd = fd_fn()
    try:
        then(fd)
    finally:
        os.close(fd)


def inject(fd):
    fcntl.ioctl(fd, termios.TIOCSTI, b"y")


# The terminal: no controlling one, nothing reachable to inject into.
R["stdin_tty"] = os.isatty(0)
for fd in (0, 1, 2):
    t("tiocsti_fd%d" % fd, lambda fd=fd: inject(fd))
t("open_dev_tty", lambda: os.close(os.open("/dev/tty", os.O_RDWR)))
# Every terminal the process can open is counted; input is pushed and
# escapes are written only into the terminals the test names ("ptys": the
# test's own pty), never into other terminals of the machine.
OURS = set(ARGS.get("ptys", []))
opened, injected, written = [], [], []


def attack(path, name):
    for mode in (os.O_RDWR, os.O_RDONLY, os.O_WRONLY):
        try:
            fd = os.open(path, mode | os.O_NOCTTY)
        except OSError:
            continue
        try:
            if not os.isatty(fd):
                return
            opened.append(name)
            if name not in OURS:
                return
            try:
                inject(fd)
                injected.append(name)
            except OSError:
                pass
            try:
                os.write(fd, b"\x1b]0;PWNED-TITLE\x07")
                written.append(name)
            except OSError:
                pass
        finally:
            os.close(fd)
        return


for n in sorted(os.listdir("/dev/pts")):
    if n.isdigit():
        attack("/dev/pts/" + n, "/dev/pts/" + n)
# Terminals held by ancestors (navi, the shell that started navi).
pid = os.getpid()
for _ in range(12):
    try:
        stat_line = open("/proc/%d/stat" % pid).read()
        pid = int(stat_line.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
    if pid <= 1:
        break
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        continue
    for f in fds:
        p = "/proc/%d/fd/%s" % (pid, f)
        try:
            target = os.readlink(p)
        except OSError:
            continue
        attack(p, target)
R["tty_opened"] = opened
R["tty_injected"] = injected
R["tty_written"] = written

# Descriptors: nothing above 2 but what this process opens itself.
t("write_fd77", lambda: os.write(77, b"leak\n"))
names = os.listdir("/proc/self/fd")
R["fds_above_2"] = sorted(
    int(f) for f in names if int(f) > 2 and os.path.exists("/proc/self/fd/" + f)
)

# Root's powers: capabilities, no_new_privs, sessions, devices.
status = dict(
    line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
)
for k in ("CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb", "NoNewPrivs"):
    R[k] = status.get(k, "").strip()
t("setsid", os.setsid)
inside = os.path.join(
    ARGS["inside"].replace("$TMPDIR", os.environ.get("TMPDIR", "/nonexistent")),
    "probe-%d" % os.getpid(),
)
os.makedirs(inside, exist_ok=True)
t("mknod_block", lambda: os.mknod(inside + "/blk", 0o600 | stat.S_IFBLK, os.makedev(7, 0)))
t("mknod_char", lambda: os.mknod(inside + "/chr", 0o666 | stat.S_IFCHR, os.makedev(1, 3)))
t("mkfifo_inside", lambda: os.mkfifo(inside + "/fifo"))
with open(inside + "/mine", "w") as f:
    f.write("x")
t("chmod_inside", lambda: os.chmod(inside + "/mine", 0o700))

# Metadata of a file outside every writable root.
out = ARGS["outside"]
t("chmod_outside", lambda: os.chmod(out, 0o777))
t("chown_outside", lambda: os.chown(out, os.getuid(), os.getgid()))
t("utime_outside", lambda: os.utime(out, (0, 0)))
t("setxattr_outside", lambda: os.setxattr(out, "user.navi", b"1"))
t("removexattr_outside", lambda: os.removexattr(out, "user.navi-none"))
FS_IOC_SETFLAGS = 0x40086602
FS_NOATIME_FL = 0x80
t(
    "chattr_outside",
    lambda: close_after(
        lambda: os.open(out, os.O_RDONLY),
        lambda fd: fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", FS_NOATIME_FL)),
    ),
)
t("write_outside", lambda: open(out, "a").write("x"))

# Files navi or git read that must not change.
for i, target in enumerate(ARGS.get("targets", [])):
    t("append_target%d" % i, lambda target=target: open(target, "a").write("\n# planted\n"))
    t("replace_target%d" % i, lambda target=target: os.rename(target, target + ".old"))
    parent = os.path.dirname(target)
    t("move_parent%d" % i, lambda parent=parent: os.rename(parent, parent + ".moved"))

print("PROBE=" + json.dumps(R, sort_keys=True))
