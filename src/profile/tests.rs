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
