//! `http_request`: one HTTP request, status + headers + body back.
//!
//! Invariants: only http/https; the body is downloaded at most up to
//! `[tools].fetch_max_bytes` and shown at most up to `output_limit_bytes`,
//! each cut marked; binary bodies are described, not dumped; any call that
//! sends a body or uses a method other than GET/HEAD needs approval, and so
//! does any call to a non-public address ([`crate::tools::net_guard`]).
//! A 4xx/5xx status is `success: false` but still shows the response.
use crate::tools::fetch::{self, human_size};
use crate::tools::{Tool, ToolContext, ToolResult, args, truncate_output};
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::{Value, json};
use std::time::Duration;

pub struct HttpRequestTool;

const METHODS: [&str; 6] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

fn method_of(a: &Value) -> Result<Method, String> {
    let m = args::str_opt(a, "method")?
        .unwrap_or("GET")
        .trim()
        .to_ascii_uppercase();
    if !METHODS.contains(&m.as_str()) {
        return Err(format!(
            "unsupported method '{m}'; use one of {}",
            METHODS.join(", ")
        ));
    }
    Method::from_bytes(m.as_bytes()).map_err(|e| format!("invalid method '{m}': {e}"))
}

fn has_body(a: &Value) -> bool {
    !matches!(a.get("body"), None | Some(Value::Null))
}

#[async_trait::async_trait]
impl Tool for HttpRequestTool {
    fn name(&self) -> &str {
        "http_request"
    }

    fn description(&self) -> &str {
        "Send an HTTP request to an API; returns status, headers, body. For web pages use web_view."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string"},
                "method": {"type": "string", "enum": METHODS},
                "headers": {"type": "object"},
                "body": {"description": "string, or JSON sent as application/json"},
                "timeout_secs": {"type": "integer"}
            },
            "required": ["url"]
        })
    }

    fn approval_summary(&self, a: &Value) -> Option<String> {
        let method = method_of(a).unwrap_or(Method::POST);
        let url = a.get("url").and_then(Value::as_str).unwrap_or("");
        if !has_body(a) && (method == Method::GET || method == Method::HEAD) {
            return None;
        }
        let body = match a.get("body") {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => String::new(),
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

    async fn approval_request(&self, a: &Value, ctx: &ToolContext) -> Option<String> {
        let summary = self.approval_summary(a);
        let url = a.get("url").and_then(Value::as_str).unwrap_or("");
        // A change (POST, a body, ...) is asked about wherever it goes.
        let Some(net) = ctx.env.net_approval(url, ctx).await else {
            return summary;
        };
        let head = summary.unwrap_or_else(|| {
            let method = method_of(a).unwrap_or(Method::GET);
            format!("{method} {url}")
        });
        Some(format!("{head}\n{net}"))
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let raw_url = match args::str_req(a, "url") {
            Ok(u) => u,
            Err(e) => return ToolResult::err(e),
        };
        let url = match fetch::parse_url(raw_url) {
            Ok(u) => u,
            Err(e) => return ToolResult::err(e),
        };
        let method = match method_of(a) {
            Ok(m) => m,
            Err(e) => return ToolResult::err(e),
        };
        let cfg = &ctx.env.config.tools;
        let max = cfg.http_timeout_secs.max(1);
        let timeout = match args::u64_opt(a, "timeout_secs") {
            Ok(t) => Duration::from_secs(t.unwrap_or(max).clamp(1, max)),
            Err(e) => return ToolResult::err(e),
        };
        let client = match ctx.env.web_client(&url, ctx).await {
            Ok(c) => c,
            Err(e) => return ToolResult::err(e),
        };
        let mut req = client.request(method.clone(), url.clone());
        let mut has_content_type = false;
        match a.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    let value = match v {
                        Value::String(s) => s.clone(),
                        Value::Number(_) | Value::Bool(_) => v.to_string(),
                        other => {
                            return ToolResult::err(format!(
                                "header '{k}' must be a string, got {other}"
                            ));
                        }
                    };
                    let name = match HeaderName::from_bytes(k.as_bytes()) {
                        Ok(n) => n,
                        Err(_) => return ToolResult::err(format!("invalid header name '{k}'")),
                    };
                    let value = match HeaderValue::from_str(&value) {
                        Ok(v) => v,
                        Err(_) => {
                            return ToolResult::err(format!("invalid value for header '{k}'"));
                        }
                    };
                    has_content_type |= name == CONTENT_TYPE;
                    req = req.header(name, value);
                }
            }
            Some(other) => {
                return ToolResult::err(format!(
                    "argument 'headers' must be an object of name → value, got {other}"
                ));
            }
        }
        match a.get("body") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => req = req.body(s.clone()),
            Some(v) => {
                if !has_content_type {
                    req = req.header(CONTENT_TYPE, "application/json");
                }
                req = req.body(v.to_string());
            }
        }
        let fetched =
            match fetch::send_capped(req, url.as_str(), timeout, cfg.fetch_max_bytes, &ctx.cancel)
                .await
            {
                Ok(f) => f,
                Err(e) => return ToolResult::err(e),
            };
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
        let result = if status.is_client_error() || status.is_server_error() {
            ToolResult {
                success: false,
                output: out,
                error: Some(format!("HTTP {status} from {}", fetched.final_url)),
                ..Default::default()
            }
        } else {
            ToolResult::ok(out)
        };
        result.with_meta("status", json!(status.as_u16()))
    }
}
