//! The built-in set as a whole: registration, list_tools, tool_manual (user
//! override → embedded → generated), the shipped manuals, and calls through
//! the registry with the approval gate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::config::{ApprovalMode, SecurityConfig};
use navi::llm::{ToolCall, ToolSchema};
use navi::tools::builtin::list_tools::ListToolsTool;
use navi::tools::builtin::tool_manual::ToolManualTool;
use navi::tools::{ApprovalGate, ToolRegistry, builtin};
use serde_json::json;
use std::sync::Arc;
use tools_support::*;

const BUILTINS: [&str; 13] = [
    "code_exec",
    "filesystem",
    "http_request",
    "image_view",
    "list_tools",
    "load_tools",
    "scratchpad",
    "ssh_exec",
    "terminal",
    "todo",
    "tool_manual",
    "web_search",
    "web_view",
];

#[test]
fn register_all_registers_every_builtin_with_a_valid_schema() {
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    assert_eq!(reg.names(), BUILTINS.map(String::from).to_vec());
    for name in BUILTINS {
        assert!(reg.is_builtin(name));
        let s = reg.get(name).unwrap().schema();
        assert_eq!(s.parameters["type"], "object", "{name}");
        assert!(s.parameters["properties"].is_object(), "{name}");
        assert!(s.description.len() > 40, "{name} has a real description");
        for req in s.parameters["required"].as_array().into_iter().flatten() {
            let req = req.as_str().unwrap();
            assert!(
                s.parameters["properties"].get(req).is_some(),
                "{name}: required {req} is a property"
            );
        }
    }
}

#[test]
fn every_builtin_ships_a_manual_covering_each_parameter() {
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    for name in BUILTINS {
        let text = navi::embedded::get(&format!("manuals/{name}.md"))
            .unwrap_or_else(|| panic!("manuals/{name}.md is not embedded"));
        assert!(text.starts_with(&format!("# {name}\n")), "{name}");
        let params = reg.get(name).unwrap().parameters();
        for p in params["properties"].as_object().unwrap().keys() {
            assert!(
                text.contains(&format!("`{p}`")),
                "manuals/{name}.md does not explain `{p}`"
            );
        }
        assert!(
            text.contains("## Example") || text.contains("## Examples"),
            "{name} has examples"
        );
    }
}

#[tokio::test]
async fn list_tools_shows_the_live_list() {
    let h = Harness::new(|_, _| {});
    let mut ctx = h.ctx();
    let r = call(&ListToolsTool, json!({}), &ctx).await;
    let out = ok_text(&r);
    assert!(out.starts_with("13 tools available:"), "{out}");
    assert!(
        out.contains("\n- terminal(command, cwd, timeout_secs): Run a shell command"),
        "{out}"
    );
    assert_eq!(r.metadata["tools"].as_array().unwrap().len(), 13);

    ctx.tool_list = Arc::new(vec![ToolSchema {
        name: "only_one".into(),
        description: "The single tool.".into(),
        parameters: json!({"type": "object", "properties": {}}),
    }]);
    let r = call(&ListToolsTool, json!({}), &ctx).await;
    assert_eq!(
        ok_text(&r),
        "1 tools available:\n\n- only_one(): The single tool."
    );
}

#[tokio::test]
async fn tool_manual_prefers_user_override_then_embedded_then_generated() {
    let h = Harness::new(|_, _| {});
    let mut ctx = h.ctx();
    let r = call(&ToolManualTool, json!({"name": "terminal"}), &ctx).await;
    assert!(ok_text(&r).starts_with("# terminal\n"));
    assert_eq!(r.metadata["source"], "embedded");
    assert_eq!(
        r.output,
        navi::embedded::get("manuals/terminal.md").unwrap()
    );

    std::fs::create_dir_all(h.config_dir.join("manuals")).unwrap();
    std::fs::write(
        h.config_dir.join("manuals/terminal.md"),
        "# my terminal notes\n",
    )
    .unwrap();
    let r = call(&ToolManualTool, json!({"name": "terminal"}), &ctx).await;
    assert_eq!(ok_text(&r), "# my terminal notes\n");

    let mut list = (*ctx.tool_list).clone();
    list.push(ToolSchema {
        name: "weather".into(),
        description: "Current weather for a city.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "city name"},
                "units": {"type": "string", "enum": ["metric", "imperial"]}
            },
            "required": ["city"]
        }),
    });
    ctx.tool_list = Arc::new(list);
    let r = call(&ToolManualTool, json!({"name": "weather"}), &ctx).await;
    let out = ok_text(&r);
    assert!(
        out.starts_with("# weather\n\nCurrent weather for a city.\n\n## Parameters\n"),
        "{out}"
    );
    assert!(
        out.contains("- `city` (string, required): city name\n"),
        "{out}"
    );
    assert!(
        out.contains("- `units` (string, optional) — one of: metric, imperial\n"),
        "{out}"
    );
    assert_eq!(r.metadata["source"], "generated");

    for name in ["nosuch", "../../etc/passwd", ""] {
        let r = call(&ToolManualTool, json!({"name": name}), &ctx).await;
        let e = err_text(&r);
        assert!(
            e.starts_with(&format!(
                "unknown tool '{name}'; available tools: code_exec, "
            )),
            "{e}"
        );
        assert!(e.contains("weather"), "{e}");
    }
    let r = call(&ToolManualTool, json!({}), &ctx).await;
    assert_eq!(
        err_text(&r),
        "tool_manual: missing required argument 'name' (a string)"
    );
}

