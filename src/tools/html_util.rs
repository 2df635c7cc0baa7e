//! Small, allocation-light HTML helpers for the web tools: tag stripping,
//! entity decoding, `<title>` and attribute extraction. Full rendering is
//! html2text's job; these only pull short strings out of markup.
//!
//! Invariant: never panics on malformed markup (all slicing is on char
//! boundaries found by `find`).

/// Decodes the common named entities and numeric references.
pub(crate) fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let end = after.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let ent = &after[..e];
            let ch = match ent {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "laquo" => Some('«'),
                "raquo" => Some('»'),
                "copy" => Some('©'),
                _ => {
                    if let Some(hex) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
                    } else if let Some(dec) = ent.strip_prefix('#') {
                        dec.parse::<u32>().ok().and_then(char::from_u32)
                    } else {
                        None
                    }
                }
            };
            ch.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &after[e + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Removes tags, decodes entities and collapses whitespace.
pub(crate) fn strip_tags(s: &str) -> String {
    let mut text = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let decoded = decode_entities(&text);
    let words: Vec<&str> = decoded.split_whitespace().collect();
    let joined = words.join(" ");
    // Tags between a word and punctuation leave a stray space: "foo ." → "foo."
    joined
        .replace(" .", ".")
        .replace(" ,", ",")
        .replace(" :", ":")
        .replace(" !", "!")
        .replace(" ?", "?")
}

/// Case-insensitive find of an ASCII needle.
pub(crate) fn find_ci(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.is_empty() || from > h.len() {
        return None;
    }
    (from..=h.len().saturating_sub(n.len()))
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n) && hay.is_char_boundary(i))
}

/// The text of the first `<title>` element.
pub(crate) fn extract_title(html: &str) -> Option<String> {
    let open = find_ci(html, "<title", 0)?;
    let gt = html[open..].find('>')? + open + 1;
    let close = find_ci(html, "</title", gt)?;
    let t = strip_tags(&html[gt..close]);
    (!t.is_empty()).then_some(t)
}

/// The value of attribute `name` inside one tag's text (`<a href="…" …>`).
pub(crate) fn attr(tag: &str, name: &str) -> Option<String> {
    let mut from = 0;
    while let Some(pos) = find_ci(tag, name, from) {
        from = pos + name.len();
        let before_ok = pos == 0
            || tag[..pos]
                .chars()
                .next_back()
                .is_some_and(char::is_whitespace);
        let rest = tag[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let rest = rest[1..].trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let end = rest[1..].find(q)?;
                &rest[1..1 + end]
            }
            Some(_) => {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '>')
                    .unwrap_or(rest.len());
                &rest[..end]
            }
            None => return None,
        };
        return Some(decode_entities(value));
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn entities() {
        assert_eq!(
            decode_entities("a &amp; b &lt;c&gt; &#39;x&#x27; &bogus; &"),
            "a & b <c> 'x' &bogus; &"
        );
    }

    #[test]
    fn tags_and_title() {
        assert_eq!(strip_tags("<b>Rust</b> is <i>fast</i>."), "Rust is fast.");
        assert_eq!(
            extract_title("<html><HEAD><Title>A &amp; B</TITLE></head>").as_deref(),
            Some("A & B")
        );
        assert_eq!(extract_title("<p>none</p>"), None);
    }

    #[test]
    fn attributes() {
        let tag = r#"<a rel="nofollow" class='result__a' href="//x.org/?a=1&amp;b=2">"#;
        assert_eq!(attr(tag, "href").as_deref(), Some("//x.org/?a=1&b=2"));
        assert_eq!(attr(tag, "class").as_deref(), Some("result__a"));
        assert_eq!(attr(tag, "id"), None);
    }
}
