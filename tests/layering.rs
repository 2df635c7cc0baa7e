//! The layering rules of docs/architecture.md, checked on the source:
//!
//! - front ends (`src/ui`, `src/acp`, `src/cli`) reach sessions only
//!   through `App` (open, list, delete, stored reads) and the session
//!   handle: they import neither the store, the agent nor the backends
//!   (the interactive ones not the tools or the checkpoints either), reach
//!   no field of `App`, and never take the engine out of it;
//! - `App` has no public field;
//! - nothing but the type that owns all open sessions keeps a map keyed by
//!   a session id: every other per-session state lives in the session;
//! - the protocol depends on nothing else in the crate;
//! - no import circle between the top-level modules of `src/`, and every
//!   import goes down [`LAYERS`] (the graph: `support::source_graph`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support::source_graph::{
    Import, crate_imports, explain, find_cycle, lex, named_modules,
};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(file, line number, code without its comment)` of every line under `src/<dir>`.
fn code_lines(dir: &str) -> Vec<(String, usize, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    if root.is_dir() {
        rust_files(&root, &mut files);
    } else {
        files.push(root.with_extension("rs"));
    }
    assert!(!files.is_empty(), "src/{dir} has its files");
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.display().to_string();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("").to_string();
            out.push((name.clone(), i + 1, code));
        }
    }
    out
}

/// Whether `code` names crate module `m` (a path `crate::m::…`, the
/// module itself, or `m` in a `use crate::{…}` group).
fn names_module(code: &str, m: &str) -> bool {
    let direct = format!("crate::{m}");
    let mut from = 0;
    while let Some(i) = code[from..].find(&direct) {
        let end = from + i + direct.len();
        let next = code[end..].chars().next();
        if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return true;
        }
        from = end;
    }
    if let Some(i) = code.find("crate::{") {
        let group = &code[i + "crate::{".len()..];
        return group
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == m);
    }
    false
}

/// Lines of `src/<dir>` that name one of `modules`.
fn importers(dir: &str, modules: &[&str]) -> Vec<String> {
    code_lines(dir)
        .into_iter()
        .filter(|(_, _, code)| modules.iter().any(|m| names_module(code, m)))
        .map(|(f, n, code)| format!("{f}:{n}: {}", code.trim()))
        .collect()
}

#[test]
fn the_module_check_sees_every_form_of_import() {
    assert!(names_module("use crate::session::SessionStore;", "session"));
    assert!(names_module(
        "let s = crate::session::replay::events(x);",
        "session"
    ));
    assert!(names_module("use crate::{agent, app::App};", "agent"));
    assert!(names_module("use crate::llm;", "llm"));
    assert!(!names_module("use crate::sessions_view::X;", "session"));
    assert!(!names_module("use crate::app::SessionHandle;", "session"));
}

#[test]
fn front_ends_import_neither_the_store_the_agent_nor_the_backends() {
    let mut bad = Vec::new();
    for dir in ["ui", "acp", "cli"] {
        bad.extend(importers(dir, &["session", "agent", "llm"]));
    }
    // The interactive front ends hold no tool or checkpoint state either:
    // what a session keeps is the session's, behind its handle.
    for dir in ["ui", "acp"] {
        bad.extend(importers(dir, &["tools", "checkpoint"]));
    }
    assert!(
        bad.is_empty(),
        "front ends reach past app/protocol:\n{}",
        bad.join("\n")
    );
}

/// `app.<field>` not followed by a call: a field of `App` reached directly.
fn field_reaches(code: &str) -> Vec<&'static str> {
    const FIELDS: &[&str] = &[
        "store",
        "agent",
        "runs",
        "profiles",
        "memory",
        "config",
        "paths",
        "tool_errors",
        "profile_warnings",
        "work_dir",
    ];
    let mut out = Vec::new();
    for f in FIELDS {
        let pat = format!("app.{f}");
        let mut from = 0;
        while let Some(i) = code[from..].find(&pat) {
            let at = from + i;
            let end = at + pat.len();
            let before = code[..at].chars().next_back();
            let next = code[end..].chars().next();
            let whole = !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '(');
            if whole {
                out.push(*f);
            }
            from = end;
        }
    }
    out
}

#[test]
fn the_field_check_sees_reaches_and_leaves_calls_alone() {
    assert_eq!(field_reaches("let s = app.store.load(id);"), ["store"]);
    assert_eq!(field_reaches("self.app.agent.env.mcp.start();"), ["agent"]);
    assert_eq!(field_reaches("&app.config.ui.theme"), ["config"]);
    assert!(field_reaches("app.config().ui.theme").is_empty());
    assert!(field_reaches("app.sessions()").is_empty());
    assert!(field_reaches("my_app.storage").is_empty());
}

#[test]
fn front_ends_reach_no_field_of_app_and_never_the_engine() {
    let mut bad = Vec::new();
    for dir in ["ui", "acp", "cli"] {
        for (f, n, code) in code_lines(dir) {
            let reaches = field_reaches(&code);
            if !reaches.is_empty() || code.contains(".engine()") {
                bad.push(format!("{f}:{n}: {}", code.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "front ends reach into App instead of using its functions and the handle:\n{}",
        bad.join("\n")
    );
}

#[test]
fn app_has_no_public_field() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app/mod.rs"))
            .unwrap();
    let start = text.find("pub struct App {").expect("the App struct");
    let body = &text[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let public: Vec<&str> = body
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.starts_with("pub"))
        .collect();
    assert!(public.is_empty(), "App has public fields: {public:?}");
}

/// A field or static whose type is a map (`HashMap`, `BTreeMap`, or a set)
/// and that, by its name or the doc comment above it, is kept per session.
fn session_keyed_maps(file: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim();
        let is_map = ["HashMap<", "BTreeMap<", "HashSet<", "BTreeSet<"]
            .iter()
            .any(|m| code.contains(m));
        if !is_map {
            continue;
        }
        // A field (`name: Type`) or a static, not a local or a parameter.
        let field = code.split_once(':').is_some_and(|(name, _)| {
            let name = name
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            name.chars().all(|c| c.is_alphanumeric() || c == '_') && !name.is_empty()
        }) && (code.ends_with(',') || code.ends_with(">>,") || code.ends_with('>'));
        let is_static = code.starts_with("static ") || code.contains(" static ");
        if !field && !is_static {
            continue;
        }
        let mut doc = String::new();
        let mut j = i;
        while j > 0 && lines[j - 1].trim_start().starts_with("///") {
            j -= 1;
            doc.push_str(lines[j]);
            doc.push(' ');
        }
        let name = code.split(':').next().unwrap_or("").to_lowercase();
        let doc = doc.to_lowercase();
        let keyed_by_session = name.contains("session")
            || code.contains("SessionId")
            || doc.contains("session id")
            || doc.contains("by session")
            || doc.contains("per session")
            || doc.contains("each session")
            || doc.contains("every session");
        if keyed_by_session {
            out.push(format!("{file}:{}: {}", i + 1, code));
        }
    }
    out
}

#[test]
fn the_map_check_finds_the_maps_the_old_code_kept_per_session() {
    // As the code was before the session owned its state.
    let old = r#"
pub struct Runs {
    next: AtomicU64,
    by_session: Mutex<HashMap<String, (u64, CancellationToken)>>,
}
pub(crate) struct SessionLocks {
    dir: Option<PathBuf>,
    /// The locks this process holds, by session id.
    held: Mutex<HashMap<String, File>>,
}
pub struct ApprovalGate {
    session_allowed: Mutex<HashMap<String, HashSet<String>>>,
}
/// Steer messages waiting per session id.
pub struct SteerInbox {
    waiting: Mutex<HashMap<String, Vec<String>>>,
}
"#;
    let found = session_keyed_maps("old.rs", old);
    assert_eq!(found.len(), 3, "{found:?}");
    // A local map and a map by another key are not per-session state.
    let fine = r#"
    let mut seen: HashMap<String, usize> = HashMap::new();
    /// Tools by name.
    tools: BTreeMap<String, Arc<dyn Tool>>,
"#;
    assert!(session_keyed_maps("fine.rs", fine).is_empty());
}

#[test]
fn only_the_owner_of_all_open_sessions_keeps_a_map_keyed_by_session_id() {
    // `navi acp` addresses sessions by the id the client names them with:
    // its server owns every session the process has open, the one map
    // keyed by session id allowed. Everything else a session keeps is in
    // the session (`agent::Session`, `tools::SessionTools`).
    const OWNER: &str = "src/acp/server.rs";
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    let mut owner_seen = false;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
            .display()
            .to_string();
        let rel = rel.trim_start_matches('/');
        let found = session_keyed_maps(rel, &text);
        if rel == OWNER {
            owner_seen = !found.is_empty();
            continue;
        }
        bad.extend(found);
    }
    assert!(owner_seen, "the owner's map is where the rule says it is");
    assert!(
        bad.is_empty(),
        "maps keyed by a session id outside the owner of all open sessions:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_protocol_depends_on_nothing_else_in_the_crate() {
    for (f, n, code) in code_lines("protocol") {
        assert!(!code.contains("crate::"), "{f}:{n} uses the crate: {code}");
    }
}

// ---- The import graph of the top-level modules of src/ ----

/// The top-level modules of `src/`, bottom layer first. A module may import
/// only modules of a lower layer (docs/architecture.md, "Layers").
const LAYERS: &[&[&str]] = &[
    &[
        "protocol",
        "util",
        "private_fs",
        "nofollow",
        "text_diff",
        "embedded",
        "controls",
        "project",
    ],
    &["logging"],
    &["config"],
    &["llm", "profile"],
    &["session"],
    &["memory", "sandbox", "attach"],
    &["checkpoint"],
    &["tools"],
    &["mcp"],
    &["agent"],
    &["app"],
    &["ui"],
    &["acp"],
    &["cli"],
];

#[test]
fn the_graph_check_reads_imports_the_way_rustc_resolves_them() {
    let toks = lex(
        "use crate::{config::{A, B}, llm::X, self};\nlet s = \"crate::ui\"; // crate::app\n\
         crate::outln!(x); let c = '{'; fn f<'a>() { super::super::tools::y(); }\n\
         /* crate::acp /* nested */ crate::cli */ let r = r#\"crate::mcp\"#;",
    );
    let found: Vec<String> = named_modules(&toks, 2)
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(found, ["config", "llm", "tools"]);
    let at_depth_3: Vec<String> = named_modules(&toks, 3)
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(
        at_depth_3,
        ["config", "llm"],
        "super::super from depth 3 stays inside"
    );
    let edge = |from: &str, to: &str| Import {
        from: from.into(),
        to: to.into(),
        at: "x.rs:1".into(),
    };
    let g = [
        edge("a", "b"),
        edge("b", "c"),
        edge("c", "a"),
        edge("c", "d"),
    ];
    let cycle = find_cycle(&g).unwrap();
    assert_eq!(cycle, ["a", "b", "c", "a"]);
    assert!(explain(&cycle, &g).contains("c -> a (x.rs:1)"));
    assert!(find_cycle(&[edge("a", "b"), edge("a", "c"), edge("b", "c")]).is_none());
}

#[test]
fn the_graph_check_skips_test_code_and_follows_every_module_file() {
    let imports = crate_imports();
    let from = |m: &str| imports.iter().filter(|im| im.from == m).count();
    // Modules reached only through `#[path]` or nested `mod x;` are read.
    assert!(
        imports
            .iter()
            .any(|im| im.at.contains("src/ui/tui/attach_send.rs"))
    );
    assert!(
        imports
            .iter()
            .any(|im| im.at.contains("src/agent/planning/"))
    );
    assert!(from("app") > 10 && from("agent") > 10, "{imports:?}");
    // Test modules (inline, or files under `#[cfg(test)] mod x;`) are not.
    for im in &imports {
        assert!(
            !im.at.contains("_tests.rs") && !im.at.ends_with("/tests.rs"),
            "{im:?}"
        );
    }
}

#[test]
fn no_import_circle_between_the_top_level_modules() {
    let imports = crate_imports();
    if let Some(cycle) = find_cycle(&imports) {
        panic!(
            "top-level modules of src/ import each other in a circle: {}\n{}\n\
             Move what the lower module needs down (see docs/architecture.md, Layers).",
            cycle.join(" -> "),
            explain(&cycle, &imports)
        );
    }
}

#[test]
fn every_import_goes_down_the_layers() {
    let rank = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let mut bad = Vec::new();
    for im in crate_imports() {
        match (rank(&im.from), rank(&im.to)) {
            (Some(a), Some(b)) if b < a => {}
            (None, _) | (_, None) => bad.push(format!(
                "{}: {} -> {}: a module missing from LAYERS (tests/layering.rs) and docs/architecture.md",
                im.at, im.from, im.to
            )),
            _ => bad.push(format!(
                "{}: {} imports {} (same or higher layer)",
                im.at, im.from, im.to
            )),
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}
