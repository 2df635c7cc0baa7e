//! HTTP helpers shared by `http_request`, `web_view`, `web_search` and
//! `image_view`.
//!
//! Invariants: only `http`/`https` URLs are fetched; a body is read at most up
//! to the cap (the rest is never downloaded) and the caller learns it was cut;
//! a request ends early when the call is cancelled; every failure becomes a
//! message that names the URL and what to try next.

use reqwest::Url;
use std::error::Error as _;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A response with its body read up to a cap.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) status: reqwest::StatusCode,
    pub(crate) version: reqwest::Version,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) final_url: Url,
    pub(crate) body: Vec<u8>,
    /// The body was longer than the cap and was cut.
    pub(crate) truncated: bool,
}

impl Fetched {
    /// The media type without parameters, lower-case (`text/html`).
    pub(crate) fn mime(&self) -> Option<String> {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter(|v| !v.is_empty())
    }

    /// Declared `Content-Length`, if any.
    pub(crate) fn declared_len(&self) -> Option<u64> {
        self.headers
            .get(reqwest::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok())
    }
}

/// Parses and checks a URL given by the model.
pub(crate) fn parse_url(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        format!("invalid URL '{raw}': {e}; give a full URL like https://example.com/page")
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(format!(
            "unsupported URL scheme '{other}' in '{raw}': only http and https are fetched"
        )),
    }
}

/// A reqwest error as a sentence with its causes.
pub(crate) fn describe_error(url: &str, e: &reqwest::Error) -> String {
    let mut causes = Vec::new();
    let mut src = e.source();
    while let Some(s) = src {
        let text = s.to_string();
        if !causes.contains(&text) {
            causes.push(text);
        }
        src = s.source();
    }
    if let Some(refused) = causes
        .iter()
        .find(|c| c.contains(super::net_guard::CONFIG_HINT))
    {
        return format!("{refused} (while fetching {url})");
    }
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "too many redirects"
    } else if e.is_body() || e.is_decode() {
        "failed while reading the response"
    } else {
        "request failed"
    };
    let detail = if causes.is_empty() {
        e.to_string()
    } else {
        causes.join(": ")
    };
    format!("{what} for {url} ({detail}); check the URL, or the site may be down")
}

/// Sends `req` and reads the body up to `cap` bytes, stopping on `cancel`.
pub(crate) async fn send_capped(
    req: reqwest::RequestBuilder,
    url_for_errors: &str,
    timeout: Duration,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Fetched, String> {
    let work = async {
        let mut resp = req
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| describe_error(url_for_errors, &e))?;
        let status = resp.status();
        let version = resp.version();
        let headers = resp.headers().clone();
        let final_url = resp.url().clone();
        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    let room = cap.saturating_sub(body.len());
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(describe_error(url_for_errors, &e)),
            }
        }
        Ok(Fetched {
            status,
            version,
            headers,
            final_url,
            body,
            truncated,
        })
    };
    tokio::select! {
        r = work => r,
        _ = cancel.cancelled() => Err("operation cancelled by user".into()),
    }
}

/// Whether bytes look like text (valid UTF-8 without NUL in the first 8 KiB;
/// a character cut at the sample's end is fine).
pub(crate) fn looks_like_text(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(8192)];
    if sample.contains(&0) {
        return false;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && sample.len() == 8192,
    }
}

/// Whether a media type is textual.
pub(crate) fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
                | "application/x-www-form-urlencoded"
                | "application/ld+json"
        )
}

/// A short human size: `512 B`, `12.3 KB`, `4.0 MB`.
pub(crate) fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1000.0 {
            break;
        }
        v /= 1000.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(parse_url("https://example.com/x").is_ok());
        assert!(
            parse_url("file:///etc/passwd")
                .unwrap_err()
                .contains("scheme")
        );
        assert!(
            parse_url("example.com")
                .unwrap_err()
                .contains("invalid URL")
        );
    }

    #[test]
    fn text_detection() {
        assert!(looks_like_text(b"hello\nworld"));
        assert!(!looks_like_text(b"\x89PNG\r\n\x1a\n\0\0"));
        assert!(!looks_like_text(&[0xff, 0xfe, 0x41]));
    }

    #[test]
    fn sizes() {
        assert_eq!(human_size(999), "999 B");
        assert_eq!(human_size(12_300), "12.3 KB");
        assert_eq!(human_size(4_000_000), "4.0 MB");
    }
}
