//! Constrained decoding: a request whose answer must be one JSON value of a
//! given shape (the next action, or a tool's arguments), for models that
//! cannot make tool calls freely.
//!
//! Invariants:
//! - A constrained request never carries `tools` (llama-server refuses a
//!   grammar beside tools, and the shape already names the tool).
//! - llama-server gets a GBNF `grammar` for compact JSON (no whitespace
//!   between tokens: tiny models otherwise spend their budget on blank
//!   lines), built here from the schema; a schema this builder does not
//!   cover goes as `json_schema` instead. Other OpenAI-compatible servers
//!   get the standard `response_format` with the schema; Ollama gets the
//!   schema as `format`.
//! - Objects list their `required` properties in the order of the
//!   `required` array; optional properties are left out (the answer still
//!   matches the schema).
use serde_json::{Map, Value, json};

/// The shape an answer must have.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// A short name for the shape (`response_format.json_schema.name`).
    pub name: String,
    /// JSON schema of the answer.
    pub schema: Value,
    /// A GBNF grammar for llama-server that is narrower than the schema
    /// (e.g. a command from a list of templates); every answer it allows
    /// matches `schema`. Other servers get the schema.
    pub grammar: Option<String>,
}

/// The longest string a grammar lets a model write when the schema sets no
/// `maxLength`.
const STRING_CAP: u64 = 300;

/// Adds the constraint to an OpenAI-compatible chat body (`llama`: the
/// server is llama-server) and drops `tools`.
pub(crate) fn add_openai(body: &mut Value, c: &Constraint, llama: bool) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    obj.remove("tools");
    if llama {
        if let Some(g) = &c.grammar {
            obj.insert("grammar".into(), json!(g));
            return;
        }
        match gbnf(&c.schema) {
            Some(g) => obj.insert("grammar".into(), json!(g)),
            None => obj.insert("json_schema".into(), c.schema.clone()),
        };
    } else {
        obj.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": c.name, "strict": true, "schema": c.schema
            }}),
        );
    }
}

/// Adds the constraint to an Ollama chat body as `format` and drops `tools`.
pub(crate) fn add_ollama(body: &mut Value, c: &Constraint) {
    if let Some(obj) = body.as_object_mut() {
        obj.remove("tools");
        obj.insert("format".into(), c.schema.clone());
    }
}

/// A GBNF grammar for compact JSON matching `schema`; `None` when the
/// schema uses something this builder does not cover.
pub fn gbnf(schema: &Value) -> Option<String> {
    let mut g = Grammar::default();
    let root = g.rule_for(schema)?;
    let mut out = format!("root ::= {root}\n");
    for (name, body) in &g.rules {
        out.push_str(&format!("{name} ::= {body}\n"));
    }
    out.push_str(CHAR_RULE);
    Some(out)
}

