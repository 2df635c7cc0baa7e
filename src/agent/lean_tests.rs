use super::*;

fn entries() -> Vec<String> {
    ["README.md", "notes.txt", "src"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn template_of(route: Route) -> &'static str {
    match route {
        Route::Tool(i) => INTENTS[i].template,
        other => panic!("not a command: {other:?}"),
    }
}

#[test]
fn requests_route_to_the_nearest_command_template() {
    let e = entries();
    assert_eq!(
        template_of(route("how many lines are in notes.txt", &e)),
        "\"wc -l \" PATH"
    );
    assert_eq!(
        template_of(route("count the files in the src directory", &e)),
        "\"ls \" PATH \" | wc -l\""
    );
    assert_eq!(
        template_of(route("what is 5*9 in python", &e)),
        INTENTS[17].template
    );
    assert_eq!(template_of(route("what is the date today", &e)), "\"date\"");
    assert_eq!(
        template_of(route("show the first 2 lines of README.md", &e)),
        "\"head -n \" NUM \" \" PATH"
    );
}

#[test]
fn plain_questions_get_no_command() {
    let e = entries();
    for q in [
        "what is the capital of Spain",
        "who wrote Macbeth",
        "tell me a story",
        "how many wheels does a bicycle have",
        "how much does an elephant weigh",
        "",
    ] {
        assert_eq!(route(q, &e), Route::Answer, "{q}");
    }
    // As near to a plain question as to a command ("name"): the model's
    // own next-action step decides.
    assert!(matches!(
        route("name a long river in France", &e),
        Route::Unsure(_)
    ));
}

#[test]
fn words_fold_paths_expressions_plurals_and_synonyms() {
    let w = words(
        "How big are the files in docs/ and 3*4? (notes.txt)",
        &entries(),
    );
    for expected in ["<path>", "<expr>", "large", "file"] {
        assert!(w.contains(expected), "{expected} in {w:?}");
    }
    assert!(!w.contains("the") && !w.contains("3"));
    // A bare name of the workspace counts as a path, other words do not.
    assert!(words("list src", &entries()).contains("<path>"));
    assert!(!words("list things", &entries()).contains("<path>"));
}

#[test]
fn the_grammar_takes_slots_from_the_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join(".hidden"), "").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("with space"), "").unwrap();
    let ask = "print the first 3 lines of notes.txt";
    let slots = workspace_paths(dir.path(), ask);
    assert_eq!(slots.entries, vec!["notes.txt", "src"]);
    assert_eq!(slots.named, vec!["notes.txt"]);
    let Route::Tool(i) = route(ask, &slots.entries) else {
        panic!("no command");
    };
    let g = command_grammar(i, ask, &slots).unwrap();
    assert!(g.starts_with(
        "root ::= \"{\\\"tool\\\":\\\"terminal\\\",\\\"arguments\\\":{\\\"command\\\":\\\"\" cmd \"\\\"}}\"\n"
    ), "{g}");
    assert!(g.contains("cmd ::= \"head -n \" NUM \" \" PATH\n"), "{g}");
    assert!(g.contains("PATH ::= \"notes.txt\"\n"), "{g}");
    assert!(g.contains("NUM ::= \"3\"\n"), "{g}");
    // Nothing named: the workspace's entries and "."; no number: digits.
    let slots = workspace_paths(dir.path(), "how big is it");
    let g = command_grammar(i, "how big is it", &slots).unwrap();
    assert!(
        g.contains("PATH ::= \"notes.txt\" | \"src\" | \".\"\n"),
        "{g}"
    );
    assert!(g.contains("NUM ::= [0-9]{1,4}\n"), "{g}");
    let g = command_grammar(17, "what is 17*23, use python", &slots).unwrap();
    assert!(g.contains("EXPR ::= \"17*23\"\n"), "{g}");
    assert!(command_grammar(INTENTS.len(), "x", &slots).is_none());
}

#[test]
fn the_examples_note_puts_the_nearest_last() {
    let note = examples_note("compute 2+2 in python please", 17, false);
    let last = note.lines().rev().nth(1).unwrap();
    assert!(last.starts_with("compute 6*7 in python -> "), "{note}");
    assert!(!note.contains("\"answer\""));
    let note = examples_note("x", 0, true);
    assert!(note.contains("-> {\"tool\":\"answer\"}"), "{note}");
}

#[test]
fn the_answer_quotes_the_output() {
    let ok = "exit code: 0\n--- stdout ---\n7 notes.txt\n--- stderr ---\n(empty)";
    assert_eq!(
        grounded_answer("wc -l notes.txt", ok),
        "`wc -l notes.txt` printed:\n\n```\n7 notes.txt\n```"
    );
    let denied = "Error: denied: no terminal to ask for approval of 'terminal'";
    assert_eq!(
        grounded_answer("ls", denied),
        format!("`ls` did not run:\n\n```\n{denied}\n```")
    );
    let failed = "exit code: 1\n--- stdout ---\n(empty)\n--- stderr ---\nno such file";
    assert!(grounded_answer("cat x", failed).starts_with("`cat x` printed:"));
    assert_eq!(quoted_output(failed), "exit code: 1\nno such file\n");
    let empty = "exit code: 0\n--- stdout ---\n(empty)\n--- stderr ---\n(empty)";
    assert_eq!(quoted_output(empty), "(no output)\n");
    let long: String = (0..50).map(|n| format!("line {n}\n")).collect();
    let q = quoted_output(&format!(
        "exit code: 0\n--- stdout ---\n{long}--- stderr ---\n(empty)"
    ));
    assert!(
        q.ends_with("… (30 more lines)\n") && q.starts_with("line 0\n"),
        "{q}"
    );
    assert_eq!(quoted_output("plain result"), "plain result\n");
}
