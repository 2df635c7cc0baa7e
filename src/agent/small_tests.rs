use super::*;
use crate::llm::constrain::gbnf;

fn terminal() -> ToolSchema {
    ToolSchema {
        name: "terminal".into(),
        description: "Run a shell command.".into(),
        parameters: json!({"type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}, "cwd": {"type": "string"}}}),
    }
}

fn fs() -> ToolSchema {
    ToolSchema {
        name: "filesystem".into(),
        description: "Files.".into(),
        parameters: json!({"type": "object", "required": ["action", "path"], "properties": {
            "action": {"type": "string", "enum": ["read", "list"]}, "path": {"type": "string"}}}),
    }
}

#[test]
fn the_plan_follows_size_template_and_switch() {
    let tiny = ModelTraits {
        params: Some(135_000_000),
        template_tools: None,
    };
    let big = ModelTraits {
        params: Some(8_000_000_000),
        template_tools: Some(true),
    };
    let plain = ModelTraits {
        params: Some(8_000_000_000),
        template_tools: Some(false),
    };
    let p = SmallPlan::choose(SmallModel::Auto, tiny);
    assert!(p.lean && p.constrained && !p.text_tools);
    assert_eq!(
        SmallPlan::choose(SmallModel::Auto, big),
        SmallPlan::default()
    );
    let p = SmallPlan::choose(SmallModel::Auto, plain);
    assert!(!p.lean && p.constrained && p.text_tools);
    assert_eq!(
        SmallPlan::choose(SmallModel::Off, tiny),
        SmallPlan::default()
    );
    assert!(!SmallPlan::choose(SmallModel::Off, plain).constrained);
    let p = SmallPlan::choose(SmallModel::On, big);
    assert!(p.lean && p.constrained);
    let unknown = ModelTraits::default();
    assert!(!SmallPlan::choose(SmallModel::Auto, unknown).lean);
    assert!(
        !SmallPlan::choose(
            SmallModel::Auto,
            ModelTraits {
                params: Some(TINY_PARAMS),
                template_tools: None
            }
        )
        .lean
    );
}

#[test]
fn steps_one_per_turn_for_the_lean_preset() {
    let mut p = SmallPlan::choose(SmallModel::On, ModelTraits::default());
    assert!(p.step_now());
    p.steps = 1;
    assert!(!p.step_now(), "after a tool ran a tiny model answers");
    let mut q = SmallPlan {
        constrained: true,
        ..SmallPlan::default()
    };
    q.steps = 3;
    assert!(q.step_now(), "larger models keep choosing");
    assert!(!SmallPlan::default().step_now());
}

#[test]
fn action_and_arguments_shapes() {
    let a = action_constraint(&[terminal(), fs()]);
    assert_eq!(
        a.schema["properties"]["tool"]["enum"],
        json!(["terminal", "filesystem", "answer"])
    );
    let g = gbnf(&a.schema).unwrap();
    assert!(g.contains("\"\\\"answer\\\"\""), "{g}");
    let c = arguments_constraint(&fs());
    assert_eq!(
        c.schema["properties"]["tool"],
        json!({"const": "filesystem"})
    );
    assert_eq!(c.schema["required"], json!(["tool", "arguments"]));
    let g = gbnf(&c.schema).unwrap();
    assert!(g.contains("\"\\\"read\\\"\" | \"\\\"list\\\"\""), "{g}");
    let t = arguments_constraint(&terminal());
    assert!(
        t.schema["properties"]["arguments"]["properties"]
            .get("cwd")
            .is_none()
    );
}

#[test]
fn answers_cut_short_are_closed() {
    assert_eq!(
        parse_answer("{\"tool\":\"answer\"}"),
        Some(json!({"tool": "answer"}))
    );
    assert_eq!(
        parse_answer("{\"tool\":\"terminal\",\"arguments\":{\"command\":\"ls -l"),
        Some(json!({"tool": "terminal", "arguments": {"command": "ls -l"}}))
    );
    assert_eq!(parse_answer(""), None);
    assert_eq!(parse_answer("no json"), None);
}

#[test]
fn the_lean_prompt_is_short_and_the_same_for_every_request() {
    let s = lean_system(&[terminal()]);
    assert!(s.starts_with(LEAN_PERSONA));
    assert!(s.contains("Tool terminal: Run a shell command.\n"), "{s}");
    // The examples go with the constrained steps (`lean.rs`), not here.
    assert!(!s.contains("->"), "{s}");
    assert!(s.len() < 400, "{}", s.len());
    let t = tools_text(&[terminal(), fs()]);
    assert!(t.contains("- terminal: Run a shell command. Arguments: {\"command\": string}"));
    assert!(t.contains("- filesystem: Files. Arguments: {\"action\": string, \"path\": string}"));
    assert_eq!(lean_tools(vec![fs(), terminal()]), vec![terminal()]);
    assert_eq!(lean_tools(vec![fs()]), vec![fs()]);
    assert!(lean_tools(Vec::new()).is_empty());
}
