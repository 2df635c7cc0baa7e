//! Property test of the terminal allow-list against real shells.
//!
//! Random command text is built from a grammar of ordinary and dangerous
//! pieces (continuations, substitutions, quoting, redirections, arithmetic,
//! wrappers). For every text the checker accepts, it is run by real bash and
//! dash with `PATH` holding only shims: allowed shims log `ok NAME`, shims
//! for off-list names log `BAD NAME`, and a name with no shim is "not found".
//! The property: nothing off the list runs, no file is created or read, and
//! `bash -n` agrees the text is valid. Seed: `NAVI_ALLOWLIST_FUZZ_SEED`,
//! cases: `NAVI_ALLOWLIST_FUZZ_CASES` (default 1500).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use navi::tools::shell_check::{AllowList, check};
use std::path::Path;
use std::process::{Command, Stdio};

/// xorshift64*: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

pub const ALLOWED: &[&str] = &["ls", "wc", "env", "xargs", "sh"];
pub const FORBIDDEN: &[&str] = &["rm", "id", "touch", "evil", "cat"];

const NAMES: &[&str] = &[
    "ls",
    "wc",
    "echo",
    "printf",
    "ls",
    "wc",
    "echo",
    "ls -l",
    "wc -l",
    "env ls",
    "xargs wc",
    "ls",
    "wc",
    "echo",
    "printf",
    "ls",
    "wc",
    "echo",
    "ls -l",
    "wc -l",
    "env ls",
    "xargs wc",
    "rm",
    "id",
    "touch",
    "evil",
    "cat",
    "e\"vi\"l",
    "ev\\\nil",
    "\\rm",
    "'id'",
    "r\\\nm",
    "env rm",
    "env -i ls",
    "xargs rm",
    "command rm",
    "exec ls",
    "env",
    "xargs",
    "true",
    "$v",
    "${v}",
    "\"$v\"",
    "$'evil'",
    "$'\\x65vil'",
    "test -v 'a[v]'",
    "read 'a[v]'",
    "printf -v 'a[v]' x",
    "eval evil",
    ". ./evil",
    "[[ v -eq 1 ]]",
    "((v))",
    "echo ${v:-$(evil)}",
    "wc <<E\n$(evil)\nE\n",
    "wc <<'E'\n$(evil)\nE\n",
    "ls <<< $(evil)",
    "wc <(evil)",
    "coproc evil",
    "trap evil EXIT",
    "function f { evil; }",
    "f() { evil; }; f",
    "case x in x) evil;; esac",
    "for ((i=0;i<1;i++)); do evil; done",
    "select i in a; do evil; done",
    "time evil",
    "nohup evil",
    "env -S evil",
    "xargs -I{} evil",
    "exec 3>out",
    "ls >&3",
    "echo $'\\'' evil '",
    "sh -c evil",
    "sh -c \"$v\"",
    "env v=1 evil",
    "v=(evil)",
];
const ARGS: &[&str] = &[
    "x",
    "-l",
    "x",
    "-l",
    "a b",
    "\"q\"",
    "'s'",
    "$v",
    "x",
    "-l",
    "a b",
    "\"q\"",
    "'s'",
    "$v",
    "\"$v\"",
    "'$(evil)'",
    "$\\\n(evil)",
    "\"$\\\n(evil)\"",
    "${v:-x}",
    "${!v}",
    "${v@P}",
    "${a[v]}",
    "${v:v}",
    "$[v]",
    "$((1+2))",
    "$'a\\tb'",
    "*",
    "~",
    "{a,b}",
    "\"a\\\nb\"",
    "'a\\\nb'",
    "\\$\\(evil\\)",
    "#c",
    "\"$(< secret)\"",
    "$(<secret)",
    "`evil`",
    "$(evil)",
    "\"`evil`\"",
    ">(evil)",
    "$(\\\n< secret)",
    "${v:-`evil`}",
    "\"${v@P}\"",
    "$\\\n[v]",
];
const REDIRECTS: &[&str] = &[
    "2>&1",
    ">/dev/null",
    "2>/dev/null",
    "> out",
    ">/dev/null",
    "2>&1",
    "< secret",
    ">&3",
    "3>out",
    ">> out",
    "&> out",
    ">| out",
    "2>/dev/null",
    "<>out",
    ">\\\nout",
    "1>&2",
    ">&-",
    "> /proc/self/fd/1",
];
const SEPARATORS: &[&str] = &[
    "; ", " && ", " | ", "\n", "; ", " && ", " || ", " | ", " & ", "\n", " ;; ", " |& ", ";\\\n",
    " \\\n| ", "\r\n",
];
const PREFIXES: &[&str] = &[
    "",
    "",
    "",
    "",
    "",
    "",
    "",
    "",
    "",
    "v=evil ",
    "v='a[$(evil)]' ",
    "x=$(evil) ",
    "PATH=. ",
    "RANDOM=v ",
    "x=1 ",
];
/// Issue 25's classes, as generator pieces: brace expansion in builtin
/// arguments (`{PATH,v}`), variables set by loops and builtins, shells'
/// own options. `BRACE_NAMES` × `BRACE_BUILTINS`, `VAR_SETTERS` and
/// `SHELL_OPTIONS` are combined at random by [`class_v3`].
const BRACE_BUILTINS: &[&str] = &[
    "export",
    "read",
    "unset",
    "printf -v",
    "set",
    "test -v",
    "wait -p",
];
const BRACE_NAMES: &[&str] = &[
    "{PATH,v}=.",
    "{v,PATH}",
    "{-k,-x}",
    "{IFS,v}=x",
    "{LD_PRELOAD,v}=./e",
    "v{,PATH}=.",
    "{BASH_ENV,ENV}=./e",
    "P{A,}TH=.",
];
const VAR_SETTERS: &[&str] = &[
    "for PATH in .; do",
    "for IFS in x; do",
    "for ENV in ./e; do",
    "for BASH_ENV in ./e; do",
    "for v in .; do",
    "unset PATH;",
    "unset IFS;",
    "export -n PATH=.;",
    "read PATH < /dev/null;",
    "getopts a PATH;",
    "mapfile PATH < /dev/null;",
];
const SHELL_OPTIONS: &[&str] = &[
    "-l",
    "-i",
    "-k",
    "-lc",
    "-ic",
    "--login",
    "--rcfile ./e",
    "-o keyword",
    "-e",
    "-x",
    "-o pipefail",
];

