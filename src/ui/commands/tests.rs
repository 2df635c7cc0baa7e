use super::*;

#[test]
fn parses_every_command() {
    use SlashCommand::*;
    assert_eq!(parse("/session new"), Ok(SessionNew));
    assert_eq!(
        parse("/session resume 3"),
        Ok(SessionResume(Some("3".into())))
    );
    assert_eq!(parse("/session resume"), Ok(SessionResume(None)));
    assert_eq!(
        parse("/session rename My  work"),
        Ok(SessionRename("My work".into()))
    );
    assert_eq!(
        parse("/profile switch developer"),
        Ok(ProfileSwitch("developer".into()))
    );
    assert_eq!(parse("/copy 2"), Ok(Copy(Some(2))));
    assert_eq!(
        parse("/export /tmp/x.md"),
        Ok(Export(Some("/tmp/x.md".into())))
    );
    assert_eq!(parse("/thinking off"), Ok(Thinking(Some(false))));
    assert_eq!(parse("/quit"), Ok(Quit));
    assert!(
        parse("/frobnicate")
            .unwrap_err()
            .contains("unknown command /frobnicate")
    );
    assert!(
        parse("/sesion list")
            .unwrap_err()
            .contains("did you mean /session")
    );
    assert!(parse("/copy x").is_err());
}

#[test]
fn completes_commands_and_arguments() {
    let profiles = vec!["developer".to_string(), "discuss".to_string()];
    assert!(complete("/se", &profiles, &[]).contains(&"/session".to_string()));
    assert_eq!(
        complete("/session re", &profiles, &[]),
        vec!["/session resume", "/session rename"]
    );
    assert_eq!(
        complete("/profile switch de", &profiles, &[]),
        vec!["/profile switch developer"]
    );
}

#[test]
fn code_blocks_are_found() {
    let t = "a\n```rust\nfn x() {}\n```\nb\n```\nls\n```";
    assert_eq!(code_blocks(t), vec!["fn x() {}\n", "ls\n"]);
}

#[test]
fn parses_memory_commands() {
    assert_eq!(parse("/memory"), Ok(SlashCommand::Memory(vec![])));
    assert_eq!(
        parse("/memory accept #3 neo vim"),
        Ok(SlashCommand::Memory(vec![
            "accept".into(),
            "#3".into(),
            "neo".into(),
            "vim".into()
        ]))
    );
}
