#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use std::path::Path;

fn parse(toml: &str) -> Config {
    let c = crate::config::parse_str(toml, Path::new("t.toml")).unwrap();
    validate(&c, "t.toml").unwrap();
    c
}

#[test]
fn presets_come_with_url_protocol_and_key_variable() {
    let c = Config::default();
    let a = c.provider("anthropic").unwrap();
    assert_eq!(a.protocol, BackendKind::Anthropic);
    assert_eq!(a.base_url, "https://api.anthropic.com/v1");
    assert_eq!(a.key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
    assert!(a.key_required && !a.configured);
    assert_eq!(
        c.provider("openai").unwrap().protocol,
        BackendKind::Responses
    );
    assert_eq!(
        c.provider("llama-server").unwrap().name,
        "local",
        "aliases name the preset"
    );
    assert_eq!(c.provider("ollama").unwrap().base_url, c.llm.ollama_host);
    for name in [
        "openrouter",
        "groq",
        "deepseek",
        "mistral",
        "gemini",
        "lmstudio",
        "vllm",
    ] {
        let p = c.provider(name).unwrap();
        assert_eq!(p.protocol, BackendKind::Openai, "{name}");
        assert!(p.base_url.starts_with("http"), "{name}");
    }
    assert!(c.provider("nosuch").is_none());
}

#[test]
fn tables_change_presets_and_add_providers() {
    let c = parse(
        r#"
[providers.anthropic]
base_url = "http://127.0.0.1:8080"
headers = { "anthropic-beta" = "x" }

[providers.work]
base_url = "https://llm.example.com/v1"
protocol = "responses"
api_key_env = "WORK_LLM_KEY"
"#,
    );
    let a = c.provider("anthropic").unwrap();
    assert_eq!(a.base_url, "http://127.0.0.1:8080");
    assert_eq!(a.headers, vec![("anthropic-beta".into(), "x".into())]);
    assert!(a.configured);
    let w = c.provider("work").unwrap();
    assert_eq!(w.protocol, BackendKind::Responses);
    assert_eq!(w.key_env.as_deref(), Some("WORK_LLM_KEY"));
    assert!(names(&c).contains(&"work".to_string()));
}

#[test]
fn a_new_provider_needs_url_and_protocol() {
    for (toml, key) in [
        (
            "[providers.x]\nprotocol = \"openai\"",
            "providers.x.base_url",
        ),
        (
            "[providers.x]\nbase_url = \"http://h/v1\"",
            "providers.x.protocol",
        ),
        (
            "[providers.x]\nbase_url = \"ftp://h\"\nprotocol = \"openai\"",
            "providers.x.base_url",
        ),
        (
            "[providers.x]\nbase_url = \"http://h\"\nprotocol = \"openai\"\napi_key_env = \"A B\"",
            "providers.x.api_key_env",
        ),
        (
            "[providers.x]\nbase_url = \"http://h\"\nprotocol = \"openai\"\napi_key_env = \"MY_LLM_CRED\"",
            "providers.x.api_key_env",
        ),
        ("[llm]\nprovider = \"nosuch\"", "llm.provider"),
    ] {
        let c = crate::config::parse_str(toml, Path::new("t.toml")).unwrap();
        let e = validate(&c, "t.toml").unwrap_err().to_string();
        assert!(e.contains(key), "{toml}: {e}");
    }
    let e = crate::config::parse_str("[providers.x]\nprotocol = \"smoke\"", Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml"), "{e}");
}

#[test]
fn the_default_provider_follows_provider_then_backend() {
    let mut c = Config::default();
    assert_eq!(c.default_provider(), ("ollama".into(), BackendKind::Ollama));
    c.llm.backend = BackendKind::Openai;
    assert_eq!(c.default_provider(), ("local".into(), BackendKind::Openai));
    c.llm.backend = BackendKind::Responses;
    assert_eq!(
        c.default_provider(),
        ("local".into(), BackendKind::Responses)
    );
    c.llm.backend = BackendKind::Anthropic;
    assert_eq!(c.default_provider().0, "anthropic");
    c.llm.provider = "groq".into();
    assert_eq!(c.default_provider(), ("groq".into(), BackendKind::Openai));
}

#[test]
fn keys_come_from_the_environment_then_the_file_and_never_print() {
    let mut c = Config::default();
    c.llm.openai_api_key = "sk-local".into();
    let stored: BTreeMap<String, Secret> = [
        ("anthropic".to_string(), Secret::new("from-file")),
        ("groq".to_string(), Secret::new("gsk-file")),
    ]
    .into();
    let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "from-env".to_string());
    let creds = credentials(&c, &stored, &env);
    let (k, src) = creds.get("anthropic").unwrap();
    assert_eq!(
        (k.expose(), src),
        ("from-env", &KeySource::Env("ANTHROPIC_API_KEY".into()))
    );
    assert_eq!(creds.get("groq").unwrap().1, KeySource::Stored);
    assert_eq!(creds.get("local").unwrap().1, KeySource::Config);
    assert!(creds.get("mistral").is_none());
    let shown = format!("{creds:?} {c:?}");
    assert!(
        !shown.contains("from-env") && !shown.contains("gsk-file"),
        "{shown}"
    );
    let hint = c.provider("mistral").unwrap().key_hint();
    assert!(
        hint.contains("MISTRAL_API_KEY") && hint.contains("navi keys set mistral"),
        "{hint}"
    );
}
