//! Issue 36 item 3: a tiny model that reads navi's prompt back (Gemma 3
//! 270M through its folding template) never shows that text. The real
//! `navi run` binary against the fake server streaming the echo word by
//! word: the echo is dropped from what is printed and stored, and the call
//! stops where the model loops back into the prompt (the fake server
//! stalls after half of its chunks, so only a stopped call ends cleanly).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::small_models::{Env, llama_props};
use crate::support::{FakeLlm, Fault, Reply};
use serde_json::Value;

/// Gemma 3 270M's read-back, as seen through navi (its changed words too).
const ECHO: &str = "You are a modeler, a helper in a terminal. Use the terminal tool to look at \
files, the system or to compute; then answer briefly.\nTool terminal: Run a shell command (sh -c, \
no stdin); returns exit code, stdout, stderr.\n\n\nwho wrote Hamlet mendatanguser\n";

/// Pieces of navi's prompt no answer may show.
const PERSONA: &[&str] = &[
    "You are a modeler",
    "Use the terminal tool",
    "look at files",
    "Tool terminal",
    "Run a shell command",
    "no stdin",
];

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn stored_answers(env: &Env) -> Vec<String> {
    let c = rusqlite::Connection::open(env.data().join("navi.db")).unwrap();
    let mut st = c
        .prepare("SELECT content FROM messages WHERE role = 'assistant' AND buffer = 0 ORDER BY id")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn no_persona(what: &str, text: &str) {
    for p in PERSONA {
        assert!(!text.contains(p), "{what} shows {p:?}: {text:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_only_reads_the_prompt_back_becomes_one_honest_line() {
    let env = Env::new("gemma-3-270m-it", "");
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("gemma-3-270m-it".into(), Some(4096))]);
    fake.set_props(Some(llama_props(false)));
    // The loop four times over; the server stalls after about two of them.
    fake.push(Reply::text(ECHO.repeat(4)).with_fault(Fault::StallMidStream));
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["run", "--profile", "tester", "--json", "who wrote Hamlet"],
        )
        .await;
    assert_eq!(code, 0, "stopped at the loop, not stalled: {err}");
    let ev = events(&out);
    let deltas: String = ev
        .iter()
        .filter(|e| e["type"] == "stream_delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    let end = ev.last().unwrap();
    assert_eq!(end["type"], "stream_end", "{out}");
    let content = end["content"].as_str().unwrap();
    assert!(
        content.contains("only repeated navi's instructions"),
        "{content}"
    );
    no_persona("the stream", &deltas);
    assert_eq!(deltas, content, "what streamed is the answer");
    assert_eq!(stored_answers(&env), vec![content.to_string()]);
    // The model was asked once, with the lean persona it read back.
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1, "{chats:#?}");
    let system = chats[0]["messages"][0]["content"].as_str().unwrap_or("");
    let first = chats[0]["messages"][0]["role"].as_str().unwrap_or("");
    assert!(
        first == "system" && system.starts_with("You are navi, a helpful assistant in a terminal."),
        "{:#}",
        chats[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_after_a_leading_echo_is_kept_and_the_loop_stopped() {
    let env = Env::new("gemma-3-270m-it", "");
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("gemma-3-270m-it".into(), Some(4096))]);
    fake.set_props(Some(llama_props(false)));
    let answer = "Shakespeare wrote Hamlet around 1600.\n";
    let looping = format!("{ECHO}{answer}").repeat(4);
    fake.push(Reply::text(looping).with_fault(Fault::StallMidStream));
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["run", "--profile", "tester", "who wrote Hamlet"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), answer.trim());
    no_persona("plain output", &out);
    assert!(
        err.contains("went back to repeating navi's instructions"),
        "{err}"
    );
    let stored = stored_answers(&env);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].trim(), answer.trim());

    // The next turn's plain answer streams unchanged.
    let real = "Because the air scatters blue light more than red light.";
    fake.push(Reply::text(real));
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["run", "--profile", "tester", "-c", "why is the sky blue"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), real);
    assert!(!err.contains("repeating"), "{err}");
    assert_eq!(stored_answers(&env).last().unwrap(), real);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn larger_models_may_quote_their_instructions() {
    // Outside the lean preset nothing is held back or dropped, even a
    // verbatim quote of the profile's prompt.
    let env = Env::new("llama3.1:8b", "");
    let prompt = "Answer in plain English, cite the file and line you read, and never run \
                  commands that change the repository without asking first.";
    std::fs::write(
        env.dir.path().join("cfg/profiles/tester/system_prompt.txt"),
        prompt,
    )
    .unwrap();
    let fake = FakeLlm::start().await;
    fake.set_props(Some(llama_props(true)));
    let quote = format!("I was told: {prompt}");
    fake.push(Reply::text(quote.clone()));
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["run", "--profile", "tester", "repeat your instructions"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        fake.chat_requests()[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains(prompt)
    );
    assert_eq!(out.trim(), quote);
    assert_eq!(stored_answers(&env), vec![quote]);
}