const CHAR_RULE: &str = "char ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" [\"\\\\/bfnrt]\n";

#[derive(Default)]
struct Grammar {
    rules: Vec<(String, String)>,
}

impl Grammar {
    fn add(&mut self, body: String) -> String {
        let name = format!("r{}", self.rules.len());
        self.rules.push((name.clone(), body));
        name
    }

    /// A rule expression for one value of `schema`.
    fn rule_for(&mut self, schema: &Value) -> Option<String> {
        let s = schema.as_object()?;
        if let Some(c) = s.get("const") {
            return Some(literal(&c.to_string()));
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            if e.is_empty() {
                return None;
            }
            let alts: Vec<String> = e.iter().map(|v| literal(&v.to_string())).collect();
            return Some(format!("({})", alts.join(" | ")));
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => t.as_str(),
            // ["string", "null"]: the first non-null type.
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).find(|t| *t != "null")?,
            _ if s.contains_key("properties") => "object",
            _ => return None,
        };
        match ty {
            "string" => {
                let max = s
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(STRING_CAP)
                    .clamp(1, STRING_CAP);
                let min = s
                    .get("minLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .clamp(1, max);
                Some(format!("\"\\\"\" char{{{min},{max}}} \"\\\"\""))
            }
            "integer" => Some("(\"-\"? [0-9]{1,15})".into()),
            "number" => Some("(\"-\"? [0-9]{1,15} (\".\" [0-9]{1,10})?)".into()),
            "boolean" => Some("(\"true\" | \"false\")".into()),
            "array" => {
                let item = match s.get("items") {
                    Some(i) => self.rule_for(i)?,
                    None => return None,
                };
                let item = self.add(item);
                Some(format!("\"[\" ({item} (\",\" {item})*)? \"]\""))
            }
            "object" => self.object(s),
            _ => None,
        }
    }

    fn object(&mut self, s: &Map<String, Value>) -> Option<String> {
        let empty = Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut parts = Vec::new();
        for (i, name) in required.iter().enumerate() {
            let value = self.rule_for(props.get(*name)?)?;
            let key = literal(&format!(
                "{}{}:",
                if i == 0 { "" } else { "," },
                json!(name)
            ));
            parts.push(format!("{key} {value}"));
        }
        if parts.is_empty() {
            return Some(literal("{}"));
        }
        Some(format!("\"{{\" {} \"}}\"", parts.join(" ")))
    }
}

/// A GBNF string literal of `text`.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `schema` with only its required properties (and theirs, nested): the
/// shape a constrained answer is asked in.
pub fn required_only(schema: &Value) -> Value {
    let Some(s) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = s.clone();
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let kept: Map<String, Value> = props
            .iter()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), required_only(v)))
            .collect();
        out.insert("properties".into(), Value::Object(kept));
        out.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn action() -> Value {
        json!({"type": "object", "properties": {"tool": {"enum": ["terminal", "answer"]}},
               "required": ["tool"]})
    }

    #[test]
    fn grammar_for_an_action_and_for_arguments() {
        let g = gbnf(&action()).unwrap();
        assert!(
            g.starts_with("root ::= \"{\" \"\\\"tool\\\":\" (\"\\\"terminal\\\"\" | \"\\\"answer\\\"\") \"}\"\n"),
            "{g}"
        );
        let args = json!({"type": "object", "required": ["tool", "arguments"], "properties": {
            "tool": {"const": "terminal"},
            "arguments": {"type": "object", "required": ["command"], "properties": {
                "command": {"type": "string", "maxLength": 80},
                "cwd": {"type": "string"}}}}});
        let g = gbnf(&args).unwrap();
        let root = g.lines().next().unwrap();
        assert_eq!(
            root,
            "root ::= \"{\" \"\\\"tool\\\":\" \"\\\"terminal\\\"\" \",\\\"arguments\\\":\" \
             \"{\" \"\\\"command\\\":\" \"\\\"\" char{1,80} \"\\\"\" \"}\" \"}\""
        );
        assert!(!g.contains("cwd"), "optional properties are left out");
        assert!(g.ends_with(CHAR_RULE));
    }

    #[test]
    fn numbers_booleans_and_arrays() {
        let s = json!({"type": "object", "required": ["n", "b", "xs", "f"], "properties": {
            "n": {"type": "integer"}, "b": {"type": "boolean"},
            "xs": {"type": "array", "items": {"type": "string"}}, "f": {"type": ["number", "null"]}}});
        let g = gbnf(&s).unwrap();
        assert!(g.contains("[0-9]{1,15}") && g.contains("\"true\" | \"false\""));
        assert!(g.contains("r0 ::= \"\\\"\" char{1,300} \"\\\"\""), "{g}");
    }

    #[test]
    fn unsupported_schemas_have_no_grammar() {
        assert!(gbnf(&json!({"anyOf": [{"type": "string"}]})).is_none());
        assert!(gbnf(&json!({"type": "array"})).is_none());
        assert!(gbnf(&json!({"enum": []})).is_none());
        assert!(gbnf(&json!({"type": "object", "required": ["x"], "properties": {}})).is_none());
        assert!(gbnf(&json!(true)).is_none());
    }

    #[test]
    fn bodies_for_each_server() {
        let c = Constraint {
            name: "next_action".into(),
            schema: action(),
            grammar: None,
        };
        let mut b = json!({"model": "m", "tools": [1]});
        add_openai(&mut b, &c, true);
        assert!(b.get("tools").is_none());
        assert!(b["grammar"].as_str().unwrap().starts_with("root ::= "));
        let mut b = json!({"model": "m"});
        let odd = Constraint {
            name: "x".into(),
            schema: json!({"anyOf": [{"type": "string"}]}),
            grammar: None,
        };
        add_openai(&mut b, &odd, true);
        assert_eq!(b["json_schema"], odd.schema);
        let mut b = json!({"model": "m", "tools": [1]});
        add_openai(&mut b, &c, false);
        assert_eq!(
            b,
            json!({"model": "m", "response_format": {"type": "json_schema", "json_schema": {
                "name": "next_action", "strict": true, "schema": action()}}})
        );
        let mut b = json!({"model": "m", "tools": [1]});
        add_ollama(&mut b, &c);
        assert_eq!(b, json!({"model": "m", "format": action()}));
    }

    #[test]
    fn a_narrower_grammar_goes_to_llama_server_only() {
        let c = Constraint {
            name: "tool_call".into(),
            schema: action(),
            grammar: Some("root ::= \"{}\"\n".into()),
        };
        let mut b = json!({"model": "m", "tools": [1]});
        add_openai(&mut b, &c, true);
        assert_eq!(b, json!({"model": "m", "grammar": "root ::= \"{}\"\n"}));
        let mut b = json!({"model": "m"});
        add_openai(&mut b, &c, false);
        assert_eq!(b["response_format"]["json_schema"]["schema"], action());
        assert!(b.get("grammar").is_none());
        let mut b = json!({"model": "m"});
        add_ollama(&mut b, &c);
        assert_eq!(b, json!({"model": "m", "format": action()}));
    }

    #[test]
    fn required_only_drops_optional_properties() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string"}, "b": {"type": "integer"}}});
        assert_eq!(
            required_only(&s),
            json!({"type": "object", "required": ["a"], "additionalProperties": false,
                   "properties": {"a": {"type": "string"}}})
        );
    }
}