fn gate(mode: ApprovalMode) -> ApprovalGate {
    let sec = SecurityConfig {
        approval: mode,
        ..Default::default()
    };
    ApprovalGate::new(&sec, false)
}

#[tokio::test]
async fn registry_asks_for_risky_calls_only() {
    let h = Harness::new(|_, _| {});
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let ctx = h.ctx();
    let deny = gate(ApprovalMode::Deny);
    let call_of = |name: &str, args: serde_json::Value| ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: args,
    };

    // Risky: refused by a "deny" policy before anything runs.
    for (tool, args) in [
        ("terminal", json!({"command": "touch DENIED"})),
        ("code_exec", json!({"code": "open('DENIED','w')"})),
        (
            "filesystem",
            json!({"action": "write", "path": "DENIED", "content": "x"}),
        ),
        ("filesystem", json!({"action": "mkdir", "path": "DENIED"})),
        ("filesystem", json!({"action": "delete", "path": "x"})),
        ("ssh_exec", json!({"host": "h", "command": "ls"})),
        (
            "http_request",
            json!({"url": "http://127.0.0.1:9/", "method": "POST"}),
        ),
    ] {
        let r = reg.execute(&call_of(tool, args.clone()), &ctx, &deny).await;
        assert!(
            err_text(&r).contains("denied by policy"),
            "{tool} {args}: {:?}",
            r.error
        );
    }
    assert!(!h.work.join("DENIED").exists());

    // Read-only calls never ask, so they run under "deny".
    std::fs::write(h.work.join("f.txt"), "content").unwrap();
    let r = reg
        .execute(
            &call_of("filesystem", json!({"action": "read", "path": "f.txt"})),
            &ctx,
            &deny,
        )
        .await;
    assert_eq!(ok_text(&r), "content");
    let r = reg
        .execute(&call_of("list_tools", json!({})), &ctx, &deny)
        .await;
    ok_text(&r);

    // With "auto", a risky call runs.
    let r = reg
        .execute(
            &call_of("terminal", json!({"command": "echo ran > R; cat R"})),
            &ctx,
            &gate(ApprovalMode::Auto),
        )
        .await;
    assert!(ok_text(&r).contains("ran"));

    // Malformed arguments are an error result, not a panic.
    let r = reg
        .execute(&call_of("filesystem", json!("{not json")), &ctx, &deny)
        .await;
    assert!(err_text(&r).contains("not valid JSON"));
}

#[tokio::test]
async fn a_config_deny_wins_over_approve_all_and_approve() {
    let h = Harness::new(|_, _| {});
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let ctx = h.ctx();
    let call = ToolCall {
        id: "c1".into(),
        name: "terminal".into(),
        arguments: json!({"command": "touch RAN"}),
    };
    // Per-tool deny, default ask: --approve-all and --approve terminal
    // skip questions but do not lift the ban.
    let mut sec = SecurityConfig {
        approval: ApprovalMode::Ask,
        ..Default::default()
    };
    sec.approval_tools
        .insert("terminal".into(), ApprovalMode::Deny);
    for (tools, all) in [(vec![], true), (vec!["terminal".to_string()], false)] {
        let g = ApprovalGate::new(&sec, true).with_preapproved(tools, all);
        let r = reg.execute(&call, &ctx, &g).await;
        let e = err_text(&r);
        assert!(
            e.contains("denied by policy") && e.contains("--approve-all"),
            "{e}"
        );
    }
    // A global "deny" is a deny too.
    let g = ApprovalGate::new(&gate_sec(ApprovalMode::Deny), true)
        .with_preapproved(vec!["terminal".to_string()], true);
    assert!(err_text(&reg.execute(&call, &ctx, &g).await).contains("denied by policy"));
    assert!(!h.work.join("RAN").exists());
    // Under "ask", --approve-all runs it without a question.
    let g = ApprovalGate::new(&gate_sec(ApprovalMode::Ask), false).with_preapproved(vec![], true);
    ok_text(&reg.execute(&call, &ctx, &g).await);
    assert!(h.work.join("RAN").exists());
}

fn gate_sec(mode: ApprovalMode) -> SecurityConfig {
    SecurityConfig {
        approval: mode,
        ..Default::default()
    }
}

