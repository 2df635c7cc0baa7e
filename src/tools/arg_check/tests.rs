use super::*;
use crate::llm::ToolSchema;
use crate::tools::typed::{ToolError, ToolOutput, from_result, into_result};
use crate::tools::{ToolRegistry, ToolResult, builtin};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, RwLock};

/// Every built-in, as a model is offered them.
fn builtin_schemas() -> Vec<ToolSchema> {
    let store = Arc::new(crate::session::SessionStore::open_in_memory().unwrap());
    let memory = Arc::new(crate::memory::MemoryStore::new(store));
    let reg = Arc::new(RwLock::new(ToolRegistry::new()));
    builtin::register_self_extension(&reg);
    let mut r = reg.write().unwrap();
    builtin::register_all(&mut r);
    builtin::register_memory(&mut r, &memory);
    r.schemas_for(&r.names())
}

/// Keys that make a schema harder or dearer for a model to use.
fn forbidden_keys(v: &Value, at: &str, found: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, inner) in o {
                let banned = [
                    "$schema",
                    "$ref",
                    "$defs",
                    "definitions",
                    "title",
                    "format",
                    "minimum",
                    "default",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "const",
                    "nullable",
                ];
                if banned.contains(&k.as_str()) {
                    found.push(format!("{at}/{k}"));
                }
                forbidden_keys(inner, &format!("{at}/{k}"), found);
            }
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| forbidden_keys(x, &format!("{at}/{i}"), found)),
        _ => {}
    }
}

#[test]
fn builtin_schemas_are_inline_objects_with_plain_types() {
    let schemas = builtin_schemas();
    assert!(schemas.len() >= 16, "{}", schemas.len());
    for s in &schemas {
        let p = &s.parameters;
        assert_eq!(p["type"], "object", "{}", s.name);
        let props = p["properties"].as_object().expect("properties");
        let mut found = Vec::new();
        forbidden_keys(p, &s.name, &mut found);
        assert!(found.is_empty(), "{found:?}");
        assert!(
            p.get("description").is_none(),
            "{}: root description",
            s.name
        );
        for (name, prop) in props {
            let ty = prop.get("type").and_then(Value::as_str);
            assert!(
                ty.is_some() || prop.get("description").is_some(),
                "{}.{name} has neither a type nor a description",
                s.name
            );
            if let Some(e) = prop.get("enum") {
                assert_eq!(ty, Some("string"), "{}.{name}", s.name);
                assert!(e.as_array().unwrap().iter().all(Value::is_string));
            }
        }
        for r in p
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", s.name);
        }
    }
}

/// The schemas go out with every request: generating them must not make
/// them longer than the hand-written ones they replaced (2,622 bytes of
/// `parameters`, 5,196 bytes in the wire form, for these 16 tools).
#[test]
fn builtin_schemas_cost_no_more_than_the_hand_written_ones() {
    // `load_tools` came later, with tools on demand.
    let schemas: Vec<_> = builtin_schemas()
        .into_iter()
        .filter(|s| s.name != "load_tools")
        .collect();
    let params: usize = schemas
        .iter()
        .map(|s| serde_json::to_string(&s.parameters).unwrap().len())
        .sum();
    let wire: usize = schemas
        .iter()
        .map(|s| serde_json::to_string(&s.to_wire()).unwrap().len())
        .sum();
    assert_eq!(schemas.len(), 16);
    assert!(params <= 2622, "parameters: {params} bytes");
    assert!(wire <= 5196, "wire form: {wire} bytes");
}

#[test]
fn builtin_schemas_snapshot() {
    let text: Vec<String> = builtin_schemas()
        .iter()
        .map(|s| format!("{}: {}", s.name, s.parameters))
        .collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    #[serde(alias = "slowly")]
    Slow,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Demo {
    name: String,
    /// how many
    count: Option<u64>,
    shift: Option<i64>,
    mode: Option<Mode>,
    on: Option<bool>,
    tags: Option<Vec<String>>,
    extra: Option<Map<String, Value>>,
}

fn demo(args: Value) -> Result<Demo, String> {
    parse::<Demo>(&Schemas::generate::<Demo>(), &args)
}

#[test]
fn generated_schema_is_the_small_inline_form() {
    let s = Schemas::generate::<Demo>();
    assert_eq!(
        s.model,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer", "description": "how many"},
                "shift": {"type": "integer"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "on": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object"}
            },
            "required": ["name"]
        })
    );
}

