//! `web_view`: fetches a page and returns it as readable text.
//!
//! Invariants: HTML is rendered to text with html2text (links as numbered
//! references) off the async runtime; JSON and other text types are returned
//! as they are; binary types are described (type and size), never dumped;
//! output is capped at `max_chars` (≤ `output_limit_bytes`) with a marker that
//! says how to see more (`offset`). Read-only: no approval needed, except
//! for a non-public address ([`crate::tools::net_guard`]).
use crate::protocol::ToolDisplay;
use crate::tools::fetch::{self, human_size};
use crate::tools::html_util::extract_title;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::time::Duration;

pub struct WebViewTool;

/// Rendering width for html2text.
const WIDTH: usize = 100;

fn render_html(bytes: Vec<u8>) -> Result<String, String> {
    html2text::config::plain()
        .string_from_read(&bytes[..], WIDTH)
        .map_err(|e| format!("cannot render the page: {e}"))
}

/// Cuts `text` to `[offset, offset + max)` on char boundaries, with markers.
fn window(text: &str, offset: usize, max: usize) -> String {
    let total = text.len();
    let mut start = offset.min(total);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut end = start.saturating_add(max).min(total);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push_str(&format!("[... skipped the first {start} bytes ...]\n"));
    }
    out.push_str(&text[start..end]);
    if end < total {
        out.push_str(&format!(
            "\n[... truncated: showing bytes {start}-{end} of {total}; call again with offset={end} to read on ...]"
        ));
    }
    out
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WebViewArgs {
    url: String,
    offset: Option<u64>,
    max_chars: Option<u64>,
}

#[async_trait::async_trait]
impl TypedTool for WebViewTool {
    type Args = WebViewArgs;

    fn name(&self) -> &str {
        "web_view"
    }

    fn description(&self) -> &str {
        "Read a web page as plain text; long pages continue from 'offset'."
    }

    async fn approval_request(&self, a: &WebViewArgs, ctx: &ToolContext) -> Option<String> {
        let url = &a.url;
        let net = ctx.env.net_approval(url, ctx).await?;
        Some(format!("fetch {url}\n{net}"))
    }

    fn describe(&self, a: &WebViewArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Fetch,
            "web_view",
            Some(&a.url),
        );
        info.url = Some(a.url.clone());
        info
    }

    async fn run(&self, a: WebViewArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = fetch::parse_url(&a.url)?;
        let cfg = &ctx.env.config.tools;
        let limit = cfg.output_limit_bytes.max(100);
        let offset = a.offset.unwrap_or(0) as usize;
        let max = a
            .max_chars
            .map(|m| (m as usize).clamp(100, limit))
            .unwrap_or(limit);
        let client = ctx.env.web_client(&url, ctx).await?;
        let req = client.get(url.clone()).header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8",
        );
        let timeout = Duration::from_secs(cfg.http_timeout_secs.max(1));
        let f = fetch::send_capped(req, url.as_str(), timeout, cfg.fetch_max_bytes, &ctx.cancel)
            .await?;
        let mime = f.mime();
        let shown = |title: Option<String>| ToolDisplay::Web {
            url: f.final_url.to_string(),
            title,
            status: Some(f.status.as_u16()),
            content_type: mime.clone(),
        };
        if !f.status.is_success() {
            return Err(ToolError::failed(format!(
                "HTTP {} for {}; the page could not be loaded",
                f.status, f.final_url
            ))
            .with_meta("status", json!(f.status.as_u16()))
            .with_display(shown(None)));
        }
        let size = f.declared_len().unwrap_or(f.body.len() as u64);
        let is_html = match mime.as_deref() {
            Some(m) => m == "text/html" || m == "application/xhtml+xml",
            None => {
                let head =
                    String::from_utf8_lossy(&f.body[..f.body.len().min(1024)]).to_lowercase();
                head.contains("<html") || head.contains("<!doctype html")
            }
        };
        let textual =
            mime.as_deref().is_some_and(fetch::is_text_mime) || fetch::looks_like_text(&f.body);
        let cut_note = if f.truncated {
            format!(
                "\n[note: the download stopped at {} ([tools].fetch_max_bytes); the end of the page is missing]",
                human_size(f.body.len() as u64)
            )
        } else {
            String::new()
        };
        let mime_shown = mime.clone().unwrap_or_else(|| "unknown type".into());
        if is_html {
            let html = String::from_utf8_lossy(&f.body).into_owned();
            let title = extract_title(&html);
            let page = shown(title.clone());
            let rendered = tokio::task::spawn_blocking(move || render_html(f.body))
                .await
                .map_err(|e| format!("rendering the page failed: {e}"))??;
            let mut out = String::new();
            if let Some(t) = &title {
                out.push_str(&format!("Title: {t}\n"));
            }
            out.push_str(&format!("URL: {}\n\n", f.final_url));
            out.push_str(&window(rendered.trim(), offset, max));
            out.push_str(&cut_note);
            let mut r = ToolOutput::new(out)
                .with_meta("content_type", json!(mime_shown))
                .with_display(page);
            if let Some(t) = title {
                r = r.with_meta("title", json!(t));
            }
            return Ok(r);
        }
        if textual {
            let text = String::from_utf8_lossy(&f.body);
            let mut out = format!("URL: {}\nContent-Type: {mime_shown}\n\n", f.final_url);
            out.push_str(&window(&text, offset, max));
            out.push_str(&cut_note);
            return Ok(ToolOutput::new(out)
                .with_meta("content_type", json!(mime_shown))
                .with_display(shown(None)));
        }
        let hint = if mime_shown.starts_with("image/") {
            "; use image_view to look at it"
        } else {
            ""
        };
        Ok(ToolOutput::new(format!(
            "URL: {}\nbinary content: {mime_shown}, {} — not shown as text{hint}",
            f.final_url,
            human_size(size)
        ))
        .with_meta("content_type", json!(mime_shown))
        .with_display(shown(None)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::window;

    #[test]
    fn window_marks_cuts() {
        let w = window("abcdefghij", 2, 3);
        assert!(
            w.starts_with("[... skipped the first 2 bytes ...]\ncde"),
            "{w}"
        );
        assert!(w.contains("offset=5"), "{w}");
        assert_eq!(window("abc", 0, 10), "abc");
    }
}
