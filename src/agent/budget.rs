//! What the fixed part of every request costs: persona, profile prompt and
//! tool schemas, in the same estimated tokens the agent uses for its window
//! checks (`tokens::estimate`, `tokens::estimate_tools`). `navi context` and
//! `/context` print this breakdown; a test holds every shipped profile under
//! its budget. Where the server can count (`LlmBackend::count_prompt`),
//! `count_base` adds its count of the same base request, and the rows are
//! scaled to it — the figure the window refusals name too.
use super::context::{PERSONA_SEPARATOR, profile_roster, system_prompt};
use super::tokens::{
    FRAMING_CHARS_PER_MESSAGE, TOOLS_PREAMBLE_TOKENS, estimate_tool, estimate_tools,
};
use crate::llm::{ChatMessage, ChatRequest, ToolSchema};
use crate::profile::Profile;
use crate::tools::ToolRegistry;
use serde::Serialize;

/// Target for the default profile's base request (fits a 4,096-token window
/// with room for the conversation and the answer). The estimate follows
/// real counts closely (tool schemas as templates render them), so this is
/// close to real tokens.
pub const DEFAULT_PROFILE_BUDGET: u64 = 1_200;
/// No shipped profile may cost more than this.
pub const PROFILE_BUDGET: u64 = 1_500;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCost {
    pub name: String,
    pub(crate) tokens: u64,
}

/// Estimated tokens of the fixed part of a profile's requests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaseCost {
    pub(crate) profile: String,
    pub(crate) persona: u64,
    pub(crate) profile_prompt: u64,
    /// The list of the other profiles at the end of the system prompt.
    pub(crate) roster: u64,
    pub tools: Vec<ToolCost>,
    /// System message (with framing) plus every tool schema.
    pub total: u64,
    /// The server's count of the same base request, when it can count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted: Option<u64>,
    /// The base request itself (what `counted` counts).
    #[serde(skip)]
    pub(crate) request: Option<ChatRequest>,
    /// The lean preset the profile's model gets instead (a tiny model,
    /// `[llm].small_model`), when `count_base` found one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lean: Option<super::small::LeanCost>,
    /// The server was seen to re-read the previous answer on every turn
    /// for this model (a sliding-window model on llama-server without
    /// `--swa-full`): its cache is defeated, and navi warms it after each
    /// answer (`cache_warm.rs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rereads_answers: bool,
}

impl BaseCost {
    /// The figure to show: the server's count, else the estimate.
    pub fn tokens(&self) -> u64 {
        self.counted.unwrap_or(self.total)
    }

    /// A row's estimate scaled to the server's count.
    fn row(&self, n: u64) -> u64 {
        match self.counted {
            Some(c) if self.total > 0 => (n as f64 * c as f64 / self.total as f64).round() as u64,
            _ => n,
        }
    }
}

fn text_tokens(s: &str) -> u64 {
    (s.len() / 4) as u64
}

/// The base cost of `profile` with the tools `names` (as the main loop sends them).
pub(crate) fn base_cost(
    persona: &str,
    profile: &Profile,
    registry: &ToolRegistry,
    names: &[String],
    roster: Option<&str>,
    on_demand: bool,
) -> BaseCost {
    let schemas: Vec<ToolSchema> =
        super::on_demand::offered(registry, profile, names, &[], on_demand);
    let mut system = system_prompt(persona, profile, false);
    if let Some(r) = roster {
        system.push_str("\n\n");
        system.push_str(r);
    }
    let tools: Vec<ToolCost> = schemas
        .iter()
        .map(|s| ToolCost {
            name: s.name.clone(),
            tokens: estimate_tool(s),
        })
        .collect();
    let system_tokens = ((system.len() + FRAMING_CHARS_PER_MESSAGE) / 4) as u64;
    let persona_tokens = if persona.trim().is_empty() {
        0
    } else {
        text_tokens(persona.trim()) + text_tokens(PERSONA_SEPARATOR)
    };
    BaseCost {
        profile: profile.id.clone(),
        persona: persona_tokens,
        profile_prompt: text_tokens(&profile.system_prompt),
        roster: roster.map(text_tokens).unwrap_or(0),
        total: system_tokens + estimate_tools(&schemas),
        tools,
        counted: None,
        lean: None,
        rereads_answers: false,
        request: Some({
            let mut req = ChatRequest::new(
                profile.model.first().cloned().unwrap_or_default(),
                vec![ChatMessage::system(system)],
            );
            req.tools = schemas;
            req
        }),
    }
}

