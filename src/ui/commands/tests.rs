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
    // A partial sub-command, for every command that has them.
    assert_eq!(
        complete("/profile s", &profiles, &[]),
        vec!["/profile switch "]
    );
    assert_eq!(
        complete("/profile l", &profiles, &[]),
        vec!["/profile list"]
    );
    assert_eq!(
        complete("/compact -", &profiles, &[]),
        vec!["/compact --preview"]
    );
    assert_eq!(
        complete("/compact a", &profiles, &[]),
        vec!["/compact apply"]
    );
    assert_eq!(
        complete("/thinking o", &profiles, &[]),
        vec!["/thinking on", "/thinking off"]
    );
    assert_eq!(
        complete("/approvals r", &profiles, &[]),
        vec!["/approvals revoke "]
    );
    assert_eq!(
        complete("/memory s", &profiles, &[]),
        vec!["/memory search "]
    );
    assert_eq!(complete("/pin l", &profiles, &[]), vec!["/pin last"]);
    assert_eq!(
        complete("/profile ", &profiles, &[]),
        vec!["/profile list", "/profile switch "]
    );
    assert!(complete("/profile x", &profiles, &[]).is_empty());
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
