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
use super::context::last_user_goal;
use super::lean;
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
pub(crate) const LEAN_NOTE: &str = crate::protocol::LEAN_NOTE;
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
    /// The lean preset's command of this turn, until its answer quotes it.
    pub(crate) command: Option<String>,
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
            command: None,
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

/// `req` as a constrained run sends it to a template without tool support:
/// no `tools` on the wire, their text form after the system prompt.
pub(crate) fn with_tools_as_text(req: &crate::llm::ChatRequest) -> crate::llm::ChatRequest {
    let mut out = req.clone();
    let text = tools_text(&out.tools);
    out.tools.clear();
    if let Some(first) = out.messages.first_mut()
        && first.role == crate::llm::Role::System
    {
        *first = ChatMessage::system(format!("{}\n\n{text}", first.text()));
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

/// The lean system prompt: persona and one line per tool (the examples go
/// with the constrained steps, `lean.rs`, so this prefix never changes).
pub(crate) fn lean_system(tools: &[ToolSchema]) -> String {
    let mut out = format!("{LEAN_PERSONA}\n");
    for t in tools {
        out.push_str(&format!("Tool {}: {}\n", t.name, t.description));
    }
    out
}

/// What `navi context` says about a profile whose model gets the lean preset.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LeanCost {
    /// The model that gets it.
    pub model: String,
    /// The tools its requests offer.
    pub tools: Vec<String>,
    /// Tokens of its base request (system prompt, no tool schemas).
    pub tokens: u64,
    /// `tokens` is the server's count (else an estimate).
    pub counted: bool,
}

impl LeanCost {
    pub(crate) fn line(&self) -> String {
        format!(
            "  {LEAN_NOTE} ({}): requests carry a short persona and {} as text instead — base request {}{} tokens",
            self.model,
            if self.tools.is_empty() {
                "no tools".to_string()
            } else {
                self.tools.join(", ")
            },
            if self.counted { "" } else { "≈ " },
            self.tokens,
        )
    }
}

/// The lean preset's base request for `profile`'s first model, when the
/// configuration and what the server says about the model choose it.
pub(crate) async fn lean_cost(
    agent: &super::Agent,
    profile: &crate::profile::Profile,
    cost: &super::budget::BaseCost,
    offered: Vec<ToolSchema>,
) -> Option<LeanCost> {
    if agent.config.llm.small_model == SmallModel::Off {
        return None;
    }
    let backend = agent.backend_for(profile).ok()?;
    // On a server that counts (llama-server), the model a turn would use
    // (the profile's list resolved as a run does); elsewhere `navi context`
    // asks nothing and goes by the first name.
    let first = profile.model.first()?.clone();
    let model = if cost.counted.is_some() {
        match agent.select_model(None, &*backend, profile).await {
            Ok(sel) => sel.model,
            Err(_) => first,
        }
    } else {
        first
    };
    let wait = std::time::Duration::from_secs(5);
    // `navi context` asks a server only where it counts the base request
    // (llama-server); elsewhere (Ollama) the model's name says its size.
    let traits = if cost.counted.is_some() {
        tokio::time::timeout(wait, backend.model_traits(&model))
            .await
            .unwrap_or_default()
    } else {
        crate::llm::size::ModelTraits {
            params: crate::llm::size::params_from_name(&model),
            template_tools: None,
        }
    };
    if !SmallPlan::choose(agent.config.llm.small_model, traits).lean {
        return None;
    }
    let tools = lean_tools(offered);
    let system = lean_system(&tools);
    let estimate = ((system.len() + super::tokens::FRAMING_CHARS_PER_MESSAGE) / 4) as u64;
    let req = crate::llm::ChatRequest::new(model.clone(), vec![ChatMessage::system(system)]);
    let counted = tokio::time::timeout(wait, backend.count_prompt(&req))
        .await
        .ok()
        .flatten();
    Some(LeanCost {
        model,
        tools: tools.into_iter().map(|t| t.name).collect(),
        tokens: counted.unwrap_or(estimate),
        counted: counted.is_some(),
    })
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
        grammar: None,
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
        grammar: None,
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
        if self.small.lean
            && let Some(terminal) = tools.iter().find(|t| t.name == "terminal").cloned()
        {
            return self.lean_shell_step(&terminal).await;
        }
        let action = self.silent_json(action_constraint(&tools), None).await?;
        let chosen = action
            .as_ref()
            .and_then(|v| v.get("tool"))
            .and_then(Value::as_str)
            .and_then(|n| tools.iter().find(|t| t.name == n))
            .cloned();
        let Some(tool) = chosen else {
            return self.free_answer().await;
        };
        let call = self.silent_json(arguments_constraint(&tool), None).await?;
        self.store_call(&tool, call).await
    }

    /// The lean preset's step for `terminal`: routed by the nearest examples
    /// (`lean.rs`), the command written by the model under the template's
    /// grammar.
    async fn lean_shell_step(&mut self, terminal: &ToolSchema) -> Result<CallResult, AgentError> {
        let request = last_user_goal(&self.conv.context).unwrap_or_default();
        let paths = lean::workspace_paths(self.session.work_dir(), &request);
        let intent = match lean::route(&request, &paths.entries) {
            lean::Route::Answer => return self.free_answer().await,
            lean::Route::Tool(i) => i,
            lean::Route::Unsure(i) => {
                let note = lean::examples_note(&request, i, true);
                let action = self
                    .silent_json(
                        action_constraint(std::slice::from_ref(terminal)),
                        Some(note),
                    )
                    .await?;
                if action.as_ref().and_then(|v| v.get("tool")) != Some(&json!(terminal.name)) {
                    return self.free_answer().await;
                }
                i
            }
        };
        let mut constraint = arguments_constraint(terminal);
        constraint.grammar = lean::command_grammar(intent, &request, &paths);
        let note = lean::examples_note(&request, intent, false);
        let call = self.silent_json(constraint, Some(note)).await?;
        self.small.command = call
            .as_ref()
            .and_then(|v| v.pointer("/arguments/command"))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.store_call(terminal, call).await
    }

    /// Stores the call a constrained step produced (`{"arguments": {…}}`);
    /// without usable arguments the model answers instead.
    async fn store_call(
        &mut self,
        tool: &ToolSchema,
        call: Option<Value>,
    ) -> Result<CallResult, AgentError> {
        let Some(arguments) = call
            .as_ref()
            .and_then(|v| v.get("arguments"))
            .filter(|a| a.is_object())
            .cloned()
        else {
            self.small.command = None;
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
    /// After the lean preset's command, the answer quotes its output.
    pub(super) async fn free_answer(&mut self) -> Result<CallResult, AgentError> {
        if self.small.lean
            && let Some(command) = self.small.command.take()
            && let Some(idx) = self.conv.last_result_index()
        {
            let result = self.conv.context[idx].msg.text().into_owned();
            return self.grounded_answer(&command, &result).await;
        }
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

    /// The lean answer after a command: the command and its output
    /// verbatim (`lean::grounded_answer`); no model call.
    async fn grounded_answer(
        &mut self,
        command: &str,
        result: &str,
    ) -> Result<CallResult, AgentError> {
        let answer = lean::grounded_answer(command, result);
        self.emit(crate::protocol::AgentEvent::StreamDelta {
            delta: answer.clone(),
            is_subagent: self.is_subagent(),
            agent: self.origin.clone(),
        })
        .await;
        let msg = ChatMessage::assistant(answer);
        self.conv.push(msg.clone(), MessageKind::Message, None)?;
        Ok(CallResult {
            msg,
            stopped: false,
        })
    }

    /// A silent request under `constraint`: the JSON it answered, `None`
    /// when the answer held none. Nothing is shown or stored.
    async fn silent_json(
        &mut self,
        constraint: Constraint,
        note: Option<String>,
    ) -> Result<Option<Value>, AgentError> {
        let text = self.silent_text(constraint, note).await?;
        Ok(parse_answer(&text))
    }

    /// A silent request under `constraint` (with `note` at the end of its
    /// messages): the text it answered. Nothing is shown or stored.
    async fn silent_text(
        &mut self,
        constraint: Constraint,
        note: Option<String>,
    ) -> Result<String, AgentError> {
        let notes: Vec<String> = note.into_iter().collect();
        let mut req = self.request(self.messages(&notes), false);
        req.constraint = Some(constraint);
        req.temperature = Some(0.0);
        req.think = Some(ThinkSetting::Bool(false));
        req.max_tokens = Some(req.max_tokens.map_or(STEP_TOKENS, |n| n.min(STEP_TOKENS)));
        let mut stream =
            match guard::open(&*self.backend, &req, &self.agent.guard, self.cancel).await {
                Ok(s) => s,
                Err(crate::llm::LlmError::Cancelled) => return Ok(String::new()),
                Err(e) => return Err(self.explain_rejection(e, &req)),
            };
        let mut text = String::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(ChatChunk::Text(d)) => text.push_str(&d),
                Ok(ChatChunk::Done { .. }) => break,
                Ok(_) => {}
                Err(crate::llm::LlmError::Cancelled) => return Ok(String::new()),
                Err(e) => return Err(e.into()),
            }
        }
        tracing::debug!("constrained step answered {text}");
        Ok(text)
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
