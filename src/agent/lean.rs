//! The lean preset's shell steps: how a tiny model (below ~1B parameters)
//! gets from a request to a `terminal` command and from the command's
//! output to an answer (docs/small-models.md).
//!
//! Invariants:
//! - Nothing here is written for a particular task: a bank of everyday
//!   requests, each with a command *template* (`wc -l PATH`), and a bank of
//!   plain questions. A request is routed by its nearest examples (shared
//!   words); measured on SmolLM2-135M, the model's own next-action choice
//!   was no better than chance and picked a tool for "what is the capital
//!   of France".
//! - The model still writes the command, under a grammar: the template of
//!   the nearest example, with its slots typed (PATH is one of the
//!   workspace's entries or a path named in the request, NUM digits, WORD
//!   one word, EXPR arithmetic). It cannot invent a file name.
//! - The answer after the command quotes the command's output verbatim
//!   under a short lead the model writes without digits, so a tiny model
//!   cannot misstate a count, a date or a listing.
//! - The examples go with the silent constrained requests only (a note at
//!   the end), never in the system prompt: the prompt prefix stays
//!   byte-stable across turns for the server's cache.
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

/// One kind of request the lean preset runs a command for.
pub(crate) struct Intent {
    /// The GBNF of the command (rules PATH, NUM, WORD, NAME, EXPR).
    pub(crate) template: &'static str,
    /// Requests and the command each one runs.
    pub(crate) examples: &'static [(&'static str, &'static str)],
}

/// Everyday shell requests. The order breaks ties (earlier wins).
pub(crate) const INTENTS: &[Intent] = &[
    Intent {
        template: "\"ls\"",
        examples: &[("list the files", "ls"), ("what is in this folder", "ls")],
    },
    Intent {
        template: "\"ls \" PATH",
        examples: &[
            ("what files are in docs", "ls docs"),
            ("list the build directory", "ls build"),
        ],
    },
    Intent {
        template: "\"cat \" PATH",
        examples: &[
            ("show me todo.txt", "cat todo.txt"),
            ("what does config.yml say", "cat config.yml"),
            ("read LICENSE", "cat LICENSE"),
            ("print the contents of setup.cfg", "cat setup.cfg"),
        ],
    },
    Intent {
        template: "\"wc -l \" PATH",
        examples: &[
            ("how many lines does a.py have", "wc -l a.py"),
            ("count the lines of data.csv", "wc -l data.csv"),
        ],
    },
    Intent {
        template: "\"wc -w \" PATH",
        examples: &[("how many words are in essay.txt", "wc -w essay.txt")],
    },
    Intent {
        template: "\"head -n \" NUM \" \" PATH",
        examples: &[
            ("first 5 lines of log.txt", "head -n 5 log.txt"),
            ("print the top 10 lines of a.c", "head -n 10 a.c"),
        ],
    },
    Intent {
        template: "\"tail -n \" NUM \" \" PATH",
        examples: &[
            ("last 3 lines of log.txt", "tail -n 3 log.txt"),
            ("print the end of out.txt", "tail -n 10 out.txt"),
        ],
    },
    Intent {
        template: "\"grep -rl \" WORD \" .\"",
        examples: &[
            ("which files contain TODO", "grep -rl TODO ."),
            ("which files mention the word error", "grep -rl error ."),
            ("search the project for config", "grep -rl config ."),
        ],
    },
    Intent {
        template: "\"grep -n \" WORD \" \" PATH",
        examples: &[
            ("find the word error in app.log", "grep -n error app.log"),
            ("where does main.c mention exit", "grep -n exit main.c"),
        ],
    },
    Intent {
        template: "\"du -sh \" PATH",
        examples: &[
            ("how large is the docs folder", "du -sh docs"),
            ("size of data.bin", "du -sh data.bin"),
            ("disk usage of target", "du -sh target"),
        ],
    },
    Intent {
        template: "\"ls \" PATH \" | wc -l\"",
        examples: &[
            ("how many files are in lib", "ls lib | wc -l"),
            ("count the files in the docs folder", "ls docs | wc -l"),
        ],
    },
    Intent {
        template: "\"find . -name \" NAME",
        examples: &[("where is the file setup.py", "find . -name setup.py")],
    },
    Intent {
        template: "\"date\"",
        examples: &[
            ("what time is it", "date"),
            ("what day is it today", "date"),
            ("show the date", "date"),
        ],
    },
    Intent {
        template: "\"git log -1\"",
        examples: &[
            ("what was the last commit", "git log -1"),
            ("show the latest git commit message", "git log -1"),
        ],
    },
    Intent {
        template: "\"git log --oneline -\" NUM",
        examples: &[("the 5 most recent commits", "git log --oneline -5")],
    },
    Intent {
        template: "\"git status --short\"",
        examples: &[
            ("what changed in git", "git status --short"),
            ("which files are modified", "git status --short"),
        ],
    },
    Intent {
        template: "\"git branch --show-current\"",
        examples: &[("which git branch am I on", "git branch --show-current")],
    },
    Intent {
        template: "\"python3 -c 'print(\" EXPR \")'\"",
        examples: &[
            ("compute 6*7 in python", "python3 -c 'print(6*7)'"),
            ("what is 2**10", "python3 -c 'print(2**10)'"),
            ("calculate 100/8", "python3 -c 'print(100/8)'"),
        ],
    },
    Intent {
        template: "\"pwd\"",
        examples: &[
            ("which folder am I in", "pwd"),
            ("what is the current working directory", "pwd"),
        ],
    },
    Intent {
        template: "\"df -h .\"",
        examples: &[("how much disk space is free", "df -h .")],
    },
    Intent {
        template: "\"whoami\"",
        examples: &[("what is my user name", "whoami")],
    },
    Intent {
        template: "\"uname -a\"",
        examples: &[("which operating system and kernel is this", "uname -a")],
    },
];

