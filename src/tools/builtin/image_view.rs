//! `image_view`: loads an image (file or URL) for a multimodal model.
//!
//! Invariants: local paths pass the same root check as `filesystem`
//! (canonicalised first); at most `[tools].image_max_bytes` are read or
//! downloaded; only PNG, JPEG, GIF and WebP pass, recognised by their magic
//! bytes (never by extension or Content-Type). A URL on a non-public address
//! needs approval ([`crate::tools::net_guard`]). On success the result's typed
//! `image` holds its MIME type and base64; the agent moves the image into the
//! context buffer and the model sees only the short text.
use crate::protocol::ToolDisplay;
use crate::tools::fetch::{self, human_size};
use crate::tools::fs_guard::{OpenPolicy, open_regular};
use crate::tools::image_probe::{dimensions, sniff};
use crate::tools::paths::FsRoots;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
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

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ImageViewArgs {
    path: Option<String>,
    url: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for ImageViewTool {
    type Args = ImageViewArgs;

    fn name(&self) -> &str {
        "image_view"
    }

    fn description(&self) -> &str {
        "Look at an image file or URL (PNG, JPEG, GIF, WebP); you see it on your next step."
    }

    async fn approval_request(&self, a: &ImageViewArgs, ctx: &ToolContext) -> Option<String> {
        let url = a.url.as_deref()?;
        let net = ctx.env.net_approval(url, ctx).await?;
        Some(format!("load image {url}\n{net}"))
    }

    fn describe(&self, a: &ImageViewArgs, base: &std::path::Path) -> crate::protocol::CallInfo {
        let subject = a.path.as_deref().or(a.url.as_deref());
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Fetch,
            "image_view",
            subject,
        );
        if let Some(p) = &a.path {
            info.kind = crate::protocol::CallKind::Read;
            info.paths = vec![crate::tools::describe::abs(p, base)];
        }
        info.url = a.url.clone();
        info
    }

    async fn run(&self, a: ImageViewArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = a.path.as_deref().filter(|s| !s.trim().is_empty());
        let url = a.url.as_deref().filter(|s| !s.trim().is_empty());
        let cap = ctx.env.config.tools.image_max_bytes.max(1);
        let (bytes, source) = match (path, url) {
            (Some(_), Some(_)) => {
                return Err(ToolError::args("give either 'path' or 'url', not both"));
            }
            (None, None) => {
                return Err(ToolError::args(
                    "missing argument: give 'path' (a local image file) or 'url'",
                ));
            }
            (Some(p), None) => {
                let roots =
                    FsRoots::from_config(&ctx.env.config.security.fs_allowed_paths, ctx.work_dir());
                let resolved = roots.resolve_checked(p, ctx.work_dir())?;
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
                    Ok(Ok(Err(e))) => return Err(e.into()),
                    Ok(Err(e)) => return Err(format!("reading the image failed: {e}").into()),
                    Err(_) => {
                        return Err(format!(
                            "reading {shown} did not finish within {secs}s ([tools].fs_timeout_secs)"
                        )
                        .into());
                    }
                }
            }
            (None, Some(u)) => {
                let url = fetch::parse_url(u)?;
                let timeout = Duration::from_secs(ctx.env.config.tools.http_timeout_secs.max(1));
                let client = ctx.env.web_client(&url, ctx).await?;
                let req = client.get(url.clone());
                let f = fetch::send_capped(req, url.as_str(), timeout, cap, &ctx.cancel).await?;
                if !f.status.is_success() {
                    return Err(format!("HTTP {} for {}", f.status, f.final_url).into());
                }
                if f.truncated {
                    return Err(format!(
                        "the image at {url} is larger than the limit of {} ([tools].image_max_bytes)",
                        human_size(cap as u64)
                    )
                    .into());
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
            return Err(format!(
                "{source} is not a PNG, JPEG, GIF or WebP image (it looks like {what})"
            )
            .into());
        };
        let dims = dimensions(kind, &bytes);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let dims_text = dims
            .map(|(w, h)| format!(", {w}x{h} px"))
            .unwrap_or_default();
        let mut result = ToolOutput::new(format!(
            "Loaded image {source}: {}, {}{dims_text}. It is now in your context.",
            kind.mime(),
            human_size(bytes.len() as u64)
        ))
        .with_image(kind.mime(), b64)
        .with_meta("source", json!(source))
        .with_meta("bytes", json!(bytes.len()))
        .with_display(ToolDisplay::Images {
            count: 1,
            mime: vec![kind.mime().to_string()],
        });
        if let Some((w, h)) = dims {
            result = result
                .with_meta("width", json!(w))
                .with_meta("height", json!(h));
        }
        Ok(result)
    }
}
