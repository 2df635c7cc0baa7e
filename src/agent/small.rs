//! The small-model path: a lean preset for tiny models and tool calls made
//! with constrained decoding (docs/small-models.md).
//!
//! Invariants:
//! - Chosen once per run from `[llm].small_model` and what the backend says
//!   about the model (`LlmBackend::model_traits`): the lean preset below
//!   ~1B parameters (`auto`) or always (`on`); constrained calls with the
//!   lean preset, when the template cannot render tools, or from the call
//!   after the model made an invalid one. `off` keeps free tool calling.
//! - A constrained step is two silent requests with the same messages as
//!   the answer that follows (one byte-stable prefix for the server's
//!   cache): the next action (`{"tool": NAME}` among the offered tools and
//!   "answer"), then the arguments (`{"tool": NAME, "arguments": {…}}`,
//!   the tool's required properties). Their text is never shown; the call
//!   is stored as a normal tool call, runs as one, and the model answers in
//!   free text without `tools`.
//! - The tools are offered as text in the system prompt (compact lines),
//!   never as `tools` on the wire.
use super::AgentError;
use super::turn::{CallResult, Run};
use crate::config::{SmallModel, ThinkSetting};
use crate::llm::constrain::{Constraint, required_only};
use crate::llm::size::ModelTraits;
use crate::llm::{ChatChunk, ChatMessage, ToolCall, ToolSchema, guard};
use crate::session::MessageKind;
use serde_json::{Value, json};

/// Below this many parameters a model gets the lean preset (`auto`).
pub(crate) const TINY_PARAMS: u64 = 1_000_000_000;
/// Said in the model line and the status bar when the lean preset is on.
pub(crate) const LEAN_NOTE: &str = "lean preset for a tiny model";
/// Model calls in a row with invalid tool calls before a run switches to
/// constrained calls.
pub(crate) const INVALID_STREAK: u32 = 2;
/// The action that ends the tool steps.
const ANSWER: &str = "answer";
/// The generation cap of a silent constrained request.
const STEP_TOKENS: u32 = 160;
/// The generation cap of a lean preset's free answer: a tiny model that
/// loses the thread otherwise babbles until the general cap (minutes on a CPU).
const LEAN_ANSWER_TOKENS: u32 = 256;
/// Tools the lean preset offers, the first ones the profile has.
const LEAN_TOOLS: &[&str] = &["terminal"];
/// The lean persona: who navi is, in one breath.
const LEAN_PERSONA: &str = "You are navi, a helpful assistant in a terminal. \
Use the terminal tool to look at files, the system or to compute; then answer briefly.";
/// Shell examples for the lean preset (request, command): tiny models copy
/// a pattern far better than they follow a rule.
const LEAN_EXAMPLES: &[(&str, &str)] = &[
    ("list the files", "ls"),
    ("show me todo.txt", "cat todo.txt"),
    ("how many lines does a.py have", "wc -l a.py"),
    ("first lines of log.txt", "head -n 5 log.txt"),
    ("which files contain TODO", "grep -rl TODO ."),
    ("how large is the docs folder", "du -sh docs"),
    ("what time is it", "date"),
    ("what was the last commit", "git log -1"),
    ("compute 6*7 in python", "python3 -c 'print(6*7)'"),
];

/// What the run does for a small model or a template without tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SmallPlan {
    /// The lean preset: short persona, fewest tools, no memory or roster.
    pub(crate) lean: bool,
    /// Tool calls go through constrained decoding.
    pub(crate) constrained: bool,
    /// The template cannot render tools (the server said so).
    pub(crate) text_tools: bool,
    /// Constrained tool steps taken in this run.
    pub(crate) steps: u32,
    /// Model calls in a row whose tool calls could not run as given.
    pub(crate) invalid_streak: u32,
}

impl SmallPlan {
    pub(crate) fn choose(mode: SmallModel, traits: ModelTraits) -> SmallPlan {
        let text_tools = traits.template_tools == Some(false);
        let lean = match mode {
            SmallModel::On => true,
            SmallModel::Off => false,
            SmallModel::Auto => traits.params.is_some_and(|n| n < TINY_PARAMS),
        };
        SmallPlan {
            lean,
            constrained: mode != SmallModel::Off && (lean || text_tools),
            text_tools,
            steps: 0,
            invalid_streak: 0,
        }
    }