/// Plain questions: answered without a tool.
pub(crate) const PLAIN: &[&str] = &[
    "what is the capital of Italy",
    "tell me a joke",
    "who wrote Faust",
    "explain what a CPU is",
    "name a big lake in Africa",
    "write a haiku about rain",
    "translate thank you to Spanish",
    "how do I make tea",
    "why is the sky blue",
    "what is an even number",
    "give me a synonym for happy",
    "hello, how are you",
];

/// Words that say nothing about the kind of request.
const STOP: &[&str] = &[
    "a", "an", "the", "is", "are", "was", "of", "in", "on", "this", "that", "what", "which", "how",
    "me", "my", "to", "do", "does", "for", "with", "please", "show", "i", "am", "it", "can", "you",
    "and", "be", "there", "use", "using", "tell", "many", "much", "have", "has",
];

/// Where a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// A command of this intent (index into [`INTENTS`]).
    Tool(usize),
    /// A plain answer.
    Answer,
    /// As near to a plain question as to a command: the model decides
    /// (its constrained next-action step), with the nearest command intent.
    Unsure(usize),
}

/// The words of `text` that carry meaning: lower case, a plural's `s`
/// dropped, a few synonyms folded; a path or file name (a dot or slash
/// inside) or a name in `entries` becomes `<path>`, an arithmetic
/// expression `<expr>`; numbers alone are dropped.
pub(crate) fn words(text: &str, entries: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for raw in text.split_whitespace() {
        let raw = raw.trim_matches(|c: char| ",;:!?\"'()`".contains(c));
        if raw.is_empty() {
            continue;
        }
        let is_expr = raw.chars().any(|c| c.is_ascii_digit())
            && raw.chars().any(|c| "+-*/%".contains(c))
            && raw
                .chars()
                .all(|c| c.is_ascii_digit() || "+-*/%.() ".contains(c));
        if is_expr {
            out.insert("<expr>".into());
            continue;
        }
        let inner_dot = raw.trim_end_matches('.').contains(['.', '/']);
        if inner_dot || entries.iter().any(|e| e == raw.trim_end_matches('.')) {
            out.insert("<path>".into());
        }
        if inner_dot {
            continue;
        }
        for w in raw.split(|c: char| !c.is_ascii_alphanumeric()) {
            let w = w.to_ascii_lowercase();
            if w.len() < 2 || w.chars().all(|c| c.is_ascii_digit()) || STOP.contains(&w.as_str()) {
                continue;
            }
            let w = match w.as_str() {
                "folder" | "dir" => "directory".to_string(),
                "big" | "huge" => "large".to_string(),
                _ if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") => {
                    w[..w.len() - 1].to_string()
                }
                _ => w,
            };
            out.insert(w);
        }
    }
    out
}

