//! Configuration: lookup, precedence, strictness, and the binary's exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use navi::config::{self, BackendKind, Config, LoadOptions, ThinkSetting};
use std::collections::HashMap;
use std::process::Command;

fn load_with(
    env: &[(&str, &str)],
    opts: LoadOptions,
) -> Result<(Config, config::Paths, config::Overrides), config::ConfigError> {
    let map: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let getenv = move |k: &str| map.get(k).cloned();
    config::load(&opts, &getenv)
}

#[test]
fn example_file_documents_exactly_the_defaults() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config.example.toml"))
        .unwrap();
    let parsed = config::parse_str(&text, std::path::Path::new("config.example.toml")).unwrap();
    assert_eq!(parsed, Config::default());
}

#[test]
fn precedence_is_flag_env_file_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        "[llm]\nbackend = \"openai\"\nnum_ctx = 4096\nollama_host = \"http://file:1\"\n",
    )
    .unwrap();
    let opts = LoadOptions {
        config_file: Some(file.clone()),
        ..Default::default()
    };
    let (c, p, _) = load_with(&[], opts.clone()).unwrap();
    assert_eq!((c.llm.backend, c.llm.num_ctx), (BackendKind::Openai, 4096));
    assert_eq!(p.config_file.as_deref(), Some(file.as_path()));
    let (c, _, o) = load_with(
        &[
            ("OLLAMA_NUM_CTX", "8192"),
            ("OLLAMA_HOST", "envhost:11434"),
            ("OLLAMA_THINK", "high"),
            ("OLLAMA_DEFAULT_MODEL", "m-env"),
        ],
        opts.clone(),
    )
    .unwrap();
    assert_eq!(c.llm.num_ctx, 8192);
    assert_eq!(c.llm.ollama_host, "http://envhost:11434");
    // OLLAMA_HOST is read like the ollama CLI reads it.
    for (raw, want) in [
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("example.org", "http://example.org:11434"),
        ("https://example.org", "https://example.org:443"),
        ("[::1]:8000", "http://[::1]:8000"),
    ] {
        let (c, _, _) = load_with(&[("OLLAMA_HOST", raw)], opts.clone()).unwrap();
        assert_eq!(c.llm.ollama_host, want, "{raw}");
    }
    let err = load_with(&[("OLLAMA_HOST", "h:port")], opts.clone()).unwrap_err();
    assert!(err.to_string().contains("OLLAMA_HOST"), "{err}");
    assert_eq!(c.llm.think, ThinkSetting::Level("high".into()));
    assert_eq!(o.model.as_deref(), Some("m-env"));
    let flags = LoadOptions {
        backend: Some(BackendKind::Ollama),
        model: Some("m-flag".into()),
        ..opts
    };
    let (c, _, o) = load_with(&[("OLLAMA_DEFAULT_MODEL", "m-env")], flags).unwrap();
    assert_eq!(c.llm.backend, BackendKind::Ollama);
    assert_eq!(o.model.as_deref(), Some("m-flag"));
}

/// One set of backend spellings (from the `clap::ValueEnum` derive) for
/// the flag, `NAVI_BACKEND` and profiles; a bad `NAVI_BACKEND` names the
/// variable, the value and the choices.
#[test]
fn backend_spellings_are_shared() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("nocfg");
    let env = |v| {
        [
            ("NAVI_CONFIG_DIR", none.to_str().unwrap()),
            ("NAVI_BACKEND", v),
        ]
    };
    for (s, want) in [
        ("ollama", BackendKind::Ollama),
        (" Ollama ", BackendKind::Ollama),
        ("openai", BackendKind::Openai),
        ("OpenAI-Compatible", BackendKind::Openai),
        ("openai_compatible", BackendKind::Openai),
    ] {
        assert_eq!(BackendKind::parse(s), Some(want), "{s:?}");
        let (c, _, _) = load_with(&env(s), LoadOptions::default()).unwrap();
        assert_eq!(c.llm.backend, want, "NAVI_BACKEND={s:?}");
    }
    for kind in <BackendKind as clap::ValueEnum>::value_variants() {
        assert_eq!(BackendKind::parse(kind.as_str()), Some(*kind));
    }
    assert_eq!(BackendKind::parse("llama"), None);
    assert_eq!(
        BackendKind::choices(),
        r#""ollama", "openai", "anthropic" or "responses""#
    );
    let e = load_with(&env("llama"), LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("NAVI_BACKEND") && e.contains("llama"), "{e}");
}