    /// Whether the next call is a constrained step: always until a tool
    /// ran, then (lean: one step per turn) only for larger models.
    pub(crate) fn step_now(&self) -> bool {
        self.constrained && (self.steps == 0 || !self.lean)
    }
}

/// The tools' compact text form: one line each, with the required
/// arguments and how a call looks.
pub(crate) fn tools_text(tools: &[ToolSchema]) -> String {
    let mut out = String::from(
        "Tools. When asked for the next step, reply with JSON: \
         {\"tool\":NAME,\"arguments\":{...}} or {\"tool\":\"answer\"}.\n",
    );
    for t in tools {
        let args = required_args(&t.parameters);
        out.push_str(&format!(
            "- {}: {} Arguments: {args}\n",
            t.name, t.description
        ));
    }
    out
}

/// `{"command": string}` for a schema with required `command`.
fn required_args(schema: &Value) -> String {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parts: Vec<String> = required
        .iter()
        .map(|name| {
            let ty = props
                .and_then(|p| p.get(*name))
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("value");
            format!("\"{name}\": {ty}")
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The lean system prompt: persona, the tools as text, examples.
pub(crate) fn lean_system(tools: &[ToolSchema]) -> String {
    let mut out = format!("{LEAN_PERSONA}\n");
    for t in tools {
        out.push_str(&format!("Tool {}: {}\n", t.name, t.description));
    }
    if tools.iter().any(|t| t.name == "terminal") {
        out.push_str("Examples:\n");
        for (ask, cmd) in LEAN_EXAMPLES {
            // Written by hand: keys in the order the grammar asks for them.
            out.push_str(&format!(
                "{ask} -> {{\"tool\":\"terminal\",\"arguments\":{{\"command\":{}}}}}\n",
                json!(cmd)
            ));
        }
    }
    out
}

/// The lean preset's tools: [`LEAN_TOOLS`] the run has, else its first one.
pub(crate) fn lean_tools(offered: Vec<ToolSchema>) -> Vec<ToolSchema> {
    let lean: Vec<ToolSchema> = offered
        .iter()
        .filter(|t| LEAN_TOOLS.contains(&t.name.as_str()))
        .cloned()
        .collect();
    if lean.is_empty() {
        offered.into_iter().take(1).collect()
    } else {
        lean
    }
}

/// The shape of the next action: one of `tools` or "answer".
pub(crate) fn action_constraint(tools: &[ToolSchema]) -> Constraint {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.push(ANSWER);
    Constraint {
        name: "next_action".into(),
        schema: json!({"type": "object", "properties": {"tool": {"enum": names}},
                       "required": ["tool"], "additionalProperties": false}),
    }
}

/// The shape of a call of `tool`: its name, then its required arguments.
pub(crate) fn arguments_constraint(tool: &ToolSchema) -> Constraint {
    Constraint {
        name: "tool_call".into(),
        schema: json!({"type": "object", "properties": {
            "tool": {"const": tool.name},
            "arguments": required_only(&tool.parameters)},
            "required": ["tool", "arguments"], "additionalProperties": false}),
    }
}

/// The JSON a constrained answer holds: the text itself, else the text
/// closed where it was cut (a string and open braces).
pub(crate) fn parse_answer(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    let mut fixed = t.to_string();
    let quotes = t.matches('"').count() - t.matches("\\\"").count();
    if quotes % 2 == 1 {
        fixed.push('"');
    }
    let open = t
        .matches('{')
        .count()
        .saturating_sub(t.matches('}').count());
    fixed.push_str(&"}".repeat(open));
    serde_json::from_str(&fixed).ok()
}

impl Run<'_> {
    /// The tools a constrained step offers.
    pub(super) fn step_tools(&self) -> Vec<ToolSchema> {
        let offered = self.offered_schemas();
        if self.small.lean {
            lean_tools(offered)
        } else {
            offered
        }
    }

    /// One constrained step: the next action, then its arguments; a chosen
    /// tool becomes a stored tool call. "answer" (or a step that gave no
    /// usable JSON) asks for the free-text answer.
    pub(super) async fn constrained_call(&mut self) -> Result<CallResult, AgentError> {
        let tools = self.step_tools();
        self.small.steps += 1;
        let action = self.silent_json(action_constraint(&tools)).await?;
        let chosen = action
            .as_ref()
            .and_then(|v| v.get("tool"))
            .and_then(Value::as_str)
            .and_then(|n| tools.iter().find(|t| t.name == n))
            .cloned();
        let Some(tool) = chosen else {
            return self.free_answer().await;
        };
        let call = self.silent_json(arguments_constraint(&tool)).await?;
        let Some(arguments) = call
            .as_ref()
            .and_then(|v| v.get("arguments"))
            .filter(|a| a.is_object())
            .cloned()
        else {
            return self.free_answer().await;
        };
        let id = format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        self.seen_ids.insert(id.clone());
        let mut msg = ChatMessage::assistant("");
        msg.set_tool_calls(vec![ToolCall {
            id,
            name: tool.name.clone(),
            arguments,
        }]);
        self.conv.push(msg.clone(), MessageKind::Message, None)?;
        Ok(CallResult {
            msg,
            stopped: false,
        })
    }

    /// The free-text answer of a constrained run: no `tools` on the wire.
    pub(super) async fn free_answer(&mut self) -> Result<CallResult, AgentError> {
        let mut req = self.request(self.messages(&[]), false);
        if self.small.lean {
            req.max_tokens = Some(
                req.max_tokens
                    .map_or(LEAN_ANSWER_TOKENS, |n| n.min(LEAN_ANSWER_TOKENS)),
            );
        }
        self.check_room_shown(&req).await?;
        self.stream_call(&req, true).await
    }

    /// A silent request under `constraint`: the JSON it answered, `None`
    /// when the answer held none. Nothing is shown or stored.
    async fn silent_json(&mut self, constraint: Constraint) -> Result<Option<Value>, AgentError> {
        let mut req = self.request(self.messages(&[]), false);
        req.constraint = Some(constraint);
        req.temperature = Some(0.0);
        req.think = Some(ThinkSetting::Bool(false));
        req.max_tokens = Some(req.max_tokens.map_or(STEP_TOKENS, |n| n.min(STEP_TOKENS)));
        let mut stream =
            match guard::open(&*self.backend, &req, &self.agent.guard, self.cancel).await {
                Ok(s) => s,
                Err(crate::llm::LlmError::Cancelled) => return Ok(None),
                Err(e) => return Err(self.explain_rejection(e, &req)),
            };
        let mut text = String::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(ChatChunk::Text(d)) => text.push_str(&d),
                Ok(ChatChunk::Done { .. }) => break,
                Ok(_) => {}
                Err(crate::llm::LlmError::Cancelled) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        tracing::debug!("constrained step answered {text}");
        Ok(parse_answer(&text))
    }

    /// Says once per session (at its first turn, or the first turn on
    /// such a template) that tools go through text.
    pub(super) async fn tell_text_tools(&self) {
        if !self.small.text_tools || self.agent.config.llm.small_model == SmallModel::Off {
            return;
        }
        let answered_before = self
            .conv
            .context
            .iter()
            .any(|m| m.msg.role == crate::llm::Role::Assistant);
        if answered_before {
            return;
        }
        self.emit(crate::protocol::AgentEvent::Warning {
            message: format!(
                "the chat template of {} cannot render tools: navi offers them as text \
                 and asks for each call with constrained decoding",
                self.model
            ),
        })
        .await;
    }

    /// Calls a model made that cannot run as given: arguments that are not
    /// a JSON object, or a tool that was not offered. The first such batch
    /// gets its error results and the model tries again freely; after
    /// [`INVALID_STREAK`] in a row the run asks with constrained decoding
    /// (unless `[llm].small_model` is `off`).
    pub(super) fn note_invalid_calls(&mut self, calls: &[ToolCall]) {
        if self.agent.config.llm.small_model == SmallModel::Off || self.small.constrained {
            return;
        }
        let names = self.tool_names();
        let known =
            |n: &str| names.iter().any(|t| t == n) || n == crate::tools::builtin::load_tools::NAME;
        let invalid = calls
            .iter()
            .any(|c| !c.arguments.is_object() || !known(&c.name));
        self.small.invalid_streak = if invalid {
            self.small.invalid_streak + 1
        } else {
            0
        };
        if self.small.invalid_streak >= INVALID_STREAK {
            tracing::info!("the model made invalid tool calls; asking with constrained decoding");
            self.small.constrained = true;
        }
    }
}

#[cfg(test)]
#[path = "small_tests.rs"]
mod tests;
