//! Colour themes: every style the TUI draws with comes from here.
//!
//! Invariants:
//! - No colour is written anywhere else in the TUI; components ask for a named
//!   style (`theme.s.tool_ok`). Syntax colours come from the syntect theme the
//!   Navi theme names (`syntax = "…"`).
//! - Built-in themes are embedded (`themes/*.toml`); a user file
//!   `<config_dir>/themes/<name>.toml` replaces or adds one. `inherits = "x"`
//!   fills the styles a file leaves out from theme `x`.
//! - With `NO_COLOR` set (non-empty), every fg/bg is dropped and syntax
//!   highlighting is off; bold/italic/reverse stay, so focus stays visible.
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

macro_rules! style_slots {
    ($($name:ident),* $(,)?) => {
        /// The named styles of a theme.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub(crate) struct Styles { $(pub $name: Style,)* }

        impl Styles {
            fn set(&mut self, key: &str, style: Style) -> bool {
                match key {
                    $(stringify!($name) => { self.$name = style; true })*
                    _ => false,
                }
            }

            fn map(&mut self, f: impl Fn(Style) -> Style) {
                $(self.$name = f(self.$name);)*
            }
        }
    };
}

style_slots!(
    text,
    dim,
    accent,
    border,
    title,
    focus,
    user_label,
    user_text,
    assistant_label,
    heading,
    strong,
    emphasis,
    strike,
    code_inline,
    code_block,
    code_lang,
    link,
    quote,
    list_marker,
    rule,
    thinking,
    thinking_label,
    plan_title,
    plan_number,
    plan_text,
    plan_executor,
    tool_pending,
    tool_ok,
    tool_failed,
    tool_name,
    tool_args,
    tool_result,
    subagent,
    notice,
    warning,
    error,
    hint,
    status_bar,
    status_key,
    status_idle,
    status_busy,
    status_stopping,
    side_title,
    todo_pending,
    todo_in_progress,
    todo_done,
    todo_failed,
    todo_skipped,
    composer_border,
    composer_text,
    composer_placeholder,
    queued,
    popup,
    popup_selected,
    popup_hint,
    overlay,
    overlay_title,
);

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    /// The syntect theme for code blocks; `None` = no highlighting.
    pub(crate) syntax: Option<String>,
    pub(crate) s: Styles,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    bold: Option<bool>,
    italic: Option<bool>,
    dim: Option<bool>,
    underline: Option<bool>,
    reversed: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    inherits: Option<String>,
    syntax: Option<String>,
    #[serde(default)]
    styles: BTreeMap<String, StyleSpec>,
}

fn color(v: &str, key: &str) -> Result<Color, String> {
    Color::from_str(v)
        .map_err(|_| format!("style '{key}': '{v}' is not a colour (use a name, #rrggbb or 0-255)"))
}

impl StyleSpec {
    fn to_style(&self, key: &str) -> Result<Style, String> {
        let mut s = Style::default();
        if let Some(fg) = &self.fg {
            s = s.fg(color(fg, key)?);
        }
        if let Some(bg) = &self.bg {
            s = s.bg(color(bg, key)?);
        }
        for (on, m) in [
            (self.bold, Modifier::BOLD),
            (self.italic, Modifier::ITALIC),
            (self.dim, Modifier::DIM),
            (self.underline, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
        ] {
            if on == Some(true) {
                s = s.add_modifier(m);
            }
        }
        Ok(s)
    }
}

/// Whether `NO_COLOR` asks for no colours.
pub(crate) fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn user_file(config_dir: Option<&Path>, name: &str) -> Option<std::path::PathBuf> {
    let p = config_dir?.join("themes").join(format!("{name}.toml"));
    p.is_file().then_some(p)
}

fn source(name: &str, config_dir: Option<&Path>) -> Result<(String, String), String> {
    if let Some(p) = user_file(config_dir, name) {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| format!("cannot read theme {}: {e}", p.display()))?;
        return Ok((text, p.display().to_string()));
    }
    let key = format!("themes/{name}.toml");
    crate::embedded::get(&key)
        .map(|t| (t.to_string(), key))
        .ok_or_else(|| {
            format!(
                "unknown theme '{name}'; available: {}",
                names(config_dir).join(", ")
            )
        })
}

