//! Arguments of typed tools: schema generation and the one error format.
//!
//! Invariants: the schema a model is given ([`Schemas::model`]) is the
//! checked one ([`Schemas::checked`]) minus keys that only cost tokens
//! (`title`, `format`, `minimum`, `default`, `additionalProperties: true`),
//! so what is checked is what was promised. Before deserialising, a call is
//! made lenient in the ways models need and the hand-written parsers allowed:
//! `null` means absent, an integer may come as a numeric string, and an enum
//! value may differ in case or surrounding spaces. When deserialising still
//! fails, the first problem is explained against the schema (missing
//! argument, wrong type, value not in the list) with the argument's name and
//! what was expected.
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The schemas of one argument type.
pub(crate) struct Schemas {
    /// Inline, nullable types collapsed; used to check and explain calls.
    pub(crate) checked: Value,
    /// What the model is given.
    pub(crate) model: Value,
}

impl Schemas {
    pub(crate) fn generate<A: JsonSchema>() -> Schemas {
        let generator = SchemaSettings::draft07()
            .with(|s| {
                s.inline_subschemas = true;
                s.meta_schema = None;
            })
            .into_generator();
        let mut checked: Value = generator.into_root_schema_for::<A>().to_value();
        normalise(&mut checked);
        if let Value::Object(root) = &mut checked {
            root.entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
        }
        let mut model = checked.clone();
        slim(&mut model);
        if let Value::Object(root) = &mut model {
            // The tool's own description is sent next to the schema.
            root.remove("description");
        }
        Schemas { checked, model }
    }
}

/// Collapses `Option<T>` (`type: [T, "null"]`, `anyOf: [T, null]`) to `T`
/// and drops `$schema`, recursively.
fn normalise(v: &mut Value) {
    let Value::Object(o) = v else { return };
    o.remove("$schema");
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|x| !x.is_null());
    }
    let any_of = o.get("anyOf").and_then(Value::as_array).cloned();
    if let Some(mut alts) = any_of {
        alts.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
        if alts.len() == 1
            && let Some(Value::Object(inner)) = alts.pop()
        {
            o.remove("anyOf");
            for (k, val) in inner {
                o.entry(k).or_insert(val);
            }
        }
    }
    for key in ["properties"] {
        if let Some(Value::Object(props)) = o.get_mut(key) {
            props.values_mut().for_each(normalise);
        }
    }
    if let Some(items) = o.get_mut("items") {
        normalise(items);
    }
}

/// Drops the keys that do not help a model call the tool.
fn slim(v: &mut Value) {
    let Value::Object(o) = v else { return };
    for key in ["title", "format", "minimum", "default"] {
        o.remove(key);
    }
    if o.get("additionalProperties") == Some(&Value::Bool(true)) {
        o.remove("additionalProperties");
    }
    if o.get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        o.remove("required");
    }
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        props.values_mut().for_each(slim);
    }
    if let Some(items) = o.get_mut("items") {
        slim(items);
    }
}

/// The text of a missing-argument error.
pub(crate) fn missing_message(field: &str, expected: &str) -> String {
    format!("missing required argument '{field}' ({expected})")
}

/// Parses `args` into `A` (see the module docs); the error names the
/// argument and what was expected.
pub(crate) fn parse<A: DeserializeOwned>(schemas: &Schemas, args: &Value) -> Result<A, String> {
    let mut map = match args {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        other => {
            return Err(format!(
                "the arguments must be a JSON object, got {}",
                shown(other)
            ));
        }
    };
    coerce(&schemas.checked, &mut map);
    // Required arguments and types are held to the schema even where the
    // Rust type would take more; enum values only when serde refuses them
    // (it also knows the aliases).
    if let Some(problem) = explain(&schemas.checked, &map, false) {
        return Err(problem);
    }
    match serde_json::from_value::<A>(Value::Object(map.clone())) {
        Ok(a) => Ok(a),
        Err(e) => Err(explain(&schemas.checked, &map, true)
            .unwrap_or_else(|| format!("the arguments do not match the tool's schema: {e}"))),
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn enum_strings(prop: &Value) -> Option<Vec<&str>> {
    let values = prop.get("enum")?.as_array()?;
    values.iter().map(Value::as_str).collect()
}

fn coerce(schema: &Value, map: &mut Map<String, Value>) {
    map.retain(|_, v| !v.is_null());
    let Some(props) = properties(schema) else {
        return;
    };
    for (key, value) in map.iter_mut() {
        let Some(prop) = props.get(key) else { continue };
        let Value::String(s) = &*value else { continue };
        if prop.get("type").and_then(Value::as_str) == Some("integer") {
            let t = s.trim();
            if let Ok(n) = t.parse::<u64>() {
                *value = Value::from(n);
            } else if let Ok(n) = t.parse::<i64>() {
                *value = Value::from(n);
            }
        } else if let Some(allowed) = enum_strings(prop)
            && !allowed.contains(&s.as_str())
            && let Some(canonical) = allowed.iter().find(|a| a.eq_ignore_ascii_case(s.trim()))
        {
            *value = Value::from(*canonical);
        }
    }
}

/// "a string", "a non-negative integer", "one of a, b" …
pub(crate) fn expected(prop: &Value) -> String {
    if let Some(allowed) = enum_strings(prop) {
        return format!("one of {}", allowed.join(", "));
    }
    let unsigned = prop
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|m| m >= 0.0);
    match prop.get("type").and_then(Value::as_str) {
        Some("string") => "a string".into(),
        Some("integer") if unsigned => "a non-negative integer".into(),
        Some("integer") => "an integer".into(),
        Some("number") => "a number".into(),
        Some("boolean") => "true or false".into(),
        Some("array") => "a list".into(),
        Some("object") => "an object".into(),
        _ => "a value".into(),
    }
}

fn type_matches(prop: &Value, v: &Value) -> bool {
    let unsigned = prop
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|m| m >= 0.0);
    match prop.get("type").and_then(Value::as_str) {
        Some("string") => v.is_string(),
        Some("integer") if unsigned => v.is_u64(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    }
}

/// A value as shown in an error: JSON, cut to a readable length.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.len() <= 120 {
        return text;
    }
    let mut cut = 117;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &text[..cut])
}

/// The first problem of `map` against `schema`, if one is found; enum
/// values are checked only when `enums`.
fn explain(schema: &Value, map: &Map<String, Value>, enums: bool) -> Option<String> {
    let props = properties(schema);
    let prop_of = |k: &str| props.and_then(|p| p.get(k)).cloned().unwrap_or(Value::Null);
    let required = schema.get("required").and_then(Value::as_array);
    for field in required.into_iter().flatten().filter_map(Value::as_str) {
        if !map.contains_key(field) {
            return Some(missing_message(field, &expected(&prop_of(field))));
        }
    }
    for (field, prop) in props.into_iter().flatten() {
        let Some(v) = map.get(field) else { continue };
        if let Some(allowed) = enum_strings(prop).filter(|_| enums || !v.is_string()) {
            match v.as_str() {
                Some(s) if allowed.contains(&s) => {}
                Some(s) => {
                    return Some(format!(
                        "unknown {field} '{s}'; use one of {}",
                        allowed.join(", ")
                    ));
                }
                None => {
                    return Some(format!(
                        "argument '{field}' must be {}, got {}",
                        expected(prop),
                        shown(v)
                    ));
                }
            }
        } else if !type_matches(prop, v) {
            return Some(format!(
                "argument '{field}' must be {}, got {}",
                expected(prop),
                shown(v)
            ));
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
