//! Runs the test suite's fake LLM server for manual and tmux end-to-end checks.
//!
//! ```text
//! cargo run --example fake_llm -- [--port N] [--script replies.json] [--quiet]
//! ```
//!
//! The script is a JSON array of replies, served in order to chat requests of
//! either protocol, e.g.
//! `[{"parts":[{"Thinking":"hmm"},{"Text":"hello there"}],"chunk_delay_ms":50},
//!   {"parts":[{"ToolCall":{"name":"todo","args":{"op":"list"}}}]},
//!   {"fault":{"Status":[500,"boom"]}}]`.
//! When the script runs out, every answer is "(fake: no scripted reply)".
//! Point navi at it with `OLLAMA_HOST=<url>` or `OPENAI_BASE_URL=<url>/v1`.

#[allow(dead_code)]
#[path = "../tests/support/fake_llm.rs"]
mod fake_llm;

use anyhow::{Context, bail};
use fake_llm::{FakeLlm, Reply};

const USAGE: &str = "usage: fake_llm [--port N] [--script replies.json] [--quiet]";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut port = 0u16;
    let mut script = None;
    let mut verbose = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let v = args.next().context("--port needs a number")?;
                port = v
                    .parse()
                    .with_context(|| format!("--port {v}: not a port number"))?;
            }
            "--script" => script = Some(args.next().context("--script needs a file")?),
            "--quiet" => verbose = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let fake = FakeLlm::bind(&format!("127.0.0.1:{port}"))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    fake.set_verbose(verbose);
    if let Some(path) = script {
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
        let replies: Vec<Reply> = serde_json::from_str(&text)
            .with_context(|| format!("{path}: not a JSON array of replies"))?;
        eprintln!("fake_llm: {} scripted replies from {path}", replies.len());
        replies.into_iter().for_each(|r| fake.push(r));
    }
    println!("{}", fake.base_url);
    eprintln!(
        "fake_llm: Ollama at {} , OpenAI-compatible at {} ; Ctrl-C to stop",
        fake.ollama_url(),
        fake.openai_url()
    );
    tokio::signal::ctrl_c().await?;
    Ok(())
}
