use super::*;

const OK: &str = r#"{"id":"p","name":"P","description":"d","enabled_tools":["todo"],"model":"m1"}"#;

#[test]
fn defaults_and_string_model_wrapped() {
    let p = parse(OK, "prompt", None, "f", "p", "test").unwrap();
    assert_eq!(p.model, vec!["m1".to_string()]);
    assert_eq!(p.max_iterations, 20);
    assert!(p.think_enabled && p.iteration_budget_enabled && p.goal_anchoring_enabled);
    assert_eq!((p.goal_anchoring_interval, p.anti_stall_threshold), (5, 8));
    assert!(!p.planning_enabled && !p.step_validation_enabled && !p.planning_phase2_enabled);
    assert!(p.planning_phase1_enabled && p.planning_phase3_enabled);
    assert_eq!(p.temperature, 0.7);
}

#[test]
fn type_errors_name_the_key() {
    let bad = r#"{"id":"p","name":"P","description":"d","enabled_tools":["todo"],"max_iterations":"ten"}"#;
    let e = parse(bad, "x", None, "f.json", "p", "t").unwrap_err();
    assert_eq!(e.key, "max_iterations");
    assert!(e.to_string().contains("f.json"));
    let bad = r#"{"id":"p","name":"P","description":"d"}"#;
    assert_eq!(
        parse(bad, "x", None, "f", "p", "t").unwrap_err().key,
        "enabled_tools"
    );
    let bad = r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"think_enabld":true}"#;
    assert_eq!(
        parse(bad, "x", None, "f", "p", "t").unwrap_err().key,
        "think_enabld"
    );
    let e = parse("{not json", "x", None, "f", "p", "t").unwrap_err();
    assert!(e.why.contains("invalid JSON"));
    assert!(
        parse(OK, "  ", None, "f", "p", "t").is_err(),
        "empty prompt rejected"
    );
    assert!(
        parse(OK, "x", None, "f", "other", "t").is_err(),
        "id must match dir"
    );
}

#[test]
fn broken_user_profile_is_skipped_others_load() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::write(good.join("config.json"), OK.replace("\"p\"", "\"good\"")).unwrap();
    std::fs::write(good.join("system_prompt.txt"), "be good").unwrap();
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("config.json"), r#"{"id":"bad","name":1}"#).unwrap();
    std::fs::write(bad.join("system_prompt.txt"), "x").unwrap();
    let reg = ProfileRegistry::load(Some(dir.path()));
    assert!(reg.get("good").is_some());
    assert!(reg.get("bad").is_none());
    assert_eq!(reg.errors.len(), 1, "{:?}", reg.errors);
    assert_eq!(reg.errors[0].key, "name");
}

/// Every shipped profile loads, and what it loads is what its files say:
/// each key of `config.json` equals the same field of the `Profile` (a
/// string `model` becomes a one-item list), the shipped files set every
/// key, and the prompts are the trimmed files.
#[test]
fn shipped_profiles_load_as_written() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let reg = ProfileRegistry::load(None);
    assert!(reg.errors.is_empty(), "{:?}", reg.errors);
    let mut ids: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    assert_eq!(reg.ids(), ids);
    for id in &ids {
        let dir = root.join(id);
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap())
                .unwrap();
        let p = reg.get(id).unwrap();
        assert_eq!(p.source, "built-in");
        let Value::Object(loaded) = serde_json::to_value(p).unwrap() else {
            panic!("a profile serialises to an object");
        };
        let Value::Object(file) = file else {
            panic!("{id}: config.json is an object");
        };
        let mut file_keys: Vec<&String> = file.keys().collect();
        let mut loaded_keys: Vec<&String> = loaded.keys().filter(|k| *k != "source").collect();
        file_keys.sort();
        loaded_keys.sort();
        assert_eq!(
            file_keys, loaded_keys,
            "{id}: shipped profiles set every key"
        );
        for (k, v) in &file {
            let want = match (k.as_str(), v) {
                ("model", Value::String(s)) => serde_json::json!([s]),
                _ => v.clone(),
            };
            assert_eq!(loaded[k], want, "{id}: {k}");
        }
        let prompt = std::fs::read_to_string(dir.join("system_prompt.txt")).unwrap();
        assert_eq!(p.system_prompt, prompt.trim(), "{id}");
        let sub =
            std::fs::read_to_string(dir.join("subagent_system_prompt.txt")).unwrap_or_default();
        assert_eq!(p.subagent_system_prompt, sub.trim(), "{id}");
    }
    let dev = reg.get("developer").unwrap();
    assert_eq!(dev.model, ["gemma4:31b-cloud", "gemma4:26b-a4b-it-q4_K_M"]);
    assert_eq!((dev.temperature, dev.max_iterations), (0.45, 40));
    assert_eq!(
        (dev.goal_anchoring_interval, dev.anti_stall_threshold),
        (6, 8)
    );
    assert!(dev.planning_enabled && dev.planning_phase2_enabled && dev.subagent_planning_enabled);
}

fn err(json: &str) -> ProfileError {
    parse(json, "prompt", None, "/u/p/config.json", "p", "t").unwrap_err()
}

