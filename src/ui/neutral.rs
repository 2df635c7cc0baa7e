//! Making control characters visible before text from the model, a tool or
//! a server reaches a terminal in line mode (`--plain`, `navi run`) or an
//! approval question.
//!
//! Invariant: the output holds no character a terminal interprets except
//! `\n` and `\t`: ESC becomes `␛` (so `ESC[2K` shows as `␛[2K`), a carriage
//! return not followed by a newline becomes the two characters `\r`, other
//! C0 controls their Unicode picture (`␇`), DEL `␡`, C1 controls and
//! bidirectional overrides `\u{…}`. Colours navi adds are added after this,
//! so they stay.
use crate::protocol::AgentEvent;
use serde_json::Value;
use std::borrow::Cow;

use crate::controls::needs_work;
pub(crate) use crate::controls::visible;

/// Every string inside a JSON value made visible; `None` when none changed.
fn value(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => match visible(s) {
            Cow::Owned(o) => Some(Value::String(o)),
            Cow::Borrowed(_) => None,
        },
        Value::Array(items) => {
            let done: Vec<Option<Value>> = items.iter().map(value).collect();
            done.iter().any(Option::is_some).then(|| {
                Value::Array(
                    done.into_iter()
                        .zip(items)
                        .map(|(n, o)| n.unwrap_or_else(|| o.clone()))
                        .collect(),
                )
            })
        }
        Value::Object(map) => {
            let done: Vec<(String, Option<Value>)> =
                map.iter().map(|(k, x)| (k.clone(), value(x))).collect();
            let keys_dirty = map.keys().any(|k| k.chars().any(needs_work));
            (keys_dirty || done.iter().any(|(_, x)| x.is_some())).then(|| {
                Value::Object(
                    done.into_iter()
                        .zip(map.values())
                        .map(|((k, n), o)| {
                            (visible(&k).into_owned(), n.unwrap_or_else(|| o.clone()))
                        })
                        .collect(),
                )
            })
        }
        _ => None,
    }
}

/// `ev` with every string in it made visible (the original when nothing
/// needed it, which is nearly always).
pub(crate) fn event(ev: &AgentEvent) -> Cow<'_, AgentEvent> {
    let Ok(v) = serde_json::to_value(ev) else {
        return Cow::Borrowed(ev);
    };
    match value(&v).and_then(|n| serde_json::from_value(n).ok()) {
        Some(clean) => Cow::Owned(clean),
        None => Cow::Borrowed(ev),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_returns_become_text() {
        let evil = "rm -rf ~\r\u{1b}[2Kls -la";
        assert_eq!(visible(evil), "rm -rf ~\\r␛[2Kls -la");
        assert_eq!(visible("a\r\nb\tc"), "a\nb\tc");
        assert_eq!(visible("\u{1b}]52;c;aGk=\u{7}"), "␛]52;c;aGk=␇");
        assert_eq!(visible("x\u{9b}31m\u{7f}"), "x\\u{9b}31m␡");
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert!(matches!(visible("plain text ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn events_are_cleaned_in_every_string() {
        let ev = AgentEvent::ApprovalRequest {
            id: "1".into(),
            tool: "terminal".into(),
            summary: "run `x\u{1b}[2K`".into(),
            args: serde_json::json!({"command": ["a\u{1b}]0;title\u{7}"]}),
            call: None,
        };
        let clean = event(&ev);
        let AgentEvent::ApprovalRequest { summary, args, .. } = clean.as_ref() else {
            panic!("kind changed");
        };
        assert_eq!(summary, "run `x␛[2K`");
        assert_eq!(args["command"][0], "a␛]0;title␇");
    }
}