/// How near `example` is to the request's words: shared words first,
/// then fewer extra words. An example whose command takes a path counts
/// as naming one.
fn nearness(req: &BTreeSet<String>, example: &str, takes_path: bool) -> (usize, i64) {
    let mut ex = words(example, &[]);
    if takes_path {
        ex.insert("<path>".into());
    }
    let shared = req.intersection(&ex).count();
    (shared, -(ex.len() as i64))
}

/// Routes `request` by its nearest examples.
pub(crate) fn route(request: &str, entries: &[String]) -> Route {
    let req = words(request, entries);
    let mut best_tool: Option<(usize, (usize, i64))> = None;
    for (i, intent) in INTENTS.iter().enumerate() {
        for (ask, _) in intent.examples {
            let n = nearness(&req, ask, intent.template.contains("PATH"));
            if best_tool.is_none_or(|(_, b)| n > b) {
                best_tool = Some((i, n));
            }
        }
    }
    let plain = PLAIN
        .iter()
        .map(|q| nearness(&req, q, false).0)
        .max()
        .unwrap_or(0);
    match best_tool {
        Some((i, (shared, _))) if shared > plain => Route::Tool(i),
        Some((i, (shared, _))) if shared == plain && shared > 0 => Route::Unsure(i),
        _ => Route::Answer,
    }
}

/// The examples a constrained step shows: the intent's own, written as the
/// calls the grammar asks for (a tiny model copies a pattern far better
/// than it follows a rule), plus plain questions when the model decides.
pub(crate) fn examples_note(request: &str, intent: usize, with_plain: bool) -> String {
    let mut out = String::from("Examples:\n");
    if with_plain {
        for q in PLAIN.iter().take(3) {
            out.push_str(&format!("{q} -> {{\"tool\":\"answer\"}}\n"));
        }
    }
    if let Some(i) = INTENTS.get(intent) {
        // The nearest last: a tiny model copies the example it read last.
        let req = words(request, &[]);
        let mut examples: Vec<&(&str, &str)> = i.examples.iter().collect();
        examples.sort_by_key(|(ask, _)| nearness(&req, ask, false));
        for (ask, cmd) in examples {
            out.push_str(&format!(
                "{ask} -> {{\"tool\":\"terminal\",\"arguments\":{{\"command\":{}}}}}\n",
                json!(cmd)
            ));
        }
    }
    out.push_str("Reply for my request above the same way.");
    out
}

/// The grammar of a `terminal` call with the intent's command. Its slots
/// take what the request says where it says it: the paths it names (else
/// the workspace's entries and "."), its numbers, its words, its
/// arithmetic; free characters of the slot's kind otherwise.
pub(crate) fn command_grammar(intent: usize, request: &str, paths: &Slots) -> Option<String> {
    let template = INTENTS.get(intent)?.template;
    let alts = |items: &[String], free: &str| {
        if items.is_empty() {
            free.to_string()
        } else {
            items
                .iter()
                .map(|p| gbnf_literal(&json_inner(p)))
                .collect::<Vec<_>>()
                .join(" | ")
        }
    };
    let path_alts = if paths.named.is_empty() {
        let mut all = paths.entries.clone();
        all.push(".".into());
        alts(&all, "\".\"")
    } else {
        alts(&paths.named, "\".\"")
    };
    let tokens: Vec<&str> = request
        .split_whitespace()
        .map(|t| {
            t.trim_matches(|c: char| ",;:!?\"'()`".contains(c))
                .trim_end_matches('.')
        })
        .collect();
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for t in &tokens {
            if f(t) && !v.iter().any(|x| x == t) {
                v.push((*t).to_string());
            }
        }
        v
    };
    let nums =
        pick(&|t: &str| !t.is_empty() && t.len() <= 6 && t.chars().all(|c| c.is_ascii_digit()));
    let word_list = pick(&|t: &str| {
        t.len() >= 2
            && t.len() <= 40
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !t.chars().all(|c| c.is_ascii_digit())
            && !STOP.contains(&t.to_ascii_lowercase().as_str())
    });
    let exprs = pick(&|t: &str| words(t, &[]).contains("<expr>"));
    Some(format!(
        "root ::= \"{{\\\"tool\\\":\\\"terminal\\\",\\\"arguments\\\":{{\\\"command\\\":\\\"\" cmd \"\\\"}}}}\"\n\
         cmd ::= {template}\n\
         PATH ::= {path_alts}\n\
         NUM ::= {}\n\
         WORD ::= {}\n\
         NAME ::= [A-Za-z0-9_.*-]{{1,60}}\n\
         EXPR ::= {}\n",
        alts(&nums, "[0-9]{1,4}"),
        alts(&word_list, "[A-Za-z0-9_-]{1,40}"),
        alts(&exprs, "[0-9+*/%(). -]{1,60}"),
    ))
}