#[test]
fn good_arguments_parse_with_the_usual_leniency() {
    let d = demo(
        json!({"name": "a", "count": " 12 ", "shift": "-3", "mode": " FAST",
        "on": null, "tags": ["x"], "unknown": 1}),
    )
    .unwrap();
    assert_eq!(d.count, Some(12));
    assert_eq!(d.shift, Some(-3));
    assert_eq!(d.mode, Some(Mode::Fast));
    assert_eq!(d.on, None);
    assert_eq!(d.tags, Some(vec!["x".to_string()]));
    assert_eq!(
        demo(json!({"name": "a", "mode": "slowly"})).unwrap().mode,
        Some(Mode::Slow)
    );
    assert_eq!(
        demo(json!({"name": "a", "mode": "Slow"})).unwrap().mode,
        Some(Mode::Slow)
    );
}

#[test]
fn bad_arguments_name_the_argument_and_what_was_expected() {
    let cases = [
        (json!({}), "missing required argument 'name' (a string)"),
        (
            json!({"name": null}),
            "missing required argument 'name' (a string)",
        ),
        (
            json!({"name": 5}),
            "argument 'name' must be a string, got 5",
        ),
        (
            json!({"name": "a", "count": -1}),
            "argument 'count' must be a non-negative integer, got -1",
        ),
        (
            json!({"name": "a", "count": "lots"}),
            "argument 'count' must be a non-negative integer, got \"lots\"",
        ),
        (
            json!({"name": "a", "count": 1.5}),
            "argument 'count' must be a non-negative integer, got 1.5",
        ),
        (
            json!({"name": "a", "shift": true}),
            "argument 'shift' must be an integer, got true",
        ),
        (
            json!({"name": "a", "mode": "warp"}),
            "unknown mode 'warp'; use one of fast, slow",
        ),
        (
            json!({"name": "a", "mode": 3}),
            "argument 'mode' must be one of fast, slow, got 3",
        ),
        (
            json!({"name": "a", "on": "yes"}),
            "argument 'on' must be true or false, got \"yes\"",
        ),
        (
            json!({"name": "a", "tags": "x"}),
            "argument 'tags' must be a list, got \"x\"",
        ),
        (
            json!({"name": "a", "extra": [1]}),
            "argument 'extra' must be an object, got [1]",
        ),
        (json!([1]), "the arguments must be a JSON object, got [1]"),
    ];
    for (args, want) in cases {
        assert_eq!(demo(args.clone()).unwrap_err(), want, "{args}");
    }
    let long = "x".repeat(500);
    let e = demo(json!({"name": "a", "on": long})).unwrap_err();
    assert!(e.len() < 200 && e.ends_with("..."), "{e}");
    // A problem the schema cannot explain still says what serde found.
    let e = demo(json!({"name": "a", "tags": [1]})).unwrap_err();
    assert!(
        e.contains("do not match the tool's schema") && e.contains("string"),
        "{e}"
    );
}

#[test]
fn results_keep_output_and_metadata_and_prefix_argument_errors() {
    let r = into_result("demo", Err(ToolError::missing("content", "a string")));
    assert!(!r.success);
    assert_eq!(
        r.error.as_deref(),
        Some("demo: missing required argument 'content' (a string)")
    );
    let r = into_result(
        "demo",
        Err(ToolError::failed("HTTP 404")
            .with_output("body")
            .with_meta("status", json!(404))),
    );
    assert_eq!(r.error.as_deref(), Some("HTTP 404"));
    assert_eq!(
        (r.output.as_str(), &r.metadata["status"]),
        ("body", &json!(404))
    );
    let r = into_result("demo", Ok(ToolOutput::new("fine").with_meta("k", json!(1))));
    assert!(r.success && r.output == "fine" && r.metadata["k"] == 1);
    let round = ToolResult {
        success: false,
        output: "out".into(),
        error: Some("exit 1".into()),
        metadata: Map::new(),
        display: Some(crate::protocol::ToolDisplay::Summary { text: "s".into() }),
        image: None,
    };
    assert_eq!(into_result("demo", from_result(round.clone())), round);
}