/// Waits until the session holds a question, then answers it.
async fn answer_when_asked(s: &navi::tools::SessionTools, d: navi::protocol::Decision) {
    for _ in 0..2000 {
        if let Some(id) = s.waiting().first() {
            assert!(s.answer(id, d));
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("the gate never asked");
}

#[tokio::test]
async fn a_session_allowance_is_listed_and_revoking_it_makes_the_next_call_ask() {
    use navi::protocol::Decision;
    use navi::tools::approval::revoke;
    let h = Harness::new(|_, _| {});
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let reg = Arc::new(reg);
    let g = Arc::new(ApprovalGate::new(&gate_sec(ApprovalMode::Ask), true));
    let session = h.session("test-session");
    let call = |cmd: &str| ToolCall {
        id: "call-1".into(),
        name: "terminal".into(),
        arguments: json!({ "command": cmd }),
    };
    let none = g.report(&session).join("\n");
    assert!(none.contains("no tool is allowed"), "{none}");
    // First call: asked, answered "for this session".
    let run = |c: ToolCall| {
        let (reg, g, ctx) = (reg.clone(), g.clone(), h.ctx());
        tokio::spawn(async move { reg.execute(&c, &ctx, &g).await })
    };
    let t = run(call("touch A"));
    answer_when_asked(&session, Decision::Session).await;
    ok_text(&t.await.unwrap());
    assert!(h.work.join("A").exists());
    // Second call: no question.
    ok_text(&run(call("touch B")).await.unwrap());
    assert!(h.work.join("B").exists());
    let listed = g.report(&session).join("\n");
    assert!(listed.contains("  terminal"), "{listed}");
    // Revoking an unknown tool is an error naming what is allowed.
    let e = revoke(&session, Some("web_view")).unwrap_err();
    assert!(e.contains("allowed: terminal"), "{e}");
    let out = revoke(&session, Some("terminal")).unwrap();
    assert!(out.contains("revoked: terminal"), "{out:?}");
    assert!(session.allowed().is_empty());
    // Third call: asked again; a deny keeps the command from running.
    let t = run(call("touch C"));
    answer_when_asked(&session, Decision::Deny).await;
    assert!(err_text(&t.await.unwrap()).contains("denied"));
    assert!(!h.work.join("C").exists());
    // Other sessions never shared the allowance.
    assert!(h.session("other").allowed().is_empty());
}

/// A value of the type `prop` asks for, and one of the wrong type.
fn sample_values(prop: &serde_json::Value) -> (serde_json::Value, serde_json::Value) {
    if let Some(first) = prop.get("enum").and_then(|e| e.get(0)) {
        return (first.clone(), json!("no_such_value"));
    }
    match prop.get("type").and_then(|t| t.as_str()) {
        Some("string") => (json!("x"), json!(7)),
        Some("integer") => (json!(1), json!("soon")),
        Some("boolean") => (json!(true), json!("maybe")),
        Some("array") => (json!(["x"]), json!("x")),
        Some("object") => (json!({}), json!("x")),
        _ => (json!("x"), serde_json::Value::Null),
    }
}

/// Every argument of every built-in: leaving out a required one, or sending
/// one of the wrong type, fails before the tool does anything, with one
/// message format naming the tool, the argument and what was expected.
#[tokio::test]
async fn every_builtin_reports_bad_arguments_in_one_format() {
    let h = Harness::new(|_, _| {});
    let ctx = h.ctx();
    let mut reg = ToolRegistry::new();
    builtin::register_all(&mut reg);
    let mut checked = 0;
    for name in BUILTINS {
        let tool = reg.get(name).unwrap();
        let params = tool.parameters();
        let props = params["properties"].as_object().unwrap();
        let required: Vec<&str> = params["required"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r.as_str().unwrap())
            .collect();
        let valid: serde_json::Map<String, serde_json::Value> = required
            .iter()
            .map(|r| (r.to_string(), sample_values(&props[*r]).0))
            .collect();
        for r in &required {
            let mut args = valid.clone();
            args.remove(*r);
            let res = tool.execute(&json!(args), &ctx).await;
            let e = err_text(&res);
            assert!(
                e.starts_with(&format!("{name}: missing required argument '{r}' (")),
                "{name} without {r}: {e}"
            );
            assert_eq!(tool.approval_summary(&json!(args)), None, "{name}");
            checked += 1;
        }
        for (p, prop) in props {
            let (_, wrong) = sample_values(prop);
            if wrong.is_null() {
                continue; // takes any JSON value (http_request's body)
            }
            let mut args = valid.clone();
            args.insert(p.clone(), wrong.clone());
            let res = tool.execute(&json!(args), &ctx).await;
            let e = err_text(&res);
            let want = if prop.get("enum").is_some() {
                format!("{name}: unknown {p} 'no_such_value'; use one of ")
            } else {
                format!("{name}: argument '{p}' must be ")
            };
            assert!(e.starts_with(&want), "{name}.{p} = {wrong}: {e}");
            assert!(
                prop.get("enum").is_some() || e.ends_with(&format!(", got {wrong}")),
                "{name}.{p}: {e}"
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
    assert!(
        std::fs::read_dir(&h.work).unwrap().next().is_none(),
        "no call did anything"
    );
}
