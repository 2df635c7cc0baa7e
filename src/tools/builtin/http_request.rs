//! `http_request`: one HTTP request, status + headers + body back.
//!
//! Invariants: only http/https; the body is downloaded at most up to
//! `[tools].fetch_max_bytes` and shown at most up to `output_limit_bytes`,
//! each cut marked; binary bodies are described, not dumped; any call that
//! sends a body or uses a method other than GET/HEAD needs approval, and so
//! does any call to a non-public address ([`crate::tools::net_guard`]).
//! A 4xx/5xx status is `success: false` but still shows the response.
use crate::protocol::ToolDisplay;
use crate::tools::fetch::{self, human_size};
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool, truncate_output};
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Duration;

pub struct HttpRequestTool;

// The methods `http_request` sends (matched ignoring case; no doc comment:
// it would become a description the model is sent).
#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum HttpMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
}

impl HttpMethod {
    fn method(self) -> Method {
        match self {
            HttpMethod::Get => Method::GET,
            HttpMethod::Post => Method::POST,
            HttpMethod::Put => Method::PUT,
            HttpMethod::Patch => Method::PATCH,
            HttpMethod::Delete => Method::DELETE,
            HttpMethod::Head => Method::HEAD,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct HttpRequestArgs {
    url: String,
    method: Option<HttpMethod>,
    headers: Option<Map<String, Value>>,
    /// string, or JSON sent as application/json
    body: Option<Value>,
    timeout_secs: Option<u64>,
}

impl HttpRequestArgs {
    fn method(&self) -> Method {
        self.method.unwrap_or(HttpMethod::Get).method()
    }
}

#[async_trait::async_trait]
impl TypedTool for HttpRequestTool {
    type Args = HttpRequestArgs;

    fn name(&self) -> &str {
        "http_request"
    }

    fn description(&self) -> &str {
        "Send an HTTP request to an API; returns status, headers, body. For web pages use web_view."
    }

    /// Reads (GET/HEAD without a body) run without asking; anything that
    /// may change state asks.
    fn approval(&self, a: &HttpRequestArgs) -> Option<String> {
        let method = a.method();
        let url = &a.url;
        if a.body.is_none() && (method == Method::GET || method == Method::HEAD) {
            return None;
        }
        let body = match &a.body {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        if body.is_empty() {
            Some(format!("{method} {url}"))
        } else {
            Some(format!(
                "{method} {url}\nbody: {}",
                truncate_output(&body, 2000)
            ))
        }
    }

    async fn approval_request(&self, a: &HttpRequestArgs, ctx: &ToolContext) -> Option<String> {
        let summary = self.approval(a);
        let url = &a.url;
        let Some(net) = ctx.env.net_approval(url, ctx).await else {
            return summary;
        };
        let head = summary.unwrap_or_else(|| format!("{} {url}", a.method()));
        Some(format!("{head}\n{net}"))
    }

    fn describe(&self, a: &HttpRequestArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let subject = format!("{} {}", a.method(), a.url);
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Fetch,
            "http_request",
            Some(&subject),
        );
        info.url = Some(a.url.clone());
        info
    }

    async fn run(&self, a: HttpRequestArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = fetch::parse_url(&a.url)?;
        let method = a.method();
        let cfg = &ctx.env.config.tools;
        let max = cfg.http_timeout_secs.max(1);
        let timeout = Duration::from_secs(a.timeout_secs.unwrap_or(max).clamp(1, max));
        let client = ctx.env.web_client(&url, ctx).await?;
        let mut req = client.request(method.clone(), url.clone());
        let mut has_content_type = false;
        for (k, v) in a.headers.iter().flatten() {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => v.to_string(),
                other => {
                    return Err(ToolError::args(format!(
                        "header '{k}' must be a string, got {other}"
                    )));
                }
            };
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ToolError::args(format!("invalid header name '{k}'")))?;
            let value = HeaderValue::from_str(&value)
                .map_err(|_| ToolError::args(format!("invalid value for header '{k}'")))?;
            has_content_type |= name == CONTENT_TYPE;
            req = req.header(name, value);
        }
        match a.body {
            None => {}
            Some(Value::String(s)) => req = req.body(s),
            Some(v) => {
                if !has_content_type {
                    req = req.header(CONTENT_TYPE, "application/json");
                }
                req = req.body(v.to_string());
            }
        }
        let fetched =
            fetch::send_capped(req, url.as_str(), timeout, cfg.fetch_max_bytes, &ctx.cancel)
                .await?;
        let mut out = format!("{:?} {}\n", fetched.version, fetched.status);
        for (k, v) in &fetched.headers {
            out.push_str(&format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())));
        }
        out.push('\n');
        let body_len = fetched.body.len() as u64;
        if method == Method::HEAD {
            out.push_str("(HEAD: no body)");
        } else if fetched.body.is_empty() {
            out.push_str("(empty body)");
        } else if fetch::looks_like_text(&fetched.body) {
            let text = String::from_utf8_lossy(&fetched.body);
            out.push_str(&truncate_output(&text, cfg.output_limit_bytes));
        } else {
            out.push_str(&format!(
                "[binary body: {}, {} — not shown]",
                fetched.mime().unwrap_or_else(|| "unknown type".into()),
                human_size(fetched.declared_len().unwrap_or(body_len))
            ));
        }
        if fetched.truncated {
            out.push_str(&format!(
                "\n[... body cut at {} ([tools].fetch_max_bytes); the rest was not downloaded ...]",
                human_size(body_len)
            ));
        }
        let status = fetched.status;
        let shown = ToolDisplay::Web {
            url: fetched.final_url.to_string(),
            title: None,
            status: Some(status.as_u16()),
            content_type: fetched.mime(),
        };
        if status.is_client_error() || status.is_server_error() {
            return Err(
                ToolError::failed(format!("HTTP {status} from {}", fetched.final_url))
                    .with_output(out)
                    .with_meta("status", json!(status.as_u16()))
                    .with_display(shown),
            );
        }
        Ok(ToolOutput::new(out)
            .with_meta("status", json!(status.as_u16()))
            .with_display(shown))
    }
}
