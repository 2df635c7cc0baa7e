#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::config::{Credentials, KeySource, Secret};

fn config() -> Config {
    let mut c = Config::default();
    c.llm.ollama_host = "http://127.0.0.1:1".into();
    c.credentials = Credentials {
        keys: [(
            "groq".to_string(),
            (Secret::new("gsk"), KeySource::Env("GROQ_API_KEY".into())),
        )]
        .into(),
    };
    c
}

#[tokio::test]
async fn provider_prefixes_route_and_bare_names_go_to_the_default() {
    let r = Router::new(&config());
    assert_eq!(
        r.route("groq/llama-3.3-70b").await.unwrap(),
        ("groq".into(), "llama-3.3-70b".into())
    );
    assert_eq!(
        r.route("openrouter/anthropic/claude-x").await.err().map(|e| e.to_string()),
        Some(
            "no API key for openrouter: set OPENROUTER_API_KEY or run `navi keys set openrouter` (the key is stored in Navi's data dir, readable only by you)"
                .into()
        )
    );
    assert_eq!(
        r.route("qwen3:8b").await.unwrap(),
        ("ollama".into(), "qwen3:8b".into())
    );
    // An unknown prefix while the default server cannot say: both named.
    let e = r.route("hf.co/x/y").await.unwrap_err().to_string();
    assert!(
        e.contains("unknown provider 'hf.co'") && e.contains("nor could ollama say"),
        "{e}"
    );
    assert_eq!(r.provider_of("groq/m"), "groq");
    assert_eq!(r.provider_of("m"), "ollama");
    assert_eq!(r.descriptor_for("groq/m").kind, BackendKind::Openai);
    assert_eq!(r.descriptor_for("m").kind, BackendKind::Ollama);
    assert_eq!(r.kind(), BackendKind::Ollama);
    assert_eq!(r.base_url(), "http://127.0.0.1:1");
}

#[test]
fn the_picker_asks_the_default_configured_and_keyed_providers() {
    let mut c = config();
    c.providers.insert(
        "work".into(),
        crate::config::ProviderConfig {
            base_url: Some("http://127.0.0.1:2/v1".into()),
            protocol: Some(BackendKind::Openai),
            ..Default::default()
        },
    );
    let r = Router::new(&c);
    assert_eq!(r.in_use(), ["ollama", "groq", "work"]);
    c.llm.backend = BackendKind::Responses;
    let r = Router::new(&c);
    assert_eq!(
        (r.default.as_str(), r.kind()),
        ("local", BackendKind::Responses)
    );
    assert_eq!(r.descriptor_for("gpt-x").kind, BackendKind::Responses);
}
