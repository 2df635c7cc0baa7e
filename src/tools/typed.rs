//! Typed built-in tools: each declares an argument struct
//! (`#[derive(Deserialize, JsonSchema)]`), the schema the model sees is
//! generated from it, and `run` returns `Result<ToolOutput, ToolError>`.
//!
//! Invariants: one adaptor ([`Tool`] for every [`TypedTool`]) is the only
//! place where a call's JSON becomes the argument struct and where a
//! `Result` becomes the [`ToolResult`] the model reads, so every argument
//! problem of every built-in reads the same way: `<tool>: <what is wrong>`,
//! naming the argument and what was expected. The schema sent to the model
//! is the one the arguments are checked against (see [`args_schema`]).
use super::arg_check::{self, Schemas};
use super::{Tool, ToolContext, ToolResult};
use crate::protocol::{CallInfo, ToolDisplay};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What a successful call returns: the text the model reads plus internal
/// hints (see [`ToolResult::metadata`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolOutput {
    pub(crate) text: String,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) display: Option<ToolDisplay>,
    pub(crate) image: Option<crate::llm::ImageData>,
}

impl ToolOutput {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            metadata: Map::new(),
            display: None,
            image: None,
        }
    }

    /// An image the model is to look at on its next step.
    pub(crate) fn with_image(mut self, mime: &str, base64: String) -> Self {
        self.image = Some(crate::llm::ImageData {
            mime: mime.to_string(),
            base64,
        });
        self
    }

    pub(crate) fn with_meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_string(), value);
        self
    }

    pub(crate) fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(display);
        self
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::new(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::new(text)
    }
}

/// Why a call failed. `Args` errors are about the call's arguments and are
/// shown as `<tool>: <message>`; other failures are shown as they are. A
/// failure may still carry output (a failed command's stdout, an HTTP error
/// body) and metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolError {
    pub(crate) message: String,
    pub(crate) output: String,
    pub(crate) metadata: Map<String, Value>,
    /// Boxed: keeps `Result<_, ToolError>` small.
    pub(crate) display: Option<Box<ToolDisplay>>,
    args: bool,
}

impl ToolError {
    /// A failure while doing the work (shown without a prefix).
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            ..Default::default()
        }
    }

    /// The arguments do not make a valid call (shown as `<tool>: <message>`).
    pub(crate) fn args(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            args: true,
            ..Default::default()
        }
    }

    /// An argument this call needs is absent (e.g. `content` for a write).
    pub(crate) fn missing(field: &str, expected: &str) -> Self {
        Self::args(arg_check::missing_message(field, expected))
    }

    /// An argument is present but blank.
    pub(crate) fn empty(field: &str) -> Self {
        Self::args(format!("argument '{field}' is empty"))
    }

    pub(crate) fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = output.into();
        self
    }

    pub(crate) fn with_meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_string(), value);
        self
    }

    pub(crate) fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(Box::new(display));
        self
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::failed(message)
    }
}

/// Turns a finished [`ToolResult`] (e.g. from `exec_report`) into the typed
/// form without losing output or metadata.
pub(crate) fn from_result(r: ToolResult) -> Result<ToolOutput, ToolError> {
    if r.success {
        return Ok(ToolOutput {
            text: r.output,
            metadata: r.metadata,
            display: r.display,
            image: r.image,
        });
    }
    Err(ToolError {
        message: r.error.unwrap_or_default(),
        output: r.output,
        metadata: r.metadata,
        display: r.display.map(Box::new),
        args: false,
    })
}

/// The one place a typed call's outcome becomes what the model reads.
pub(crate) fn into_result(tool: &str, r: Result<ToolOutput, ToolError>) -> ToolResult {
    match r {
        Ok(out) => ToolResult {
            success: true,
            output: out.text,
            error: None,
            metadata: out.metadata,
            display: out.display,
            image: out.image,
        },
        Err(e) => ToolResult {
            success: false,
            output: e.output,
            error: Some(if e.args {
                format!("{tool}: {}", e.message)
            } else {
                e.message
            }),
            metadata: e.metadata,
            display: e.display.map(|d| *d),
            image: None,
        },
    }
}

/// A built-in tool with a typed argument struct. Implementing this gives the
/// tool the object-safe [`Tool`] interface the registry uses.
#[async_trait::async_trait]
pub(crate) trait TypedTool: Send + Sync + 'static {
    /// The arguments; its doc comments become the schema's descriptions.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    fn name(&self) -> &str;
    fn description(&self) -> &str;

    /// `Some(what will happen, in full)` when this call needs approval.
    fn approval(&self, _args: &Self::Args) -> Option<String> {
        None
    }

    /// Like [`TypedTool::approval`] but may look things up first.
    async fn approval_request(&self, args: &Self::Args, _ctx: &ToolContext) -> Option<String> {
        self.approval(args)
    }

    /// What a call is about (see [`Tool::describe`]); no I/O.
    fn describe(&self, _args: &Self::Args, _base: &std::path::Path) -> CallInfo {
        CallInfo::other(self.name())
    }

    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The schemas of an argument type, generated once per type.
fn schemas_of<A: JsonSchema + 'static>() -> Arc<Schemas> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Schemas>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<A>();
    if let Some(s) = cache.lock().ok().and_then(|m| m.get(&id).cloned()) {
        return s;
    }
    let s = Arc::new(Schemas::generate::<A>());
    if let Ok(mut m) = cache.lock() {
        m.insert(id, s.clone());
    }
    s
}

/// The JSON schema the model is given for `A` (inline, no `$schema`,
/// `type: object`, descriptions from doc comments, enums as strings).
pub(crate) fn args_schema<A: JsonSchema + 'static>() -> Value {
    schemas_of::<A>().model.clone()
}

/// Parses a call's arguments into `A`; the error is the message the model
/// reads (without the tool prefix).
pub(crate) fn parse_args<A: DeserializeOwned + JsonSchema + 'static>(
    args: &Value,
) -> Result<A, String> {
    arg_check::parse(&schemas_of::<A>(), args)
}

#[async_trait::async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> Value {
        args_schema::<T::Args>()
    }

    /// Bad arguments need no approval: the call fails before doing anything.
    fn approval_summary(&self, args: &Value) -> Option<String> {
        let parsed = parse_args::<T::Args>(args).ok()?;
        self.approval(&parsed)
    }

    async fn approval_request(&self, args: &Value, ctx: &ToolContext) -> Option<String> {
        let parsed = parse_args::<T::Args>(args).ok()?;
        TypedTool::approval_request(self, &parsed, ctx).await
    }

    /// Arguments that do not parse describe nothing more than the tool.
    fn describe(&self, args: &Value, base: &std::path::Path) -> CallInfo {
        match parse_args::<T::Args>(args) {
            Ok(parsed) => TypedTool::describe(self, &parsed, base),
            Err(_) => CallInfo::other(TypedTool::name(self)),
        }
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        let name = TypedTool::name(self);
        let outcome = match parse_args::<T::Args>(args) {
            Ok(parsed) => self.run(parsed, ctx).await,
            Err(e) => Err(ToolError::args(e)),
        };
        into_result(name, outcome)
    }
}
