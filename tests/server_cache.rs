//! Issue 36 items 5 and 6: what navi learns about a model server is kept
//! in the data dir (`servers.json`), so a warm `navi run -c` sends the
//! server exactly one request, the chat; a server whose identity changed
//! is learned again after an answer, a refused chat forgets it; and the
//! fixed prompt is counted right on a template that folds the system
//! message into the first user turn. The real binary against the fake
//! server, counting the requests it received.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::{Value, json};
use std::process::Stdio;
use support::fake_llm::count;
use support::{FakeLlm, Fault, Reply};
use tokio::process::Command;

const MODEL: &str = "cache-model";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "model": [MODEL], "temperature": 0.2,
            "enabled_tools": ["todo", "scratchpad"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(
            p.join("system_prompt.txt"),
            "You are the tester. Answer briefly and say what you did. ".repeat(8),
        )
        .unwrap();
        std::fs::write(dir.path().join("cfg/config.toml"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Env { dir }
    }

    fn kept(&self) -> Value {
        let text = std::fs::read_to_string(self.dir.path().join("data/servers.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Makes every kept entry due for a check.
    fn age(&self) {
        let mut v = self.kept();
        for (_, e) in v["servers"].as_object_mut().unwrap() {
            e["checked_at"] = json!(0);
        }
        let path = self.dir.path().join("data/servers.json");
        std::fs::write(path, v.to_string()).unwrap();
    }

    async fn navi(&self, fake: &FakeLlm, backend: &str, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_navi"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.dir.path().join("data"))
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("OPENAI_BASE_URL", fake.openai_url())
            .current_dir(self.dir.path().join("work"))
            .args(["--backend", backend])
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `navi run` with `args`; returns the requests the fake received
    /// during it ("METHOD path").
    async fn run(&self, fake: &FakeLlm, backend: &str, args: &[&str]) -> Vec<String> {
        let before = fake.requests().len();
        let mut all = vec!["run", "--profile", "tester"];
        all.extend_from_slice(args);
        let (code, _, err) = self.navi(fake, backend, &all).await;
        assert_eq!(code, 0, "{err}");
        fake.requests()[before..]
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }
}

fn props(build: &str, n_ctx: u64) -> Value {
    json!({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1,
           "build_info": build, "model_path": "/models/cache-model.gguf",
           "chat_template": "{{ bos_token }}{% for m in messages %}…{% endfor %}",
           "chat_template_caps": {"supports_tools": true}})
}

async fn llama_server() -> FakeLlm {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![(MODEL.into(), Some(8192))]);
    fake.set_props(Some(props("b100-aaaa", 8192)));
    fake.set_counting(true);
    fake
}

const CHAT: &str = "POST /v1/chat/completions";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_run_on_llama_server_sends_only_the_chat() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.push(Reply::text("first"));
    let cold = env.run(&fake, "openai", &["hello"]).await;
    for path in ["GET /v1/models", "GET /props", "POST /tokenize", CHAT] {
        assert!(cold.iter().any(|r| r == path), "{path} in {cold:?}");
    }
    for i in 0..2 {
        fake.push(Reply::text(format!("again {i}")));
        let warm = env.run(&fake, "openai", &["-c", "and again"]).await;
        assert_eq!(warm, vec![CHAT.to_string()], "warm run {i}");
    }
    // What was kept still shapes the request: llama-server's cache field.
    let chats = fake.chat_requests();
    let last = chats.last().unwrap();
    assert_eq!(last["cache_prompt"], json!(true), "{last}");
    assert_eq!(last["messages"].as_array().unwrap().len(), 6);
    let kept = env.kept();
    let entry = &kept["servers"][fake.openai_url()];
    assert_eq!(entry["props"]["build_info"], json!("b100-aaaa"));
    assert!(
        entry["props"].get("chat_template").is_none(),
        "kept as a hash"
    );
    assert!(!entry["counts"].as_array().unwrap().is_empty(), "{entry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_run_on_ollama_sends_only_the_chat() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![(MODEL.into(), Some(4096))]);
    fake.push(Reply::text("first"));
    let cold = env.run(&fake, "ollama", &["hello"]).await;
    assert_eq!(cold, ["GET /api/tags", "POST /api/show", "POST /api/chat"]);
    fake.push(Reply::text("second"));
    let warm = env.run(&fake, "ollama", &["-c", "again"]).await;
    assert_eq!(warm, ["POST /api/chat"]);
    let chats = fake.chat_requests();
    assert_eq!(chats[1]["options"]["num_ctx"], json!(4096), "{}", chats[1]);
    assert_eq!(chats[1]["model"], json!(MODEL));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_llama_server_is_learned_again_after_the_answer() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.push(Reply::text("first"));
    env.run(&fake, "openai", &["hello"]).await;
    let kept = env.kept()["servers"][fake.openai_url()].clone();
    // Due, same server: checked after the chat, kept counts survive.
    env.age();
    fake.push(Reply::text("second"));
    let same = env.run(&fake, "openai", &["-c", "again"]).await;
    assert_eq!(same[0], CHAT, "the check comes after the answer: {same:?}");
    assert!(same.contains(&"GET /props".to_string()), "{same:?}");
    let now = env.kept()["servers"][fake.openai_url()].clone();
    assert_eq!(now["identity"], kept["identity"]);
    assert_eq!(now["counts"], kept["counts"]);
    assert!(now["checked_at"].as_i64() > Some(0));
    // Another build with another window: everything learned again.
    fake.set_props(Some(props("b200-bbbb", 2048)));
    env.age();
    fake.push(Reply::text("third"));
    let changed = env.run(&fake, "openai", &["-c", "once more"]).await;
    assert_eq!(changed[0], CHAT, "{changed:?}");
    let now = env.kept()["servers"][fake.openai_url()].clone();
    assert_ne!(now["identity"], kept["identity"]);
    assert_eq!(now["props"]["build_info"], json!("b200-bbbb"));
    assert_eq!(
        now["props"]["default_generation_settings"]["n_ctx"],
        json!(2048)
    );
    assert_eq!(
        now["counts"],
        json!([]),
        "counts of another server are dropped"
    );
    // The next run counts again (new server, new counts), then is warm.
    fake.push(Reply::text("fourth"));
    let next = env.run(&fake, "openai", &["-c", "go on"]).await;
    assert!(next.contains(&"POST /tokenize".to_string()), "{next:?}");
    fake.push(Reply::text("fifth"));
    let warm = env.run(&fake, "openai", &["-c", "and on"]).await;
    assert_eq!(warm, vec![CHAT.to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_ollama_model_is_learned_again_after_the_answer() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![(MODEL.into(), Some(4096))]);
    fake.push(Reply::text("first"));
    env.run(&fake, "ollama", &["hello"]).await;
    // The model was pulled again: another digest, another window.
    fake.set_models(vec![(MODEL.into(), Some(2048))]);
    env.age();
    fake.push(Reply::text("second"));
    let checked = env.run(&fake, "ollama", &["-c", "again"]).await;
    assert_eq!(checked, ["POST /api/chat", "GET /api/tags"]);
    fake.push(Reply::text("third"));
    let next = env.run(&fake, "ollama", &["-c", "more"]).await;
    assert_eq!(next, ["POST /api/show", "POST /api/chat"], "tags are kept");
    let chats = fake.chat_requests();
    assert_eq!(chats[1]["options"]["num_ctx"], json!(4096));
    assert_eq!(chats[2]["options"]["num_ctx"], json!(2048));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_chat_forgets_what_was_kept() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.push(Reply::text("first"));
    env.run(&fake, "openai", &["hello"]).await;
    assert!(env.kept()["servers"].get(fake.openai_url()).is_some());
    fake.push(Reply::fault(Fault::Status(404, "model not found".into())));
    let (code, _, _) = env
        .navi(&fake, "openai", &["run", "--profile", "tester", "-c", "x"])
        .await;
    assert_eq!(code, 1);
    assert!(env.kept()["servers"].get(fake.openai_url()).is_none());
    fake.push(Reply::text("back"));
    let after = env.run(&fake, "openai", &["-c", "again"]).await;
    assert!(after.contains(&"GET /props".to_string()), "{after:?}");
}

/// Gemma 3's template renders the system message inside the first user
/// turn and nothing of it without one: the base is counted with a user
/// turn present (`navi context` said 3 tokens before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_context_counts_the_base_on_a_folding_template() {
    let env = Env::new();
    let fake = llama_server().await;
    let mut p = props("b1", 8192);
    p["chat_template"] = json!("{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}");
    p["chat_template_caps"]["supports_tools"] = json!(false);
    fake.set_props(Some(p));
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["context", "--profile", "tester", "--json"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    let costs: Value = serde_json::from_str(&out).unwrap();
    let counted = costs[0]["counted"].as_u64().unwrap();
    // The server's count of a real first request, less its user turn.
    fake.push(Reply::text("hi"));
    env.run(&fake, "openai", &["hi"]).await;
    let first = fake.chat_requests()[0].clone();
    let full = count::prompt_tokens_as(&first, true);
    let user_turn = count::tokens_of("hi<end_of_turn>\n<start_of_turn>model\n");
    let server = full - user_turn;
    let off = (counted as f64 - server as f64).abs() / server as f64;
    assert!(off <= 0.05, "navi context {counted}, server {server}");
    assert!(server > 100, "the system prompt is counted: {server}");
}

/// Issue 36 item 4: llama-server with a sliding-window model re-reads the
/// previous answer on the next call (it cannot roll that cache back).
/// Seen once, navi re-sends the conversation after each answer with an
/// empty user message, so the next message is all the server reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_rereads_answers_is_warmed_after_each_answer() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.push(Reply::text("first answer").with_usage(100, 40));
    env.run(&fake, "openai", &["hello"]).await;
    // The server read 54 tokens for a three-word message: the answer again.
    fake.push(
        Reply::text("second answer")
            .with_usage(150, 20)
            .with_cache(96, 0),
    );
    fake.push(Reply::text("x").with_usage(172, 1).with_cache(170, 0));
    let second = env.run(&fake, "openai", &["-c", "and then?"]).await;
    assert_eq!(second, [CHAT, CHAT], "the answer, then the warm call");
    let kept = env.kept()["servers"][fake.openai_url()]["rereads_answers"].clone();
    assert_eq!(kept, json!([MODEL]));
    fake.push(
        Reply::text("third answer")
            .with_usage(185, 10)
            .with_cache(180, 0),
    );
    fake.push(Reply::text("x").with_usage(200, 1).with_cache(195, 0));
    let third = env.run(&fake, "openai", &["-c", "one more"]).await;
    assert_eq!(third, [CHAT, CHAT]);
    let chats = fake.chat_requests();
    let (warm, next) = (&chats[2], &chats[3]);
    assert_eq!(warm["max_tokens"], json!(1), "{warm}");
    let wm = warm["messages"].as_array().unwrap();
    let nm = next["messages"].as_array().unwrap();
    assert_eq!(wm.last().unwrap()["role"], json!("user"));
    assert_eq!(wm.last().unwrap()["content"], json!(""));
    assert_eq!(nm.last().unwrap()["content"], json!("one more"));
    // Everything before the user's message is the same, byte for byte.
    assert_eq!(wm.len(), nm.len());
    assert_eq!(wm[..wm.len() - 1], nm[..nm.len() - 1]);
    assert_eq!(warm["tools"], next["tools"]);
    // `navi context` says the server's setup defeats its cache.
    let (code, out, err) = env
        .navi(&fake, "openai", &["context", "--profile", "tester"])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("re-reads the previous answer") && out.contains("--swa-full"),
        "{out}"
    );
    // The warm call is not a message of the session.
    let (code, out, _) = env.navi(&fake, "openai", &["sessions", "show", "1"]).await;
    assert_eq!(code, 0);
    assert!(
        !out.contains("\"x\"") && out.matches("answer").count() >= 3,
        "{out}"
    );
}

/// A server that keeps the answer, or one without llama-server's `/props`
/// (a hosted API would bill the extra call), is never warmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_keep_answers_or_are_not_llama_server_are_not_warmed() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.push(Reply::text("first").with_usage(100, 40));
    env.run(&fake, "openai", &["hello"]).await;
    fake.push(Reply::text("second").with_usage(150, 20).with_cache(140, 0));
    assert_eq!(env.run(&fake, "openai", &["-c", "again"]).await, [CHAT]);
    assert!(env.kept()["servers"][fake.openai_url()]["rereads_answers"].is_null());

    let env = Env::new();
    let hosted = FakeLlm::start().await;
    hosted.set_models(vec![(MODEL.into(), Some(8192))]);
    hosted.push(Reply::text("first").with_usage(100, 40));
    env.run(&hosted, "openai", &["hello"]).await;
    hosted.push(Reply::text("second").with_usage(150, 20).with_cache(10, 0));
    hosted.push(Reply::text("third").with_usage(180, 20).with_cache(10, 0));
    let runs = [
        env.run(&hosted, "openai", &["-c", "again"]).await,
        env.run(&hosted, "openai", &["-c", "and again"]).await,
    ];
    for r in runs {
        assert_eq!(r.iter().filter(|p| *p == CHAT).count(), 1, "{r:?}");
    }
}

/// Issue 36 item 4 (stretch): with `--slot-save-path`, the slot is saved
/// after each answer, and a session resumed on a restarted server gets its
/// cache back from the file before its first message, which goes to that
/// slot. A server that cannot save slots is asked once, then never again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_slot_comes_back_after_a_server_restart() {
    let env = Env::new();
    let fake = llama_server().await;
    fake.set_slots(1, true);
    fake.push(Reply::text("first"));
    let first = env.run(&fake, "openai", &["hello"]).await;
    let slot_calls = |r: &[String]| -> Vec<String> {
        r.iter().filter(|p| p.contains("/slots")).cloned().collect()
    };
    assert_eq!(
        slot_calls(&first),
        ["GET /slots", "POST /slots/0?action=save"]
    );
    let saved = fake.requests().last().unwrap().body["filename"].clone();
    let name = saved.as_str().unwrap().to_string();
    assert!(
        name.starts_with("navi-") && name.ends_with(".bin"),
        "{name}"
    );
    // Same server, slot in use: nothing restored, saved again.
    fake.push(Reply::text("second"));
    let second = env.run(&fake, "openai", &["-c", "again"]).await;
    assert_eq!(
        slot_calls(&second),
        ["GET /slots", "GET /slots", "POST /slots/0?action=save"]
    );
    assert!(fake.chat_requests()[1].get("id_slot").is_none());
    // Restarted: restored before the chat, which goes to that slot.
    fake.restart_slots();
    fake.push(Reply::text("third"));
    let third = env.run(&fake, "openai", &["-c", "once more"]).await;
    assert_eq!(
        third[..3],
        ["GET /slots", "POST /slots/0?action=restore", CHAT]
    );
    let restore = fake
        .requests()
        .into_iter()
        .find(|r| r.path.contains("action=restore"))
        .unwrap();
    assert_eq!(restore.body["filename"], json!(name));
    assert_eq!(fake.chat_requests()[2]["id_slot"], json!(0));
    assert_eq!(
        env.kept()["servers"][fake.openai_url()]["slot_save"],
        json!(true)
    );

    // Without --slot-save-path: one refused save, then no slot request.
    let env = Env::new();
    let plain = llama_server().await;
    plain.set_slots(1, false);
    plain.push(Reply::text("first"));
    let first = env.run(&plain, "openai", &["hello"]).await;
    assert!(
        first.contains(&"POST /slots/0?action=save".to_string()),
        "{first:?}"
    );
    for q in ["again", "more"] {
        plain.push(Reply::text("x"));
        assert_eq!(env.run(&plain, "openai", &["-c", q]).await, [CHAT]);
    }
    assert_eq!(
        env.kept()["servers"][plain.openai_url()]["slot_save"],
        json!(false)
    );
}
