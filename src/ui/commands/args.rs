//! Completion of slash-command arguments that come from the user's data:
//! sessions after `/session resume|open|delete|rm`, models after `/model`.
//! Shared by the TUI's popup and plain mode's Tab; each front end brings the
//! lists (read where and when it can afford to: sessions from the local
//! database, models from a background request to the server).
//!
//! Invariant: pure functions over the lists given; nothing here does I/O.

/// Which list an argument position draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgList {
    Sessions,
    Models,
}

/// The `/session` sub-commands whose argument is a session.
const SESSION_ARG: &[&str] = &["resume", "open", "delete", "rm"];

/// Where `line` stands if its last word is an argument from a list: the
/// text before that word (`/session resume `), the partial word typed, and
/// the list.
pub(crate) fn context(line: &str) -> Option<(String, &str, ArgList)> {
    if line.contains('\n') {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let trailing = line.ends_with(' ');
    let partial = |at: usize| if trailing { "" } else { words[at] };
    match (words.as_slice(), trailing) {
        (["/session", sub], true) | (["/session", sub, _], false) if SESSION_ARG.contains(sub) => {
            Some((format!("/session {sub} "), partial(2), ArgList::Sessions))
        }
        (["/model"], true) | (["/model", _], false) => {
            Some(("/model ".to_string(), partial(1), ArgList::Models))
        }
        _ => None,
    }
}

/// Sessions (`(id prefix, title)`, most recent first) matching `partial` by
/// id prefix or by a word of the title; each candidate is the full line with
/// the session's id, described by its title.
pub(crate) fn sessions(
    head: &str,
    partial: &str,
    list: &[(String, String)],
) -> Vec<(String, String)> {
    let want = partial.to_lowercase();
    list.iter()
        .filter(|(id, title)| {
            want.is_empty()
                || (id.starts_with(partial) && id != partial)
                || title
                    .to_lowercase()
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w.starts_with(&want))
        })
        .map(|(id, title)| {
            let d = if title.is_empty() {
                "(untitled)".to_string()
            } else {
                title.clone()
            };
            (format!("{head}{id}"), d)
        })
        .collect()
}

/// The served models starting with `partial` (any model containing it
/// when none starts with it), then `default`.
pub(crate) fn models(head: &str, partial: &str, list: &[String]) -> Vec<(String, String)> {
    let starts: Vec<&String> = list
        .iter()
        .filter(|m| m.starts_with(partial) && *m != partial)
        .collect();
    let chosen = if starts.is_empty() && !partial.is_empty() {
        list.iter()
            .filter(|m| m.contains(partial) && *m != partial)
            .collect()
    } else {
        starts
    };
    let mut out: Vec<(String, String)> = chosen
        .into_iter()
        .map(|m| (format!("{head}{m}"), String::new()))
        .collect();
    if "default".starts_with(partial) && partial != "default" {
        out.push((
            format!("{head}default"),
            "back to the profile's model list".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Vec<(String, String)> {
        vec![
            ("3fa1b2c4".into(), "Parse the logs".into()),
            ("77aa0011".into(), String::new()),
        ]
    }

    #[test]
    fn finds_the_argument_position() {
        let c = |l: &str| context(l).map(|(h, p, k)| (h, p.to_string(), k));
        assert_eq!(
            c("/session resume "),
            Some(("/session resume ".into(), String::new(), ArgList::Sessions))
        );
        assert_eq!(
            c("/session rm 3f"),
            Some(("/session rm ".into(), "3f".into(), ArgList::Sessions))
        );
        assert_eq!(
            c("/model qw"),
            Some(("/model ".into(), "qw".into(), ArgList::Models))
        );
        // Commands without a session argument, and finished arguments.
        assert_eq!(c("/session rename "), None);
        assert_eq!(c("/session pin "), None);
        assert_eq!(c("/session resume 3fa1b2c4 "), None);
        assert_eq!(c("/model"), None);
        assert_eq!(c("/session resume \nx"), None);
    }

    #[test]
    fn matches_sessions_by_id_or_title() {
        let all = sessions("/session resume ", "", &list());
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].0, "/session resume 3fa1b2c4");
        assert_eq!(all[0].1, "Parse the logs");
        assert_eq!(all[1].1, "(untitled)");
        let by_id = sessions("/session delete ", "77", &list());
        assert_eq!(
            by_id,
            vec![("/session delete 77aa0011".into(), "(untitled)".into())]
        );
        let by_title = sessions("/session resume ", "LOG", &list());
        assert_eq!(by_title[0].0, "/session resume 3fa1b2c4");
        assert!(sessions("/session resume ", "3fa1b2c4", &list()).is_empty());
    }

    #[test]
    fn matches_models() {
        let m = vec!["qwen3:8b".to_string(), "llama3.2:3b".to_string()];
        let names = |v: Vec<(String, String)>| v.into_iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(names(models("/model ", "q", &m)), vec!["/model qwen3:8b"]);
        assert_eq!(
            names(models("/model ", "", &m)),
            vec!["/model qwen3:8b", "/model llama3.2:3b", "/model default"]
        );
        assert_eq!(
            names(models("/model ", "3b", &m)),
            vec!["/model llama3.2:3b"]
        );
        assert_eq!(names(models("/model ", "d", &m)), vec!["/model default"]);
    }
}