fn load_depth(name: &str, config_dir: Option<&Path>, depth: u32) -> Result<Theme, String> {
    if depth > 4 {
        return Err(format!(
            "theme '{name}': `inherits` goes around in a circle"
        ));
    }
    let (text, origin) = source(name, config_dir)?;
    let file: ThemeFile = toml::from_str(&text).map_err(|e| format!("{origin}: {e}"))?;
    let mut theme = match &file.inherits {
        Some(parent) => load_depth(parent, config_dir, depth + 1)?,
        None => Theme {
            name: String::new(),
            syntax: None,
            s: Styles::default(),
        },
    };
    theme.name = file.name.unwrap_or_else(|| name.to_string());
    if file.syntax.is_some() {
        theme.syntax = file.syntax.filter(|s| !s.is_empty());
    }
    for (key, spec) in &file.styles {
        let style = spec.to_style(key).map_err(|e| format!("{origin}: {e}"))?;
        if !theme.s.set(key, style) {
            return Err(format!("{origin}: unknown style '{key}'"));
        }
    }
    Ok(theme)
}

impl Theme {
    /// Loads theme `name` (user dir first, then built-in).
    pub fn load(name: &str, config_dir: Option<&Path>, no_color: bool) -> Result<Theme, String> {
        let mut t = load_depth(name, config_dir, 0)?;
        if no_color {
            t.strip_colors();
        }
        Ok(t)
    }

    /// The built-in dark theme; never fails (falls back to plain styles).
    pub(crate) fn fallback(no_color: bool) -> Theme {
        Theme::load("dark", None, no_color).unwrap_or_else(|_| Theme {
            name: "plain".into(),
            syntax: None,
            s: Styles {
                focus: Style::default().add_modifier(Modifier::REVERSED),
                ..Styles::default()
            },
        })
    }

    fn strip_colors(&mut self) {
        self.syntax = None;
        self.s.map(|mut s| {
            s.fg = None;
            s.bg = None;
            s
        });
    }
}

/// Names of all themes: built-in and user, sorted, deduplicated.
pub(crate) fn names(config_dir: Option<&Path>) -> Vec<String> {
    let mut out: Vec<String> = crate::embedded::under("themes/")
        .filter_map(|(p, _)| {
            p.strip_prefix("themes/")
                .and_then(|f| f.strip_suffix(".toml"))
        })
        .map(String::from)
        .collect();
    if let Some(dir) = config_dir
        && let Ok(rd) = std::fs::read_dir(dir.join("themes"))
    {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml")
                && let Some(stem) = p.file_stem()
            {
                out.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_complete_and_valid() {
        for name in ["dark", "light", "high-contrast"] {
            let t = Theme::load(name, None, false).unwrap();
            assert_eq!(t.name, name);
            // Every slot is set in every built-in: none may stay default.
            let text = crate::embedded::get(&format!("themes/{name}.toml")).unwrap();
            let file: ThemeFile = toml::from_str(text).unwrap();
            let mut probe = Styles::default();
            let mut count = 0;
            for key in file.styles.keys() {
                assert!(probe.set(key, Style::default()), "{name}: {key}");
                count += 1;
            }
            assert_eq!(count, 57, "{name} must set every style");
        }
        assert_eq!(names(None), vec!["dark", "high-contrast", "light"]);
    }

    #[test]
    fn no_color_keeps_modifiers_only() {
        let t = Theme::load("dark", None, true).unwrap();
        assert_eq!(t.s.tool_ok.fg, None);
        assert!(t.s.focus.add_modifier.contains(Modifier::REVERSED));
        assert!(t.s.tool_ok.add_modifier.contains(Modifier::BOLD));
        assert_eq!(t.syntax, None);
    }

    #[test]
    fn user_theme_inherits_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("themes")).unwrap();
        std::fs::write(
            dir.path().join("themes/mine.toml"),
            "inherits = \"dark\"\n[styles]\nerror = { fg = \"#ff0000\" }\n",
        )
        .unwrap();
        let t = Theme::load("mine", Some(dir.path()), false).unwrap();
        assert_eq!(t.s.error.fg, Some(Color::Rgb(255, 0, 0)));
        assert_eq!(
            t.s.tool_ok,
            Theme::load("dark", None, false).unwrap().s.tool_ok
        );
        assert!(names(Some(dir.path())).contains(&"mine".to_string()));
        std::fs::write(
            dir.path().join("themes/bad.toml"),
            "[styles]\nnope = { fg = \"red\" }\n",
        )
        .unwrap();
        let e = Theme::load("bad", Some(dir.path()), false).unwrap_err();
        assert!(e.contains("unknown style 'nope'"), "{e}");
        assert!(
            Theme::load("zzz", None, false)
                .unwrap_err()
                .contains("available: dark")
        );
    }
}