fn class_v3(r: &mut Rng, depth: usize) -> String {
    let tail = simple(r, depth + 1);
    match r.below(3) {
        0 => format!("{} {}; {tail}", r.pick(BRACE_BUILTINS), r.pick(BRACE_NAMES)),
        1 => {
            let set = r.pick(VAR_SETTERS);
            if set.ends_with("do") {
                format!("{set} {tail}; done")
            } else {
                format!("{set} {tail}")
            }
        }
        _ => format!(
            "sh {} -c '{}' v=1",
            r.pick(SHELL_OPTIONS),
            tail.replace('\'', "")
        ),
    }
}

const NOISE: &[&str] = &[
    "$", "(", ")", "`", "\"", "'", "\\", "\\\n", ";", "&", "|", "<", ">", "{", "}", "#", "!",
];

/// How many leading entries of NAMES / ARGS are harmless.
const SAFE_NAMES: usize = 22;
const SAFE_ARGS: usize = 16;

fn simple(r: &mut Rng, depth: usize) -> String {
    if r.below(2) == 0 {
        // An ordinary command: most texts must pass, or little is run.
        let mut s = String::from(r.pick(&NAMES[..SAFE_NAMES]));
        for _ in 0..r.below(3) {
            s.push(' ');
            s.push_str(r.pick(&ARGS[..SAFE_ARGS]));
        }
        if r.below(3) == 0 {
            s.push(' ');
            s.push_str(r.pick(&REDIRECTS[..3]));
        }
        return s;
    }
    let mut s = String::from(r.pick(PREFIXES));
    s.push_str(r.pick(NAMES));
    for _ in 0..r.below(3) {
        s.push(' ');
        match r.below(10) {
            0 if depth < 3 => s.push_str(&format!("\"$({})\"", list(r, depth + 1))),
            1 if depth < 3 => s.push_str(&format!("$({})", list(r, depth + 1))),
            2 if depth < 3 => s.push_str(&format!("`{}`", simple(r, depth + 1))),
            3 => s.push_str(r.pick(REDIRECTS)),
            _ => s.push_str(r.pick(ARGS)),
        }
    }
    if r.below(15) == 0 {
        s.push_str(r.pick(NOISE));
    }
    s
}