#[test]
fn env_lists_and_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (c, p, _) = load_with(
        &[
            ("FS_ALLOWED_PATHS", "/a, /b"),
            ("TERMINAL_ALLOWED_COMMANDS", "ls,git"),
            ("NAVI_DATA_DIR", dir.path().to_str().unwrap()),
            ("NAVI_CONFIG_DIR", "/nonexistent/cfg"),
        ],
        LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(c.security.fs_allowed_paths, vec!["/a", "/b"]);
    assert_eq!(c.security.terminal_allowed_commands, vec!["ls", "git"]);
    assert_eq!(p.db_path, dir.path().join("navi.db"));
    let (_, p, _) = load_with(
        &[
            ("NAVI_DATA_DIR", "/x"),
            ("DB_PATH", "/y/z.db"),
            ("NAVI_CONFIG_DIR", "/nonexistent/cfg"),
        ],
        LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(p.db_path, std::path::PathBuf::from("/y/z.db"));
}

#[test]
fn bad_files_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("[llm]\nnum_ctx = \"big\"\n", "line 2"),
        ("[llm]\nbackend = \"ollama\"\nbogus_key = 1\n", "bogus_key"),
        ("[llm\n", "line 1"),
        (
            "[context]\ncompression_threshold = 1.5\n",
            "context.compression_threshold",
        ),
        ("[security]\napproval = \"sometimes\"\n", "line 2"),
    ];
    for (text, needle) in cases {
        let f = dir.path().join("bad.toml");
        std::fs::write(&f, text).unwrap();
        let err = load_with(
            &[],
            LoadOptions {
                config_file: Some(f.clone()),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("bad.toml"), "{err}");
        assert!(err.contains(needle), "{text:?} → {err}");
    }
    let err = load_with(&[("OLLAMA_NUM_CTX", "lots")], LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("OLLAMA_NUM_CTX") && err.contains("lots"),
        "{err}"
    );
    let err = load_with(
        &[],
        LoadOptions {
            config_file: Some(dir.path().join("missing.toml")),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing.toml"), "{err}");
}

#[test]
fn binary_exits_2_on_config_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    std::fs::write(&f, "[ui]\ntheme = 3\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["--config", f.to_str().unwrap(), "sessions", "list"])
        .env("NAVI_DATA_DIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("c.toml") && err.contains("line 2") && err.contains("theme"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["run"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "missing MESSAGE is a usage error"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("navi "));
}

#[test]
fn log_levels_env_values_and_host_allow_list_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |file: Option<std::path::PathBuf>| LoadOptions {
        config_file: file,
        ..Default::default()
    };
    let none = dir.path().join("nocfg");
    let base = [("NAVI_CONFIG_DIR", none.to_str().unwrap())];

    let mut env = base.to_vec();
    env.push(("LOG_LEVEL", "Verbose"));
    let e = load_with(&env, opts(None)).unwrap_err().to_string();
    assert!(e.contains("environment variable LOG_LEVEL"), "{e}");
    assert!(e.contains("logging.level") && e.contains("verbose"), "{e}");

    let mut env = base.to_vec();
    env.push(("LOG_LEVEL", "info,navi::llm=debug"));
    let (c, _, _) = load_with(&env, opts(None)).unwrap();
    assert_eq!(c.logging.level, "info,navi::llm=debug");

    let mut env = base.to_vec();
    env.push(("OLLAMA_NUM_CTX", "12"));
    let e = load_with(&env, opts(None)).unwrap_err().to_string();
    assert!(
        e.contains("environment variable OLLAMA_NUM_CTX") && e.contains("llm.num_ctx"),
        "{e}"
    );

    let file = dir.path().join("c.toml");
    std::fs::write(&file, "[security]\nnet_allowed_hosts = [\"10.0.0.0/99\"]\n").unwrap();
    let e = load_with(&base, opts(Some(file.clone())))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&file.display().to_string()) && e.contains("security.net_allowed_hosts"),
        "{e}"
    );
    std::fs::write(&file, "[logging]\nlevel = \"trace,navi=loud\"\n").unwrap();
    let e = load_with(&base, opts(Some(file.clone())))
        .unwrap_err()
        .to_string();
    assert!(e.contains("logging.level") && e.contains("loud"), "{e}");
    let o = LoadOptions {
        log_level: Some("shout".into()),
        ..Default::default()
    };
    let e = load_with(&base, o).unwrap_err().to_string();
    assert!(e.contains("--log-level") && e.contains("shout"), "{e}");
}

#[test]
fn terminal_allow_file_redirects_from_env_and_bad_values() {
    let base = [("NAVI_CONFIG_DIR", "/nonexistent/cfg")];
    let (c, _, _) = load_with(&base, LoadOptions::default()).unwrap();
    assert!(!c.security.terminal_allow_file_redirects);
    let on = [base[0], ("TERMINAL_ALLOW_FILE_REDIRECTS", "true")];
    let (c, _, _) = load_with(&on, LoadOptions::default()).unwrap();
    assert!(c.security.terminal_allow_file_redirects);
    let bad = [base[0], ("TERMINAL_ALLOW_FILE_REDIRECTS", "maybe")];
    let e = load_with(&bad, LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("TERMINAL_ALLOW_FILE_REDIRECTS") && e.contains("maybe"),
        "{e}"
    );
}
