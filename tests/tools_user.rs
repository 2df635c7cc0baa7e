//! User tools (manifest + script), reload_tools and write_tool, with real
//! scripts run by python3 and sh.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tools_support;

use navi::tools::builtin::{
    register_self_extension, reload_tools::ReloadToolsTool, write_tool::WriteToolTool,
};
use navi::tools::user::{load_dir, reload_into};
use navi::tools::{ApprovalGate, Tool, ToolRegistry, builtin};
use serde_json::json;
use std::sync::{Arc, RwLock};
use tools_support::*;

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

fn manifest(name: &str, command: serde_json::Value) -> String {
    json!({"name": name, "description": format!("{name} test tool"), "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}, "command": command, "timeout_secs": 2}).to_string()
}

#[tokio::test]
async fn good_tools_load_broken_ones_are_reported_and_skipped() {
    let h = Harness::new(|_, _| {});
    let dir = h.config_dir.join("tools");
    write(
        &dir,
        "shout.json",
        &manifest("shout", json!(["python3", "shout.py"])),
    );
    write(
        &dir,
        "shout.py",
        "import json,sys\nargs=json.load(sys.stdin)\nprint(args['x'].upper())\n",
    );
    write(&dir, "bad_json.json", "{ not json");
    write(
        &dir,
        "wrong.json",
        &manifest("other_name", json!(["sh", "x.sh"])),
    );
    write(&dir, "nocmd.json", &manifest("nocmd", json!([])));
    write(
        &dir,
        "_template.json",
        &manifest("_template", json!(["sh"])),
    );
    write(&dir, "enabled.json", r#"["shout", "ghost"]"#);
    let loaded = load_dir(&dir);
    assert_eq!(
        loaded
            .tools
            .iter()
            .map(|t| t.manifest.name.as_str())
            .collect::<Vec<_>>(),
        vec!["shout"]
    );
    assert_eq!(loaded.errors.len(), 3, "{:?}", loaded.errors);
    assert!(loaded.errors.iter().any(|e| e.contains("bad_json.json")));
    assert!(
        loaded
            .errors
            .iter()
            .any(|e| e.contains("wrong.json") && e.contains("must match the file name"))
    );
    assert!(
        loaded
            .errors
            .iter()
            .any(|e| e.contains("nocmd.json") && e.contains("command"))
    );
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    reload_into(&mut reg, &dir);
    assert_eq!(
        reg.enabled_user(),
        vec!["shout"],
        "ghost is not loaded, so not enabled"
    );
    let tool = reg.get("shout").unwrap().clone();
    let r = tool.execute(&json!({"x": "hello"}), &h.ctx()).await;
    assert_eq!(ok_text(&r), "HELLO");
}

#[tokio::test]
async fn failures_timeouts_and_name_clashes_are_clear() {
    let h = Harness::new(|_, _| {});
    let dir = h.config_dir.join("tools");
    write(
        &dir,
        "fails.json",
        &manifest("fails", json!(["sh", "fails.sh"])),
    );
    write(&dir, "fails.sh", "echo 'no network' >&2; exit 3\n");
    write(
        &dir,
        "sleeps.json",
        &manifest("sleeps", json!(["sh", "-c", "sleep 30"])),
    );
    write(
        &dir,
        "terminal.json",
        &manifest("terminal", json!(["sh", "x"])),
    );
    write(
        &dir,
        "missing.json",
        &manifest("missing", json!(["/nonexistent/interpreter"])),
    );
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let errors = reload_into(&mut reg, &dir);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("'terminal' is a built-in")),
        "{errors:?}"
    );
    let r = reg
        .get("fails")
        .unwrap()
        .execute(&json!({}), &h.ctx())
        .await;
    let e = err_text(&r);
    assert!(e.contains("exit 3") && e.contains("no network"), "{e}");
    let started = std::time::Instant::now();
    let r = reg
        .get("sleeps")
        .unwrap()
        .execute(&json!({}), &h.ctx())
        .await;
    assert!(err_text(&r).contains("timed out after 2s"));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let r = reg
        .get("missing")
        .unwrap()
        .execute(&json!({}), &h.ctx())
        .await;
    assert!(err_text(&r).contains("cannot start user tool 'missing'"));
}

#[tokio::test]
async fn write_tool_creates_enables_and_reloads() {
    let h = Harness::new(|_, _| {});
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let reg = Arc::new(RwLock::new(reg));
    register_self_extension(&reg);
    let write = WriteToolTool {
        registry: Arc::downgrade(&reg),
    };
    let summary = write
        .approval_summary(&json!({"name": "add", "description": "d", "script": "a\nb"}))
        .unwrap();
    assert!(summary.contains("'add'") && summary.contains("2 lines of python3"));
    // A call that cannot parse fails before doing anything: nothing to ask.
    assert_eq!(
        write.approval_summary(&json!({"name": "add", "script": "a\nb"})),
        None
    );
    let r = write
        .execute(
            &json!({
                "name": "add_numbers", "description": "Adds a and b.",
                "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
                "script": "import json,sys\nx=json.load(sys.stdin)\nprint(x['a']+x['b'])\n"
            }),
            &h.ctx(),
        )
        .await;
    let out = ok_text(&r);
    assert!(out.contains("add_numbers"), "{out}");
    let dir = h.config_dir.join("tools");
    assert!(dir.join("add_numbers.py").is_file() && dir.join("add_numbers.json").is_file());
    let enabled: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("enabled.json")).unwrap()).unwrap();
    assert_eq!(enabled, vec!["add_numbers"]);
    let tool = reg.read().unwrap().get("add_numbers").unwrap().clone();
    assert_eq!(
        ok_text(&tool.execute(&json!({"a": 2, "b": 40}), &h.ctx()).await),
        "42"
    );
    assert_eq!(reg.read().unwrap().enabled_user(), vec!["add_numbers"]);
    // Bad input never writes anything.
    for bad in [
        json!({"name": "Bad Name", "description": "d", "script": "x"}),
        json!({"name": "terminal", "description": "d", "script": "x"}),
        json!({"name": "ok_name", "description": "d", "script": "x", "interpreter": "cobol"}),
        json!({"name": "ok_name", "description": "d", "script": "x", "parameters": {"type": "string"}}),
        json!({"name": "ok_name", "script": "x"}),
    ] {
        let r = write.execute(&bad, &h.ctx()).await;
        assert!(!r.success, "{bad}");
    }
    assert!(!dir.join("ok_name.json").exists());
    // reload_tools sees a manifest added by hand.
    write_file_tool(&dir);
    let reload = ReloadToolsTool {
        registry: Arc::downgrade(&reg),
    };
    let out = ok_text(&reload.execute(&json!({}), &h.ctx()).await);
    assert!(
        out.contains("by_hand") && out.contains("add_numbers"),
        "{out}"
    );
    assert!(reg.read().unwrap().get("by_hand").is_some());
    // The registry asks for approval before write_tool runs.
    let gate = ApprovalGate::new(&navi::config::SecurityConfig::default(), false);
    let call = navi::llm::ToolCall {
        id: "c".into(),
        name: "write_tool".into(),
        arguments: json!({"name": "zz", "description": "d", "script": "x"}),
    };
    let mut ctx = h.ctx();
    ctx.tool_list = Arc::new(reg.read().unwrap().schemas_for(&["write_tool".into()]));
    let regc = reg.read().unwrap().clone();
    let r = regc.execute(&call, &ctx, &gate).await;
    assert!(
        err_text(&r).contains("denied"),
        "no terminal to ask → denied"
    );
    assert!(!dir.join("zz.json").exists());
}

fn write_file_tool(dir: &std::path::Path) {
    write(
        dir,
        "by_hand.json",
        &manifest("by_hand", json!(["sh", "-c", "cat"])),
    );
}
