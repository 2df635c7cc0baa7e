//! Credentials written into a backend URL (`https://user:pass@host/v1`):
//! taken out of the URL navi keeps and shows, sent as an `Authorization:
//! Basic` header instead, and replaced by `***` wherever a URL is put in a
//! message.
//!
//! Invariant: no base URL that a backend stores ([`crate::llm::LlmBackend::base_url`],
//! error messages, logs, session rows) holds a password.

/// Credentials written into a URL (`https://user:pass@host/v1`) replaced by
/// `***`, for every message, log line and stored row; anything else is
/// returned as it is. Every `scheme://` in `text` is looked at.
pub(crate) fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == ')')
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// The `Authorization: Basic` header for credentials written into `raw`
/// (they are taken out of the base URL by `http::normalise_base`).
pub(crate) fn url_credentials(raw: &str) -> Option<reqwest::header::HeaderValue> {
    let url = reqwest::Url::parse(raw.trim()).ok()?;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let pair = format!(
        "{}:{}",
        percent_decode(url.username()),
        percent_decode(url.password().unwrap_or(""))
    );
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(pair);
    let mut v = reqwest::header::HeaderValue::from_str(&format!("Basic {token}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `with_scheme` without its `user:pass@` part.
pub(crate) fn without_credentials(with_scheme: &str) -> String {
    redact_userinfo(with_scheme).replacen("://***@", "://", 1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_are_hidden_everywhere() {
        assert_eq!(
            redact_userinfo("cannot reach http://bob:s3cret@10.0.0.1:8080/v1 (refused)"),
            "cannot reach http://***@10.0.0.1:8080/v1 (refused)"
        );
        assert_eq!(redact_userinfo("https://h/v1?x=a@b"), "https://h/v1?x=a@b");
        assert_eq!(
            redact_userinfo("a https://u:p@h b http://x:y@z/"),
            "a https://***@h b http://***@z/"
        );
        assert_eq!(
            without_credentials("https://u:p%40ss@h:1/v1"),
            "https://h:1/v1"
        );
        let auth = url_credentials("https://u:p%40ss@h:1/v1").unwrap();
        assert!(auth.is_sensitive());
        // base64("u:p@ss")
        assert_eq!(auth.to_str().unwrap(), "Basic dTpwQHNz");
        assert!(url_credentials("https://h/v1").is_none());
        let base = crate::llm::http::normalise_base("http://u:pw@127.0.0.1:9/v1/").unwrap();
        assert_eq!(base, "http://127.0.0.1:9/v1");
        let e = crate::llm::http::normalise_base("ftp://u:pw@h")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pw"), "{e}");
    }
}