/// The breakdown as the lines `navi context` and `/context` print.
pub fn render(cost: &BaseCost) -> Vec<String> {
    let head = match cost.counted {
        Some(n) => format!(
            "profile {} — base request {n} tokens (counted by the server; rows scaled to it)",
            cost.profile
        ),
        None => format!(
            "profile {} — base request ≈ {} tokens (estimated: ~4 characters per token, tool schemas as a chat template renders them)",
            cost.profile, cost.total
        ),
    };
    let mut out = vec![
        head,
        format!("  persona          {:>6}", cost.row(cost.persona)),
        format!("  profile prompt   {:>6}", cost.row(cost.profile_prompt)),
        format!("  other profiles   {:>6}", cost.row(cost.roster)),
    ];
    let tools_total: u64 = cost.tools.iter().map(|t| t.tokens).sum::<u64>()
        + if cost.tools.is_empty() {
            0
        } else {
            TOOLS_PREAMBLE_TOKENS
        };
    out.push(format!(
        "  tools ({:>2})       {:>6}",
        cost.tools.len(),
        cost.row(tools_total)
    ));
    for t in &cost.tools {
        out.push(format!("    {:<18} {:>6}", t.name, cost.row(t.tokens)));
    }
    if let Some(l) = &cost.lean {
        out.push(l.line());
    }
    if cost.rereads_answers {
        out.push(REREADS_NOTE.into());
    }
    out
}

/// `navi context` on a server whose setup defeats the prompt cache.
const REREADS_NOTE: &str = "  prompt cache: this server re-reads the previous answer on every \
turn for this model (a sliding-window or recurrent model on llama-server without --swa-full); \
navi re-sends the conversation after each answer, one short extra request, so the next message \
is all it reads. Starting llama-server with --swa-full keeps answers without it.";

impl super::Agent {
    /// The base cost of a profile as the main loop would send it: its
    /// enabled tools plus the user tools enabled for every profile.
    pub fn base_cost(&self, profile_id: &str) -> Result<BaseCost, super::AgentError> {
        let profile = self.profile(profile_id)?;
        let registry = self.tools.read().map(|r| r.clone()).unwrap_or_default();
        let mut names = profile.enabled_tools.clone();
        for n in registry.enabled_user() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let roster = profile_roster(&self.profiles, &profile.id);
        Ok(base_cost(
            self.persona(),
            profile,
            &registry,
            &names,
            roster.as_deref(),
            self.config.tools.on_demand,
        ))
    }

    /// `base_cost` with the server's count of the base request where the
    /// server can count (asked now, lazily; `counted` stays `None` else).
    pub async fn count_base(&self, profile_id: &str) -> Result<BaseCost, super::AgentError> {
        let mut cost = self.base_cost(profile_id)?;
        let profile = self.profile(profile_id)?;
        // The schemas the run offers (the request below may carry them as
        // text instead).
        let offered = cost
            .request
            .as_ref()
            .map(|r| r.tools.clone())
            .unwrap_or_default();
        if let (Ok(backend), Some(req)) = (self.backend_for(profile), cost.request.as_ref()) {
            // A server that does not answer soon leaves the estimate.
            let wait = std::time::Duration::from_secs(5);
            cost.counted = tokio::time::timeout(wait, backend.count_prompt(req))
                .await
                .ok()
                .flatten();
            // A server that counts also says whether its template renders
            // tools; where it does not, the run sends them as text in the
            // system prompt (docs/small-models.md), and that is counted.
            if cost.counted.is_some()
                && self.config.llm.small_model != crate::config::SmallModel::Off
            {
                let traits = tokio::time::timeout(wait, backend.model_traits(&req.model))
                    .await
                    .unwrap_or_default();
                if traits.template_tools == Some(false) {
                    let text = super::small::with_tools_as_text(req);
                    if let Some(n) = tokio::time::timeout(wait, backend.count_prompt(&text))
                        .await
                        .ok()
                        .flatten()
                    {
                        cost.counted = Some(n);
                        cost.request = Some(text);
                    }
                }
            }
        }
        cost.lean = super::small::lean_cost(self, profile, &cost, offered).await;
        if let (Ok(backend), Some(req)) = (self.backend_for(profile), cost.request.as_ref()) {
            let model = cost.lean.as_ref().map_or(&req.model, |l| &l.model);
            cost.rereads_answers = backend.rereads_answers(model).await;
        }
        Ok(cost)
    }
}
