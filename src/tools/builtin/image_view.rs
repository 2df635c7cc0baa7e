//! `image_view`: loads an image (file or URL) for a multimodal model.
//!
//! Invariants: local paths pass the same root check as `filesystem`
//! (canonicalised first); at most `[tools].image_max_bytes` are read or
//! downloaded; only PNG, JPEG, GIF and WebP pass, recognised by their magic
//! bytes (never by extension or Content-Type). A URL on a non-public address
//! needs approval ([`crate::tools::net_guard`]). On success the metadata holds
//! `is_image: true`, `mime` and `base64`; the agent moves the image into the
//! context buffer and the model sees only the short text.
use crate::tools::fetch::{self, human_size};
use crate::tools::fs_guard::{OpenPolicy, open_regular};
use crate::tools::image_probe::{dimensions, sniff};
use crate::tools::paths::FsRoots;
use crate::tools::{Tool, ToolContext, ToolResult, args};
use base64::Engine as _;
use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;

pub struct ImageViewTool;

fn read_file_capped(
    path: &std::path::Path,
    cap: usize,
    policy: OpenPolicy,
) -> Result<Vec<u8>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(format!("{} is a directory, not an image", path.display()));
    }
    let (file, meta) = open_regular(path, policy).map_err(|e| e.to_string())?;
    if meta.len() > cap as u64 {
        return Err(format!(
            "{} is {}, larger than the image limit of {} ([tools].image_max_bytes)",
            path.display(),
            human_size(meta.len()),
            human_size(cap as u64)
        ));
    }
    let mut buf = Vec::new();
    file.take(cap as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(buf)
}

#[async_trait::async_trait]
impl Tool for ImageViewTool {
    fn name(&self) -> &str {
        "image_view"
    }

    fn description(&self) -> &str {
        "Look at an image file or URL (PNG, JPEG, GIF, WebP); you see it on your next step."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "url": {"type": "string"}
            }
        })
    }

    async fn approval_request(&self, a: &Value, ctx: &ToolContext) -> Option<String> {
        let url = a.get("url").and_then(Value::as_str)?;
        let net = ctx.env.net_approval(url, ctx).await?;
        Some(format!("load image {url}\n{net}"))
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let (path, url) = match (args::str_opt(a, "path"), args::str_opt(a, "url")) {
            (Ok(p), Ok(u)) => (
                p.filter(|s| !s.trim().is_empty()),
                u.filter(|s| !s.trim().is_empty()),
            ),
            (Err(e), _) | (_, Err(e)) => return ToolResult::err(e),
        };
        let cap = ctx.env.config.tools.image_max_bytes.max(1);
        let (bytes, source) = match (path, url) {
            (Some(_), Some(_)) => return ToolResult::err("give either 'path' or 'url', not both"),
            (None, None) => {
                return ToolResult::err(
                    "missing argument: give 'path' (a local image file) or 'url'",
                );
            }
            (Some(p), None) => {
                let roots = FsRoots::from_config(
                    &ctx.env.config.security.fs_allowed_paths,
                    &ctx.env.work_dir,
                );
                let resolved = match roots.resolve_checked(p, &ctx.env.work_dir) {
                    Ok(r) => r,
                    Err(e) => return ToolResult::err(e),
                };
                let shown = resolved.display().to_string();
                let sec = &ctx.env.config.security;
                let policy = OpenPolicy {
                    refuse_hard_links: !roots.is_unrestricted() && !sec.fs_allow_hard_links,
                };
                let secs = ctx.env.config.tools.fs_timeout_secs.max(1);
                let job =
                    tokio::task::spawn_blocking(move || read_file_capped(&resolved, cap, policy));
                match tokio::time::timeout(Duration::from_secs(secs), job).await {
                    Ok(Ok(Ok(b))) => (b, shown),
                    Ok(Ok(Err(e))) => return ToolResult::err(e),
                    Ok(Err(e)) => return ToolResult::err(format!("reading the image failed: {e}")),
                    Err(_) => {
                        return ToolResult::err(format!(
                            "reading {shown} did not finish within {secs}s ([tools].fs_timeout_secs)"
                        ));
                    }
                }
            }
            (None, Some(u)) => {
                let url = match fetch::parse_url(u) {
                    Ok(u) => u,
                    Err(e) => return ToolResult::err(e),
                };
                let timeout = Duration::from_secs(ctx.env.config.tools.http_timeout_secs.max(1));
                let client = match ctx.env.web_client(&url, ctx).await {
                    Ok(c) => c,
                    Err(e) => return ToolResult::err(e),
                };
                let req = client.get(url.clone());
                let f = match fetch::send_capped(req, url.as_str(), timeout, cap, &ctx.cancel).await
                {
                    Ok(f) => f,
                    Err(e) => return ToolResult::err(e),
                };
                if !f.status.is_success() {
                    return ToolResult::err(format!("HTTP {} for {}", f.status, f.final_url));
                }
                if f.truncated {
                    return ToolResult::err(format!(
                        "the image at {url} is larger than the limit of {} ([tools].image_max_bytes)",
                        human_size(cap as u64)
                    ));
                }
                (f.body, f.final_url.to_string())
            }
        };
        let Some(kind) = sniff(&bytes) else {
            let what = if bytes.is_empty() {
                "an empty file".to_string()
            } else if fetch::looks_like_text(&bytes) {
                "text".to_string()
            } else {
                "an unsupported binary format".to_string()
            };
            return ToolResult::err(format!(
                "{source} is not a PNG, JPEG, GIF or WebP image (it looks like {what})"
            ));
        };
        let dims = dimensions(kind, &bytes);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let dims_text = dims
            .map(|(w, h)| format!(", {w}x{h} px"))
            .unwrap_or_default();
        let mut result = ToolResult::ok(format!(
            "Loaded image {source}: {}, {}{dims_text}. It is now in your context.",
            kind.mime(),
            human_size(bytes.len() as u64)
        ))
        .with_meta("is_image", json!(true))
        .with_meta("mime", json!(kind.mime()))
        .with_meta("base64", json!(b64))
        .with_meta("source", json!(source))
        .with_meta("bytes", json!(bytes.len()));
        if let Some((w, h)) = dims {
            result = result
                .with_meta("width", json!(w))
                .with_meta("height", json!(h));
        }
        result
    }
}
