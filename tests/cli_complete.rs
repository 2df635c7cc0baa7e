//! Completion scripts offer what `navi --help` shows and nothing internal:
//! not the hidden `__complete` subcommand (the bash script only calls it for
//! option values), not hidden flags such as `memory extract --auto`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

fn script(shell: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(out.status.success(), "{shell}");
    String::from_utf8(out.stdout).unwrap()
}

/// What bash offers for `words` (the last one is being typed).
fn bash_offers(words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let n = words.len();
    let cmd = format!(
        "source <(\"$0\" completions bash) || exit 9\n\
         COMP_WORDS=(\"$0\" {})\nCOMP_CWORD={n}\n\
         _navi \"$0\" '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words[n - 1],
        if n >= 2 { words[n - 2] } else { "navi" },
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &cmd, env!("CARGO_BIN_EXE_navi")])
        .env("NAVI_CONFIG_DIR", "/nonexistent/navi-test-config")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn bash_offers_no_internal_subcommand_or_flag() {
    let top = bash_offers(&[""]);
    assert!(top.iter().any(|w| w == "run"), "{top:?}");
    assert!(top.iter().any(|w| w == "sessions"), "{top:?}");
    assert!(!top.iter().any(|w| w.starts_with("__")), "{top:?}");
    let under = bash_offers(&["__"]);
    assert!(under.is_empty(), "{under:?}");
    let help = bash_offers(&["help", ""]);
    assert!(help.iter().any(|w| w == "run"), "{help:?}");
    assert!(!help.iter().any(|w| w.starts_with("__")), "{help:?}");
    let flags = bash_offers(&["memory", "extract", "--"]);
    assert!(flags.iter().any(|w| w == "--help"), "{flags:?}");
    assert!(
        !flags.iter().any(|w| w == "--auto" || w == "--except"),
        "{flags:?}"
    );
}

#[test]
fn zsh_fish_elvish_and_powershell_scripts_never_name_internal_commands() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let s = script(shell);
        assert!(s.contains("sessions") && s.contains("memory"), "{shell}");
        assert!(!s.contains("__complete"), "{shell}: offers __complete");
        assert!(
            !s.contains("except") && !s.contains("'auto'") && !s.contains("-l auto "),
            "{shell}: offers a hidden flag"
        );
    }
    // Bash calls the hidden command for option values only.
    let bash = script("bash");
    assert!(bash.contains("__complete profiles"));
    assert!(!bash.contains("navi,__complete"), "not as a subcommand");
}
