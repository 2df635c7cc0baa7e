//! File names as navi shows them (`/diff`, `/undo`, `/rewind`, the
//! `files_changed` event and the summary line).
//!
//! Invariant: a shown name holds no character a terminal acts on. A name of
//! printable UTF-8 without `"` or `\` is shown as it is; any other is put in
//! double quotes with C escapes, as git quotes names: `\n`, `\t`, `\r`,
//! `\\`, `\"`, `\xNN` for a byte that is not UTF-8 (or any other C0 control
//! and DEL), `\u{…}` for C1 controls and bidirectional overrides.

fn special(c: char) -> bool {
    c.is_control()
        || c == '"'
        || c == '\\'
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// `name` made safe to print (see the module doc).
pub(crate) fn shown(name: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(name)
        && !s.chars().any(special)
    {
        return s.to_string();
    }
    let mut out = String::from("\"");
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if special(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn plain_names_stay_and_others_are_quoted() {
        assert_eq!(shown(b"src/main.rs"), "src/main.rs");
        assert_eq!(shown("日本/ü.txt".as_bytes()), "日本/ü.txt");
        assert_eq!(shown(b"a\nb"), "\"a\\nb\"");
        assert_eq!(shown(b"\x1b]52;c;x\x07"), "\"\\x1b]52;c;x\\x07\"");
        assert_eq!(shown(b"bad\xff\xfe.txt"), "\"bad\\xff\\xfe.txt\"");
        assert_eq!(shown(b"q\"b\\s"), "\"q\\\"b\\\\s\"");
        assert_eq!(shown("x\u{9b}1m".as_bytes()), "\"x\\u{9b}1m\"");
        assert_eq!(shown("ab\u{202e}c".as_bytes()), "\"ab\\u{202e}c\"");
        assert_eq!(shown(b"del\x7f"), "\"del\\x7f\"");
        for n in [&b"a\nb"[..], b"\x1b[2K", b"\xff", "\u{9b}".as_bytes()] {
            let s = shown(n);
            assert!(!s.chars().any(|c| c.is_control()), "{s:?}");
        }
    }
}