/// What a PATH slot may hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Slots {
    /// The working directory's entries: the first 60 by name, plain
    /// characters only, no hidden ones.
    pub(crate) entries: Vec<String>,
    /// Existing paths the request names.
    pub(crate) named: Vec<String>,
}

/// The paths a command may use.
pub(crate) fn workspace_paths(dir: &Path, request: &str) -> Slots {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 120
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
    };
    let out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| plain(n) && !n.starts_with('.'))
                .collect();
            names.sort();
            names.truncate(60);
            names
        })
        .unwrap_or_default();
    let mut named: Vec<String> = Vec::new();
    for raw in request.split_whitespace() {
        let t = raw
            .trim_matches(|c: char| ",;:!?\"'()`".contains(c))
            .trim_end_matches('.');
        if plain(t) && t != "." && !named.iter().any(|o| o == t) && dir.join(t).exists() {
            named.push(t.to_string());
        }
    }
    Slots {
        entries: out,
        named,
    }
}

/// The part of a tool result a user reads: a terminal result's stdout (its
/// stderr too when the command failed or printed nothing), else the whole
/// text; at most 20 lines and 1,500 characters.
pub(crate) fn quoted_output(result: &str) -> String {
    let body = match (
        result.find("--- stdout ---\n"),
        result.rfind("--- stderr ---\n"),
    ) {
        (Some(o), Some(e)) if o < e => {
            let status = result[..o].trim();
            let stdout = result[o + 15..e].trim_end();
            let stderr = result[e + 15..].trim_end();
            let failed = status != "exit code: 0";
            let mut s = String::new();
            if stdout != "(empty)" {
                s.push_str(stdout);
            }
            if (failed || s.is_empty()) && stderr != "(empty)" {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(stderr);
            }
            if failed {
                s = format!("{status}\n{s}");
            }
            s
        }
        _ => result.trim_end().to_string(),
    };
    let lines: Vec<&str> = body.lines().collect();
    let mut out = String::new();
    for (n, l) in lines.iter().enumerate() {
        if n == 20 || out.len() + l.len() > 1500 {
            out.push_str(&format!("… ({} more lines)\n", lines.len() - n));
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    if out.trim().is_empty() {
        out = "(no output)\n".into();
    }
    out
}

/// The lean answer after a command: which command ran, then its output
/// verbatim. (A lead written by SmolLM2-135M was measured and dropped: "I'm
/// sorry for your loss…", "The command to create a new file…".)
/// A call that never ran (denied, refused by the sandbox, failed to start)
/// is said to be so, not quoted as the command's output.
pub(crate) fn grounded_answer(command: &str, result: &str) -> String {
    let ran = result.contains("--- stdout ---\n") || !result.trim_start().starts_with("Error:");
    let verb = if ran { "printed" } else { "did not run" };
    format!("`{command}` {verb}:\n\n```\n{}```", quoted_output(result))
}

fn json_inner(s: &str) -> String {
    let q = json!(s).to_string();
    q[1..q.len() - 1].to_string()
}

/// A GBNF string literal of `text`.
fn gbnf_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "lean_tests.rs"]
mod tests;
