//! Scripting with `navi run` (issue 17): streaming into pipes, stdin with a
//! prompt, `-f` attachments, per-run flags. The real binary against the
//! fake LLM server and a real SQLite file.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support;
use crate::support;

use cli_support::{Env, last_user};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use support::{FakeLlm, Fault, Reply};
use tokio::io::AsyncReadExt;

#[tokio::test]
async fn answer_streams_into_a_pipe_chunk_by_chunk() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("alpha beta gamma delta epsilon zeta").with_delay(400));
    let mut child = env
        .cmd(&fake, "ollama")
        .args(["run", "-p", "tester", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("alpha") {
        let n = stdout.read(&mut buf).await.unwrap();
        assert!(n > 0, "stdout ended before the first chunk");
        seen.extend_from_slice(&buf[..n]);
    }
    let first = String::from_utf8_lossy(&seen).into_owned();
    assert!(
        !first.contains("zeta"),
        "the first chunk came together with the last: {first:?}"
    );
    stdout.read_to_end(&mut seen).await.unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&seen).trim(),
        "alpha beta gamma delta epsilon zeta"
    );
}

#[tokio::test]
async fn a_mid_stream_error_keeps_what_was_shown_on_stdout() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::text("one two three four five six seven eight")
            .with_fault(Fault::ErrorLine("model crashed".into())),
    );
    let o = env
        .run(&fake, "ollama", &["run", "-p", "tester", "go"])
        .await;
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stdout.starts_with("one two"), "{:?}", o.stdout);
    assert!(o.stdout.ends_with('\n'), "{:?}", o.stdout);
    assert!(o.stderr.contains("model crashed"), "{}", o.stderr);
    assert!(!o.stdout.contains("model crashed"));
}

#[tokio::test]
async fn piped_text_and_a_prompt_are_both_sent() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("summary"));
    let o = env
        .run_stdin(
            &fake,
            &["run", "-p", "tester", "summarise this"],
            b"line one\nline two\n",
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.trim(), "summary");
    let reqs = fake.chat_requests();
    assert_eq!(
        last_user(&reqs[0])["content"],
        "summarise this\n\nstdin:\n```\nline one\nline two\n```"
    );
    // Without an argument, stdin is the message (as with `-`).
    fake.push(Reply::text("ok"));
    let o = env
        .run_stdin(&fake, &["run", "-p", "tester"], b"just stdin\n")
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(last_user(&fake.chat_requests()[1])["content"], "just stdin");
}

