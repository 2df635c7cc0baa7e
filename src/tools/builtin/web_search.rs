//! `web_search`: DuckDuckGo's HTML endpoint (default) or a SearXNG instance.
//!
//! Invariants: the endpoint comes from `[tools].web_search_url` (so tests and
//! self-hosters can point it anywhere); DuckDuckGo redirect links
//! (`/l/?uddg=…`) are unwrapped to the real URL and ads are dropped; a bot
//! check page or an unusable response is an error, not an empty result; at
//! most `max_results` results are returned. Read-only: no approval.
use crate::protocol::ToolDisplay;
use crate::tools::fetch;
use crate::tools::html_util::{attr, find_ci, strip_tags};
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

pub struct WebSearchTool;

/// Some engines serve a stripped page or refuse unknown clients.
const BROWSER_UA: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SearchHit {
    pub(crate) title: String,
    pub(crate) url: String,
    pub(crate) snippet: String,
}

/// Turns a DuckDuckGo result link into the target URL.
pub(crate) fn unwrap_ddg_link(href: &str) -> Option<String> {
    let full = if href.starts_with("//") {
        format!("https:{href}")
    } else if href.starts_with('/') {
        format!("https://duckduckgo.com{href}")
    } else {
        href.to_string()
    };
    let url = Url::parse(&full).ok()?;
    let is_ddg = url
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    if is_ddg && url.path().starts_with("/l/") {
        return url
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned());
    }
    if is_ddg && url.path().starts_with("/y.js") {
        return None; // an ad
    }
    Some(full)
}

/// Parses DuckDuckGo's HTML result page.
pub(crate) fn parse_ddg_html(html: &str) -> Vec<SearchHit> {
    let mut hits = Vec::new();
    let mut from = 0;
    while let Some(pos) = find_ci(html, "result__a", from) {
        from = pos + 9;
        let Some(tag_start) = html[..pos].rfind('<') else {
            continue;
        };
        let Some(tag_len) = html[tag_start..].find('>') else {
            break;
        };
        let tag = &html[tag_start..tag_start + tag_len + 1];
        if !tag[1..].trim_start().to_ascii_lowercase().starts_with('a') {
            continue;
        }
        let class = attr(tag, "class").unwrap_or_default();
        if !class.split_whitespace().any(|c| c == "result__a") {
            continue;
        }
        let body_start = tag_start + tag_len + 1;
        let Some(close) = find_ci(html, "</a>", body_start) else {
            break;
        };
        let title = strip_tags(&html[body_start..close]);
        let next = find_ci(html, "result__a", close).unwrap_or(html.len());
        let snippet = find_ci(&html[..next], "result__snippet", close)
            .and_then(|s| {
                let gt = html[s..next].find('>')? + s + 1;
                let end = find_ci(&html[..next], "</a>", gt)
                    .or_else(|| find_ci(&html[..next], "</td>", gt))
                    .or_else(|| find_ci(&html[..next], "</div>", gt))?;
                Some(strip_tags(&html[gt..end]))
            })
            .unwrap_or_default();
        let Some(url) = attr(tag, "href").and_then(|h| unwrap_ddg_link(&h)) else {
            continue;
        };
        if title.is_empty() || hits.iter().any(|h: &SearchHit| h.url == url) {
            continue;
        }
        hits.push(SearchHit {
            title,
            url,
            snippet,
        });
    }
    hits
}

/// Parses a SearXNG `format=json` response.
pub(crate) fn parse_searxng_json(v: &Value) -> Result<Vec<SearchHit>, String> {
    let results = v
        .get("results")
        .and_then(Value::as_array)
        .ok_or("the SearXNG response has no 'results' list")?;
    Ok(results
        .iter()
        .filter_map(|r| {
            let url = r.get("url")?.as_str()?.to_string();
            let title = r.get("title").and_then(Value::as_str).unwrap_or(&url);
            let snippet = r.get("content").and_then(Value::as_str).unwrap_or("");
            Some(SearchHit {
                title: strip_tags(title),
                url,
                snippet: strip_tags(snippet),
            })
        })
        .collect())
}

fn render(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\".");
    }
    let mut out = format!("Results for \"{query}\":\n");
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, h.title, h.url));
        if !h.snippet.is_empty() {
            out.push_str(&format!("   {}\n", h.snippet));
        }
    }
    out
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WebSearchArgs {
    query: String,
    max_results: Option<u64>,
}