#[test]
fn errors_name_file_line_key_value_and_fix() {
    let bad = "{\n  \"id\": \"p\", \"name\": \"P\", \"description\": \"d\",\n  \"max_iterations\": \"ten\",\n  \"enabled_tools\": []\n}";
    let e = err(bad);
    assert_eq!(e.key, "max_iterations");
    let text = e.to_string();
    for want in [
        "/u/p/config.json",
        "line 3",
        "\"ten\"",
        "whole number",
        "docs/profiles.md",
    ] {
        assert!(text.contains(want), "{want:?} in {text}");
    }
    assert!(!text.contains("u32"), "no Rust type names: {text}");

    let e = err(
        "{\"id\":\"p\",\"name\":\"P\",\"description\":\"d\",\n\"enabled_tools\":[],\n\"think_enabld\":true}",
    );
    assert_eq!(e.key, "think_enabld");
    assert!(e.why.contains("line 3"), "{e}");
    assert!(e.why.contains("did you mean 'think_enabled'"), "{e}");

    // Two bad values: the first in the file is the one reported.
    let e = err(r#"{"think_enabled":3,"anti_stall_enabled":"x","id":"p"}"#);
    assert_eq!(e.key, "think_enabled");
    assert!(e.why.contains("true or false"), "{e}");

    let e = err(r#"{"id":"p","name":"P","description":"d","enabled_tools":"todo"}"#);
    assert_eq!(e.key, "enabled_tools");
    assert!(
        e.why.contains("list of strings") && e.why.contains("\"todo\""),
        "{e}"
    );
    let e = err(r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"model":5}"#);
    assert_eq!(e.key, "model");
    assert!(
        e.why.contains("a model name or a list of model names"),
        "{e}"
    );
    let e = err(r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"model":["a",7]}"#);
    assert_eq!(e.key, "model");
    let e = err(r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"model":[]}"#);
    assert_eq!(e.key, "model");
    let e =
        err(r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"full_description":"x"}"#);
    assert_eq!(e.key, "full_description");
    assert!(e.why.contains("an object"), "{e}");
    let e = err(r#"{"id":"p","name":null,"description":"d","enabled_tools":[]}"#);
    assert_eq!(
        (e.key.as_str(), e.why.starts_with("is required")),
        ("name", true),
        "{e}"
    );
    let e = err(r#"{"id":"p","id":"p","name":"P","description":"d","enabled_tools":[]}"#);
    assert_eq!(e.key, "id");
    assert!(e.why.contains("twice"), "{e}");
    assert_eq!(err("[1, 2]").key, "(root)");
    let e = err("{\n\"id\": \"p\",,\n}");
    assert_eq!(e.key, "line 2");
    assert!(e.why.starts_with("invalid JSON"), "{e}");
}

#[test]
fn ranges_and_backend_are_checked_after_types() {
    let with = |extra: &str| {
        format!(
            "{{\"id\":\"p\",\"name\":\"P\",\"description\":\"d\",\"enabled_tools\":[],\n{extra}}}"
        )
    };
    for (extra, key, want) in [
        (
            "\"max_iterations\": 0",
            "max_iterations",
            "from 1 to 10000, got 0",
        ),
        ("\"max_iterations\": 10001", "max_iterations", "got 10001"),
        ("\"max_iterations\": -1", "max_iterations", "-1"),
        (
            "\"goal_anchoring_interval\": 0",
            "goal_anchoring_interval",
            "got 0",
        ),
        (
            "\"anti_stall_threshold\": 2.5",
            "anti_stall_threshold",
            "2.5",
        ),
        (
            "\"temperature\": 2.5",
            "temperature",
            "from 0 to 2, got 2.5",
        ),
        ("\"temperature\": \"hot\"", "temperature", "\"hot\""),
        (
            "\"llm_backend\": \"llama\"",
            "llm_backend",
            "use \"ollama\", \"openai\", \"anthropic\" or \"responses\"",
        ),
    ] {
        let e = err(&with(extra));
        assert_eq!(e.key, key, "{extra}: {e}");
        assert!(e.why.contains(want), "{extra}: {e}");
        assert!(e.why.contains("line 2"), "{extra}: {e}");
    }
    // The line is the top-level key's, not a same-named one nested earlier
    // or a string that looks like a key.
    let e = err(
        "{\"full_description\": {\"model\": \"x\", \"note\": \"\\\"model\\\": 1\"},\n\"id\": \"p\", \"name\": \"P\", \"description\": \"d\", \"enabled_tools\": [],\n\n\"model\": []}",
    );
    assert_eq!(e.key, "model");
    assert!(e.why.ends_with("(line 4)"), "{e}");
    let ok = |extra: &str| parse(&with(extra), "x", None, "f", "p", "t").unwrap();
    assert_eq!(ok("\"max_iterations\": 10000").max_iterations, 10000);
    assert_eq!(ok("\"temperature\": 0").temperature, 0.0);
    assert_eq!(
        ok("\"llm_backend\": \"openai-compatible\"").llm_backend,
        "openai-compatible"
    );
}

/// `line_of` finds top-level keys only and never panics, whatever the text.
#[test]
fn line_of_top_level_keys() {
    use super::raw::line_of;
    assert_eq!(line_of("{\n\"b\": {\"a\": 1},\n\"a\" : 2}", "a"), Some(3));
    assert_eq!(line_of("{\"b\": \"\\\"a\\\": 1\"}", "a"), None);
    assert_eq!(line_of("{\"é\": 1,\n\"a\": 2}", "a"), Some(2));
    for text in ["", "\"", "{\"a", "{\"a\\", "}}]]{", "{\"a\"\u{0}"] {
        let _ = line_of(text, "a");
    }
}
