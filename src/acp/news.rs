//! What an editor shows beside the conversation: the context meter
//! (`usage_update`), the session's title (`session_info_update`), the plan
//! of a reopened session, and navi's sentences reworded for an editor.

use super::session::{Cx, Open, notify};
use crate::protocol::AgentEvent;
use agent_client_protocol::v1::schema::{SessionInfoUpdate, SessionUpdate, UsageUpdate};

/// The context meter after a model call (or a compaction); `None` for
/// other events and while the window is not known.
pub(crate) fn usage(event: &AgentEvent) -> Option<SessionUpdate> {
    let (used, size) = match event {
        AgentEvent::TokenUsage {
            context_tokens,
            max_context_tokens,
            ..
        } => (*context_tokens, *max_context_tokens),
        AgentEvent::ContextCompressed {
            tokens_after,
            max_context_tokens,
            ..
        } => (*tokens_after, *max_context_tokens),
        _ => return None,
    };
    (size > 0).then(|| SessionUpdate::UsageUpdate(UsageUpdate::new(used, size)))
}

/// Tells the client the session's title when it is new or changed (the
/// first prompt names a session; `/rename` renames it).
pub(crate) fn title(open: &Open, cx: &Cx) {
    if let Some((title, at)) = open.title_news() {
        notify(
            cx,
            &open.id,
            SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new()
                    .title(title)
                    .updated_at(super::time::rfc3339(at)),
            ),
        );
    }
}

/// What a reopened session shows besides its history: its plan (the todo
/// list) and its title.
pub(crate) fn reopened(open: &Open, cx: &Cx) {
    if let Some(h) = open.handle() {
        let todos = h.todos();
        if !todos.is_empty() {
            notify(cx, &open.id, SessionUpdate::Plan(super::map::plan(&todos)));
        }
        if let Ok(acc) = h.context()
            && acc.window > 0
        {
            notify(
                cx,
                &open.id,
                SessionUpdate::UsageUpdate(UsageUpdate::new(acc.used, acc.window)),
            );
        }
    }
    title(open, cx);
}

/// navi's sentences for an editor: advice to pass `--model NAME` on a
/// command line points at the session's Model option instead.
pub(crate) fn for_editor(text: &str) -> String {
    if !text.contains("--model") {
        return text.to_string();
    }
    text.replace(
        "(/model NAME, or --model NAME)",
        "(choose one in the Model option, or type /model NAME)",
    )
    .replace(
        "pick one with --model NAME, /model NAME in a session, or [llm].default_model in the config",
        "choose one in the Model option (or type /model NAME)",
    )
    .replace("--model NAME", "the Model option")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_comes_from_token_counts_with_a_known_window() {
        let e = AgentEvent::TokenUsage {
            prompt_tokens: 10,
            completion_tokens: 2,
            context_tokens: 1200,
            max_context_tokens: 32768,
        };
        let v = serde_json::to_value(usage(&e)).unwrap_or_default();
        assert_eq!(v["sessionUpdate"], "usage_update");
        assert_eq!(v["used"], 1200);
        assert_eq!(v["size"], 32768);
        let unknown = AgentEvent::TokenUsage {
            prompt_tokens: 0,
            completion_tokens: 0,
            context_tokens: 5,
            max_context_tokens: 0,
        };
        assert!(usage(&unknown).is_none());
    }

    #[test]
    fn terminal_advice_becomes_editor_advice() {
        let vision = "Use a vision model (/model NAME, or --model NAME) or send it alone";
        let out = for_editor(vision);
        assert!(!out.contains("--model"), "{out}");
        assert!(out.contains("Model option"), "{out}");
        let none = "none of the models [\"x\"] is available on s; it has: a; pick one with --model NAME, /model NAME in a session, or [llm].default_model in the config";
        let out = for_editor(none);
        assert!(!out.contains("--model") && !out.contains("[llm]"), "{out}");
        assert!(out.contains("it has: a"), "{out}");
        assert_eq!(for_editor("plain text"), "plain text");
    }
}
