#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

#[test]
fn error_messages_are_extracted_from_common_shapes() {
    assert_eq!(
        error_message(r#"{"error":"model \"x\" not found"}"#),
        "model \"x\" not found"
    );
    assert_eq!(
        error_message(r#"{"error":{"message":"bad key","type":"auth"}}"#),
        "bad key"
    );
    assert_eq!(
        error_message(r#"{"object":"error","message":"nope"}"#),
        "nope"
    );
    assert_eq!(error_message(r#"{"detail":"missing"}"#), "missing");
    assert_eq!(error_message("plain\n text\n"), "plain text");
    assert_eq!(error_message(""), "(empty response body)");
}

#[test]
fn long_text_is_cut_to_one_line() {
    let long = "x ".repeat(1000);
    let line = error_message(&long);
    assert!(
        line.chars().count() <= MAX_SERVER_TEXT + 1,
        "{}",
        line.len()
    );
    assert!(line.ends_with('…'));
    assert!(!line.contains('\n'));
}

#[test]
fn base_urls_are_normalised_and_checked() {
    assert_eq!(
        normalise_base("localhost:11434/").unwrap(),
        "http://localhost:11434"
    );
    assert_eq!(normalise_base("https://h/v1//").unwrap(), "https://h/v1");
    assert!(matches!(
        normalise_base("ftp://h"),
        Err(LlmError::BadUrl { .. })
    ));
    assert!(matches!(normalise_base("  "), Err(LlmError::BadUrl { .. })));
}

#[test]
fn statuses_map_to_typed_errors() {
    let t = Target::new(&crate::llm::ollama::DESCRIPTOR, "http://h:1".into());
    let f = |status: u16, message: &str| HttpFailure {
        content_type: String::new(),
        status,
        message: message.into(),
        retry_after: None,
    };
    let mut page = f(501, "<html><body>Not Implemented</body></html>");
    page.content_type = "text/html".into();
    let e = page.into_error(&t, None);
    assert!(matches!(e, LlmError::NotAnApi { .. }), "{e}");
    assert!(!e.is_retryable());
    let text = e.to_string();
    assert!(
        text.starts_with("got HTTP 501 text/html from http://h:1 — is this an Ollama server?"),
        "{text}"
    );
    assert!(!text.contains("<html>"), "{text}");
    let e = f(404, "model \"m\" not found, try pulling it first").into_error(&t, Some("m"));
    assert!(e.to_string().contains("ollama pull m"), "{e}");
    assert!(matches!(
        f(401, "").into_error(&t, None),
        LlmError::Unauthorized { .. }
    ));
    assert!(matches!(
        f(503, "busy").into_error(&t, None),
        LlmError::Server { .. }
    ));
    assert!(matches!(
        f(422, "bad").into_error(&t, None),
        LlmError::Rejected { .. }
    ));
    let e = f(404, "404 page not found").into_error(&t, Some("m"));
    assert!(e.to_string().contains("right base URL"), "{e}");
}

#[test]
fn a_key_the_server_quotes_back_is_never_in_the_error() {
    let e = crate::llm::endpoint::Endpoint::plain("groq", "http://h:1/v1", "gsk-SECRET-42");
    let t = Target::of(&crate::llm::openai::DESCRIPTOR, "http://h:1/v1".into(), &e);
    for status in [400, 401, 403, 404, 429, 500, 529] {
        let err = HttpFailure {
            content_type: String::new(),
            status,
            message: "Invalid API key: gsk-SECRET-42 (gsk-SECRET-42)".into(),
            retry_after: None,
        }
        .into_error(&t, Some("m"));
        let text = err.to_string();
        assert!(!text.contains("SECRET"), "{status}: {text}");
        assert!(!format!("{err:?}").contains("SECRET"), "{status}: {err:?}");
    }
}
