//! Checkpoints in the TUI (tmux): a turn edits two files with `filesystem`
//! and deletes one with `terminal`; the summary card, `/diff`, `/undo`
//! (byte for byte) and `/rewind 1` (the next request lacks the rewound
//! messages).
use super::{Tmux, write_profile_with};
use crate::support::{FakeLlm, Reply};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_summary_diff_undo_and_rewind() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile_with(&cfg, &["todo", "terminal", "filesystem"]);
    std::fs::write(cfg.join("config.toml"), "[security]\napproval = \"auto\"\n").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "alpha\nline two\n").unwrap();
    std::fs::write(ws.join("b.txt"), "bravo\n").unwrap();
    std::fs::write(ws.join("c.txt"), "charlie\nto be deleted\n").unwrap();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(32768))]);
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "alpha\nline 2 changed\n"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "b.txt", "content": "BRAVO\n"}),
    ));
    fake.push(Reply::tool_call("terminal", json!({"command": "rm c.txt"})));
    fake.push(Reply::text("Edited the files."));
    let command = format!(
        "cd {ws} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        ws = ws.display(),
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line("edit the files");
    t.wait_text("Edited the files.").await;
    let s = t.wait_text("turn 1 changed 3 files").await;
    assert!(s.contains("deleted c.txt"), "{s}");
    t.wait_idle().await;
    // The card expands into the diff (Ctrl+O: the last collapsible cell).
    t.keys(&["C-o"]);
    t.wait_text("+line 2 changed").await;
    t.wait_text("-to be deleted").await;
    t.keys(&["C-o"]);
    t.wait("the card collapsed", |s| !s.contains("-to be deleted"))
        .await;
    t.type_line("/diff");
    t.wait_text("+line 2 changed").await;
    t.wait_text("-to be deleted").await;
    t.type_line("/undo");
    t.wait_text("undid the file changes of turn 1").await;
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\nline two\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("b.txt")).unwrap(),
        "bravo\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("c.txt")).unwrap(),
        "charlie\nto be deleted\n"
    );
    t.type_line("/rewind 1");
    t.wait_text("rewound to before message 1").await;
    fake.push(Reply::text("A fresh start."));
    t.type_line("try again");
    t.wait_text("A fresh start.").await;
    let last = fake.chat_requests().last().cloned().unwrap();
    let text = last["messages"].to_string();
    assert!(text.contains("try again"), "{text}");
    assert!(
        !text.contains("edit the files") && !text.contains("Edited the files"),
        "rewound messages left out: {text}"
    );
    t.wait_idle().await;

    // Edit and resend: Esc Esc picks the last message into the composer.
    // Two reads (Esc Esc in one read is one Esc to the terminal parser).
    t.keys(&["Escape"]);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    t.keys(&["Escape"]);
    t.wait_text("editing message 1").await;
    t.keys(&["C-u"]);
    fake.push(Reply::text("Answer to the edit."));
    t.type_line("an edited message");
    t.wait_text("Answer to the edit.").await;
    let text = fake.chat_requests().last().unwrap()["messages"].to_string();
    assert!(text.contains("an edited message"), "{text}");
    assert!(
        !text.contains("try again"),
        "the edited message replaced it: {text}"
    );
    t.wait_idle().await;

    // A large paste shows as a placeholder; the text sent is unchanged.
    let big: String = (0..40)
        .map(|i| format!("pasted line {i:02} {}\n", "x".repeat(40)))
        .collect();
    let buf = dir.path().join("paste.txt");
    std::fs::write(&buf, &big).unwrap();
    assert!(
        t.cmd(&["load-buffer", buf.to_str().unwrap()])
            .status()
            .unwrap()
            .success()
    );
    assert!(
        t.cmd(&["paste-buffer", "-p", "-t", "navi"])
            .status()
            .unwrap()
            .success()
    );
    t.wait_text(&format!("[pasted {} chars, 40 lines]", "2,240"))
        .await;
    fake.push(Reply::text("Got the paste."));
    t.keys(&["Enter"]);
    t.wait_text("Got the paste.").await;
    t.wait_idle().await;
    let text = fake.chat_requests().last().unwrap()["messages"].to_string();
    assert!(
        text.contains(&big.replace('\n', "\\n")),
        "the whole paste was sent: {text}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
    t.wait_text("NAVI-EXIT:0").await;
}