#[tokio::test]
async fn large_piped_input_becomes_a_session_file_with_a_preview() {
    let env = Env::new();
    std::fs::write(
        env.path("cfg/config.toml"),
        "[session_files]\ninline_max_kb = 1\n",
    )
    .unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("seen"));
    let big: String = (0..400).map(|i| format!("log line {i}\n")).collect();
    let o = env
        .run_stdin(
            &fake,
            &["run", "-p", "tester", "find errors"],
            big.as_bytes(),
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let content = last_user(&fake.chat_requests()[0])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.starts_with("find errors\n\nstdin.txt (first lines"),
        "{content}"
    );
    assert!(content.contains("log line 0\n"), "{content}");
    assert!(!content.contains("log line 399"), "{content}");
    let note = content
        .split("[Uploaded files on disk:\n- stdin.txt → ")
        .nth(1)
        .unwrap();
    let path = PathBuf::from(note.trim_end_matches(']'));
    assert!(path.starts_with(env.path("data/session_files")), "{path:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), big);
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

async fn files_reach_the_model(backend: &str) {
    let env = Env::new();
    std::fs::write(env.path("notes.md"), "remember `x`\n").unwrap();
    std::fs::write(env.path("shot.png"), PNG).unwrap();
    std::fs::write(env.path("data.bin"), [0u8, 159, 146, 150]).unwrap();
    let fake = FakeLlm::start().await;
    // The model must take images (a model without "vision" is refused).
    fake.set_capabilities(&["completion", "tools", "vision"]);
    fake.push(Reply::text("done"));
    let o = env
        .run(
            &fake,
            backend,
            &[
                "run", "-p", "tester", "-f", "notes.md", "--file", "shot.png", "-f", "data.bin",
                "look",
            ],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let req = &fake.chat_requests()[0];
    let user = last_user(req);
    let b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAAA=";
    let text = if backend == "ollama" {
        assert_eq!(user["images"], json!([b64]));
        user["content"].as_str().unwrap().to_string()
    } else {
        assert_eq!(
            user["content"][1]["image_url"]["url"],
            format!("data:image/png;base64,{b64}")
        );
        user["content"][0]["text"].as_str().unwrap().to_string()
    };
    assert!(
        text.starts_with("look\n\nnotes.md:\n```\nremember `x`\n```"),
        "{text}"
    );
    assert!(
        text.contains("[Uploaded files on disk:\n- data.bin → "),
        "{text}"
    );
    let stored = std::fs::read_dir(env.path("data/session_files"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("data.bin");
    assert_eq!(std::fs::read(stored).unwrap(), vec![0u8, 159, 146, 150]);
}

#[tokio::test]
async fn files_reach_the_model_ollama() {
    files_reach_the_model("ollama").await;
}

#[tokio::test]
async fn files_reach_the_model_openai() {
    files_reach_the_model("openai").await;
}

#[tokio::test]
async fn bad_attachments_are_usage_errors_and_nothing_is_sent() {
    let env = Env::new();
    std::fs::write(env.path("tool"), b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0").unwrap();
    let fake = FakeLlm::start().await;
    for (file, says) in [("tool", "executables"), ("missing.txt", "cannot read")] {
        let o = env
            .run(&fake, "ollama", &["run", "-p", "tester", "-f", file, "x"])
            .await;
        assert_eq!(o.code, 2, "{file}: {}", o.stderr);
        assert!(
            o.stderr.contains(says) && o.stderr.contains(file),
            "{}",
            o.stderr
        );
    }
    assert!(fake.chat_requests().is_empty());
}

#[tokio::test]
async fn per_run_flags_shape_the_request() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), None), ("other".into(), None)]);
    fake.push(Reply::text("a"));
    let o = env
        .run(
            &fake,
            "ollama",
            &[
                "run",
                "-p",
                "tester",
                "-m",
                "other",
                "--system",
                "Answer in French.",
                "--temperature",
                "0.9",
                "--max-tokens",
                "50",
                "--no-tools",
                "--no-plan",
                "hi",
            ],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    fake.push(Reply::text("b"));
    let o = env
        .run(
            &fake,
            "openai",
            &["run", "-c", "--max-tokens", "7", "again"],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let reqs = fake.chat_requests();
    let r = &reqs[0];
    assert_eq!(r["model"], "other");
    // The --system text follows the profile's prompt; the list of the other
    // profiles comes after it.
    let system = r["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("TEST-PERSONA\n\n---\n\nTESTER-PROMPT\n\nAnswer in French.\n\n"),
        "{system}"
    );
    assert_eq!(r["options"]["temperature"], json!(0.9));
    assert_eq!(r["options"]["num_predict"], json!(50));
    assert!(r.get("tools").is_none(), "{r}");
    // -c continued the session: the first exchange is in the context.
    let r = &reqs[1];
    assert_eq!(r["max_tokens"], json!(7));
    assert_eq!(
        r["temperature"],
        json!(0.2),
        "tweaks do not outlive their run"
    );
    let contents: Vec<&str> = r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        contents.contains(&"hi") && contents.contains(&"again"),
        "{contents:?}"
    );
    assert!(r["tools"].as_array().is_some_and(|t| !t.is_empty()));
}

#[tokio::test]
async fn no_save_writes_no_session_and_bad_flags_are_usage_errors() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("ephemeral"));
    let o = env
        .run(&fake, "ollama", &["run", "-p", "tester", "--no-save", "hi"])
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.trim(), "ephemeral");
    let o = env
        .run(&fake, "ollama", &["sessions", "list", "--json"])
        .await;
    assert_eq!(serde_json::from_str::<Value>(&o.stdout).unwrap(), json!([]));
    for args in [
        &["run", "--approve", "termnal", "x"][..],
        &["run", "--temperature", "hot", "x"],
        &["run", "--no-save", "-c", "x"],
        &["run", "--max-tokens", "0", "x"],
    ] {
        let o = env.run(&fake, "ollama", args).await;
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
    }
    let o = env
        .run(&fake, "ollama", &["run", "--approve", "termnal", "x"])
        .await;
    assert!(o.stderr.contains("did you mean 'terminal'"), "{}", o.stderr);
    assert_eq!(fake.chat_requests().len(), 1);
}