fn command(r: &mut Rng, depth: usize) -> String {
    if depth >= 3 {
        return simple(r, depth);
    }
    match r.below(12) {
        0 => format!("( {} )", list(r, depth + 1)),
        1 => format!("{{ {}; }}", list(r, depth + 1)),
        2 => format!("if {}; then {}; fi", simple(r, depth), list(r, depth + 1)),
        3 => format!("for i in a b; do {}; done", list(r, depth + 1)),
        4 => format!("while false; do {}; done", list(r, depth + 1)),
        5 => format!("! {}", simple(r, depth)),
        6 => format!("sh -c '{}'", simple(r, depth + 1).replace('\'', "")),
        7 => class_v3(r, depth),
        _ => simple(r, depth),
    }
}

fn list(r: &mut Rng, depth: usize) -> String {
    let mut s = command(r, depth);
    for _ in 0..r.below(3) {
        s.push_str(r.pick(SEPARATORS));
        s.push_str(&command(r, depth));
    }
    s
}

pub fn generate(r: &mut Rng) -> String {
    list(r, 0)
}

fn shim(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Shims for every name the grammar can produce; returns the log path.
pub fn shims(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("log");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let l = log.display();
    for n in ALLOWED {
        let tail = match *n {
            "env" => "exec /usr/bin/env \"$@\"",
            "xargs" => "exec /usr/bin/xargs \"$@\"",
            "sh" => "exec /bin/sh \"$@\"",
            _ => "exit 0",
        };
        shim(&bin, n, &format!("echo \"ok {n}\" >> {l}\n{tail}"));
    }
    for n in FORBIDDEN {
        shim(&bin, n, &format!("echo \"BAD {n}\" >> {l}"));
    }
    // Programs that share a name with a harmless builtin (run by env/xargs).
    for n in ["echo", "printf", "true", "false", "test", "pwd"] {
        shim(&bin, n, "exit 0");
    }
    log
}

/// Runs `text` under `shell` in a fresh work dir; returns a violation.
pub fn run_one(shell: &str, text: &str, root: &Path, case: usize) -> Option<String> {
    let tag = shell.rsplit('/').next().unwrap_or(shell);
    let work = root.join(format!("w{case}-{tag}"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("secret"), "TOPSECRET42\n").unwrap();
    let log = root.join("log");
    let _ = std::fs::remove_file(&log);
    let out = Command::new("timeout")
        .args(["5", "env", "-i"])
        .arg(format!("PATH={}", root.join("bin").display()))
        .args([shell, "-c", text])
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut entries: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    let secret = std::fs::read_to_string(work.join("secret")).unwrap_or_default();
    let why = if logged.contains("BAD ") {
        Some(format!("ran an off-list program: {logged}"))
    } else if stderr.contains("not found") {
        Some(format!("tried to run an unknown name: {stderr}"))
    } else if entries != ["secret"] {
        Some(format!("created files: {entries:?}"))
    } else if secret != "TOPSECRET42\n" || stdout.contains("TOPSECRET42") {
        Some("read or changed the secret file".into())
    } else {
        None
    };
    why.map(|w| format!("{shell}: {text:?}: {w}"))
}

/// The absolute path of `shell` (the run clears PATH, so it is needed).
pub fn which(shell: &str) -> Option<String> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {shell}")])
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    path.starts_with('/').then_some(path)
}

/// The property over `cases` generated texts; returns (accepted, failures).
pub fn property(seed: u64, cases: usize) -> (usize, Vec<String>) {
    let mut list: Vec<String> = ALLOWED.iter().map(|s| s.to_string()).collect();
    list.sort();
    let allow = AllowList::new(&list);
    let tmp = tempfile::tempdir().unwrap();
    shims(tmp.path());
    let shells: Vec<String> = ["bash", "dash"].into_iter().filter_map(which).collect();
    assert!(
        shells.iter().any(|s| s.ends_with("/bash")),
        "the property test needs bash"
    );
    let mut rng = Rng::new(seed);
    let mut accepted = 0;
    let mut failures = Vec::new();
    for case in 0..cases {
        let text = generate(&mut rng);
        if check(&text, &allow).is_err() {
            continue;
        }
        accepted += 1;
        let syntax = Command::new("bash")
            .args(["-n", "-c", &text])
            .output()
            .unwrap();
        if !syntax.status.success() {
            failures.push(format!(
                "accepted text bash rejects: {text:?}: {}",
                String::from_utf8_lossy(&syntax.stderr)
            ));
            continue;
        }
        for shell in &shells {
            if let Some(f) = run_one(shell, &text, tmp.path(), case) {
                failures.push(f);
            }
        }
    }
    (accepted, failures)
}