#[async_trait::async_trait]
impl TypedTool for WebSearchTool {
    type Args = WebSearchArgs;

    fn name(&self) -> &str {
        "web_search"
    }

    fn description(&self) -> &str {
        "Search the web; returns titles, URLs and snippets."
    }

    fn describe(&self, a: &WebSearchArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Search,
            "web_search",
            Some(&a.query),
        );
        info.query = Some(a.query.clone());
        info
    }

    async fn run(&self, a: WebSearchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = a.query.trim();
        if query.is_empty() {
            return Err(ToolError::empty("query"));
        }
        let max = a.max_results.unwrap_or(8).clamp(1, 20) as usize;
        let cfg = &ctx.env.config.tools;
        let engine = cfg.web_search_engine.trim().to_ascii_lowercase();
        let base = cfg.web_search_url.trim();
        let timeout = Duration::from_secs(cfg.http_timeout_secs.max(1));
        let http = ctx.env.http();
        let (req, url_text) = match engine.as_str() {
            "searxng" => {
                if base.contains("duckduckgo.com") || base.is_empty() {
                    return Err(
                        "web_search_engine is \"searxng\" but [tools].web_search_url is not a SearXNG instance; set it to e.g. http://localhost:8888".into(),
                    );
                }
                let endpoint = if base.trim_end_matches('/').ends_with("/search") {
                    base.trim_end_matches('/').to_string()
                } else {
                    format!("{}/search", base.trim_end_matches('/'))
                };
                let url = fetch::parse_url(&endpoint)
                    .map_err(|e| format!("[tools].web_search_url: {e}"))?;
                let req = http
                    .get(url.clone())
                    .query(&[("q", query), ("format", "json")]);
                (req, url.to_string())
            }
            _ => {
                let url =
                    fetch::parse_url(base).map_err(|e| format!("[tools].web_search_url: {e}"))?;
                let req = http
                    .post(url.clone())
                    .header(reqwest::header::USER_AGENT, BROWSER_UA)
                    .form(&[("q", query), ("b", "")]);
                (req, url.to_string())
            }
        };
        let f = fetch::send_capped(req, &url_text, timeout, cfg.fetch_max_bytes, &ctx.cancel)
            .await
            .map_err(|e| format!("search failed: {e}"))?;
        if !f.status.is_success() {
            let hint = if engine == "searxng" && f.status.as_u16() == 403 {
                " (is `json` enabled under search.formats in the SearXNG settings?)"
            } else {
                ""
            };
            return Err(format!(
                "the search engine at {url_text} answered HTTP {}{hint}",
                f.status
            )
            .into());
        }
        let body = String::from_utf8_lossy(&f.body);
        let mut hits = if engine == "searxng" {
            serde_json::from_str::<Value>(&body)
                .map_err(|e| format!("the SearXNG response is not JSON: {e}"))
                .and_then(|v| parse_searxng_json(&v))?
        } else {
            let hits = parse_ddg_html(&body);
            if hits.is_empty() && (body.contains("anomaly") || body.contains("challenge-form")) {
                return Err(
                    "DuckDuckGo answered with a bot check instead of results; try again later, or set [tools].web_search_engine = \"searxng\" with your own instance".into(),
                );
            }
            hits
        };
        hits.truncate(max);
        let meta: Vec<Value> = hits
            .iter()
            .map(|h| json!({"title": h.title, "url": h.url, "snippet": h.snippet}))
            .collect();
        let shown = ToolDisplay::Search {
            query: query.to_string(),
            hits: hits.len(),
        };
        Ok(ToolOutput::new(render(query, &hits))
            .with_meta("results", Value::Array(meta))
            .with_display(shown))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_redirects() {
        assert_eq!(
            unwrap_ddg_link(
                "//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2Flearn&rut=abc"
            )
            .as_deref(),
            Some("https://www.rust-lang.org/learn")
        );
        assert_eq!(
            unwrap_ddg_link("https://duckduckgo.com/y.js?ad_provider=x"),
            None
        );
        assert_eq!(
            unwrap_ddg_link("https://example.org/a").as_deref(),
            Some("https://example.org/a")
        );
    }
}
