//! Key, paste and mouse input → state changes and [`Action`]s.
//!
//! Priority: approval overlay (once drawn; Ctrl-C there stops the turn) → session picker → Ctrl-C ladder → global keys
//! → completion popup → composer. Ctrl-C: close popup → clear composer → stop
//! the running turn → (idle) a second press within 2 s quits. Esc closes a
//! popup, clears the selection, or stops a running turn.
//!
//! Invariant: input never waits for the agent — every path here is a pure,
//! bounded state change.
use super::approval::decision_for;
use super::cells::RenderCtx;
use super::picker::PickerAction;
use super::popup::Popup;
use super::state::{Action, TuiState};
use super::transcript::Transcript;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use std::time::{Duration, Instant};

const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// The key bindings, as `/help` lists them after the commands.
pub(crate) const KEY_HELP: &[&str] = &[
    "keys:",
    "  Enter                 send (queue while a turn runs); on an empty composer: send a kept queued message",
    "  Ctrl-S                while a turn runs: steer it (taken in after the current tool batch)",
    "  Shift/Alt-Enter, Ctrl-J  new line",
    "  Up / Down             lines, then input history; Up on an empty composer edits the last queued message",
    "  Tab                   complete a /command",
    "  Ctrl-G, Ctrl-X Ctrl-E edit the draft in $VISUAL / $EDITOR",
    "  Ctrl-R                search the input history (again: older; Enter keeps; Esc back)",
    "  PgUp / PgDn, wheel    scroll; Shift-Up/Down one line; Ctrl-Home / Ctrl-End top / bottom",
    "  Ctrl-T                expand / collapse all thinking",
    "  Alt-Up/Down, Ctrl-P/N select a thinking, plan or tool cell; Ctrl-O or Enter expands it",
    "  Alt-T                 show / hide the todo pane",
    "  Alt-P                 pin the last answer (kept verbatim through compaction; /pin lists, /unpin N)",
    "  Ctrl-F                search the transcript: Enter/Ctrl-N next, Shift-Enter/Ctrl-P previous, Esc closes",
    "  Ctrl-Up / Ctrl-Down   jump to your previous / next message",
    "  Esc                   close a popup, clear the selection, or stop the turn",
    "  Esc Esc               (idle) edit your last message and resend it (again: an earlier one)",
    "  Alt-V                 show the text of a large paste in place of its [pasted …] placeholder",
    "  Ctrl-C                close popup → clear composer → stop the turn → twice to quit",
    "  //text or ' /text'    send text starting with / as a message",
];
const WHEEL_LINES: usize = 3;

fn shift_held(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::SHIFT)
}

impl TuiState {
    pub(super) fn with_transcript(
        &mut self,
        f: impl FnOnce(&mut Transcript, usize, &RenderCtx<'_>),
    ) {
        let ctx = RenderCtx {
            theme: &self.theme,
            width: super::transcript::content_width(self.viewport.0),
            spinner: self.spinner,
            show_thinking: self.show_thinking,
            thinking_expanded: self.thinking_expanded,
            generation: self.generation,
        };
        let h = usize::from(self.viewport.1.max(1));
        f(&mut self.transcript, h, &ctx);
    }

    fn page(&self) -> usize {
        usize::from(self.viewport.1.saturating_sub(2).max(1))
    }

    pub(super) fn scroll_key(&mut self, key: &KeyEvent) -> bool {
        let page = self.page();
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let jump = ctrl || self.composer.is_empty();
        match key.code {
            KeyCode::PageUp => self.with_transcript(|t, h, c| t.scroll_up(page, h, c)),
            KeyCode::PageDown => self.with_transcript(|t, h, c| t.scroll_down(page, h, c)),
            KeyCode::Up if shift => self.with_transcript(|t, h, c| t.scroll_up(1, h, c)),
            KeyCode::Down if shift => self.with_transcript(|t, h, c| t.scroll_down(1, h, c)),
            KeyCode::Home if jump => self.with_transcript(|t, h, c| t.scroll_home(h, c)),
            KeyCode::End if jump => self.transcript.follow(),
            _ => return false,
        }
        true
    }

    fn ctrl_c(&mut self, now: Instant) -> Vec<Action> {
        if self.popup.take().is_some() {
            return Vec::new();
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            return Vec::new();
        }
        if self.running {
            return self.request_stop().into_iter().collect();
        }
        if let Some(t) = self.quit_armed
            && now.duration_since(t) <= QUIT_WINDOW
        {
            return vec![Action::Quit];
        }
        self.quit_armed = Some(now);
        self.flash = Some("press Ctrl-C again to quit".into());
        Vec::new()
    }

    fn toggle_selected(&mut self) {
        let target = self
            .transcript
            .selected
            .or_else(|| self.transcript.last_collapsible());
        let Some(i) = target else {
            return;
        };
        let ctx = RenderCtx {
            theme: &self.theme,
            width: super::transcript::content_width(self.viewport.0),
            spinner: self.spinner,
            show_thinking: self.show_thinking,
            thinking_expanded: self.thinking_expanded,
            generation: self.generation,
        };
        if let Some(c) = self.transcript.cells.get_mut(i) {
            c.toggle(&ctx);
        }
    }

    fn select(&mut self, back: bool) {
        if let Some(i) = self.transcript.select_step(back) {
            self.with_transcript(|t, h, c| t.reveal(i, h, c));
        } else {
            self.transcript.follow();
        }
    }

    /// Recomputes the completion popup for the composer text.
    pub(crate) fn refresh_popup(&mut self) {
        if let Some((start, query)) =
            super::mention::at_cursor(&self.composer.text, self.composer.cursor)
        {
            let files = self.mention_files.get_or_insert_with(|| {
                std::env::current_dir()
                    .map(|d| super::mention::scan(&d))
                    .unwrap_or_default()
            });
            self.popup = Popup::for_mention(query, start, files);
            return;
        }
        self.mention_files = None;
        if self.composer.text.starts_with('/')
            && let Some(items) = self.command_watch.as_mut().and_then(|w| w.changed())
        {
            // A command file made after start is offered too.
            self.custom_commands = items;
        }
        let keep = self
            .popup
            .as_ref()
            .and_then(|p| p.current().map(String::from));
        let profile = self.status.profile.clone();
        self.popup = match self.args.candidates(&self.composer.text, &profile) {
            Some(items) => Popup::from_items(items),
            None => Popup::for_line_with(
                &self.composer.text,
                &self.profile_ids,
                &self.theme_names,
                &self.custom_commands,
            ),
        };
        if let (Some(p), Some(k)) = (&mut self.popup, keep)
            && let Some(i) = p.items.iter().position(|(c, _)| *c == k)
        {
            p.selected = i;
        }
    }

    fn accept_completion(&mut self) {
        if let Some(p) = &self.popup
            && let (Some(start), Some(path)) = (p.mention, p.current())
        {
            let (text, cur) =
                super::mention::complete(&self.composer.text, start, self.composer.cursor, path);
            self.composer.set_text(&text);
            self.composer.cursor = cur;
            self.popup = None;
            self.mention_files = None;
            return;
        }
        let Some(c) = self
            .popup
            .as_ref()
            .and_then(|p| p.current().map(String::from))
        else {
            return;
        };
        let more =
            !crate::ui::commands::complete(&format!("{c} "), &self.profile_ids, &self.theme_names)
                .is_empty();
        let takes_arg = crate::ui::commands::COMMANDS
            .iter()
            .any(|(u, _)| u.starts_with(&c) && (u.contains('<') || u.contains('[')));
        let text = if (more || takes_arg) && !c.ends_with(' ') {
            format!("{c} ")
        } else {
            c
        };
        self.composer.set_text(&text);
        self.refresh_popup();
    }

    /// Enter in the composer. `//text` or a leading space sends text that
    /// starts with `/` as a message instead of running it as a command.
    pub(super) fn submit(&mut self) -> Vec<Action> {
        let editing = self.editing.take();
        let mut text = self.composer.take();
        self.popup = None;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        if let Some(literal) = trimmed.strip_prefix("//") {
            text = format!("/{literal}");
        } else if trimmed.starts_with('/') && text.starts_with(char::is_whitespace) {
            text = trimmed.to_string();
        } else if trimmed.starts_with('/') {
            return vec![Action::Command(trimmed.to_string())];
        }
        if self.running || self.loading {
            self.queue.push_back(text);
            return Vec::new();
        }
        if let Some(n) = editing {
            return vec![Action::Resend(n, text)];
        }
        self.begin_turn(&text);
        vec![Action::Send(text)]
    }

    /// The next queued message, shown as sent; `None` when none waits.
    pub fn next_queued(&mut self) -> Option<String> {
        let m = self.queue.pop_front()?;
        self.begin_turn(&m);
        Some(m)
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let is_ctrl_c = ctrl && key.code == KeyCode::Char('c');
        if !self.approvals.is_empty() {
            if is_ctrl_c {
                // Ctrl-C at an approval stops the whole turn, not just
                // this call (the gate answers pending calls "cancelled").
                return self.request_stop().into_iter().collect();
            }
            if self.approval_shown {
                if let Some(d) = decision_for(&key) {
                    return self.answer_approval(d);
                }
                if let Some(a) = self.approvals.front_mut()
                    && a.scroll_key(&key)
                {
                    return Vec::new();
                }
                self.scroll_key(&key);
                return Vec::new();
            }
            // Not drawn yet: this key was typed ahead, never an answer.
            // It goes to the composer (Enter queues it as a message).
        }
        if let Some(p) = &mut self.picker {
            let act = if is_ctrl_c {
                PickerAction::Close
            } else {
                p.handle_key(&key)
            };
            match act {
                PickerAction::None => {}
                PickerAction::Close => self.picker = None,
                PickerAction::Open(id) => {
                    self.picker = None;
                    return vec![Action::Command(format!("/session resume {id}"))];
                }
            }
            return Vec::new();
        }
        if let Some(p) = &mut self.model_picker {
            use super::model_picker::ModelPickerAction as A;
            match if is_ctrl_c {
                A::Close
            } else {
                p.handle_key(&key)
            } {
                A::None => {}
                A::Close => self.model_picker = None,
                A::Choose(m) => {
                    self.model_picker = None;
                    return vec![Action::SwitchModel(m)];
                }
            }
            return Vec::new();
        }
        if let Some((_, cmd)) = self.confirm.take() {
            self.flash = None;
            if !ctrl && !alt && matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                return vec![Action::Confirmed(cmd)];
            }
            self.hint("not deleted");
            return Vec::new();
        }
        if self.search.is_some() {
            return self.search_key(&key);
        }
        if self.rsearch.is_some()
            && let Some(a) = self.rsearch_key(&key)
        {
            return a;
        }
        if is_ctrl_c {
            return self.ctrl_c(now);
        }
        self.quit_armed = None;
        self.flash = None;
        if std::mem::take(&mut self.ctrl_x) && ctrl && key.code == KeyCode::Char('e') {
            return vec![Action::Editor];
        }
        match key.code {
            KeyCode::Char('g') if ctrl => return vec![Action::Editor],
            KeyCode::Char('r') if ctrl => {
                self.reverse_search();
                return Vec::new();
            }
            KeyCode::Char('x') if ctrl => {
                self.ctrl_x = true;
                self.flash = Some("Ctrl-X: Ctrl-E edits the draft in $EDITOR".into());
                return Vec::new();
            }
            KeyCode::Esc => {
                let closed =
                    self.popup.take().is_some() || self.transcript.selected.take().is_some();
                if !closed && self.running {
                    return self.request_stop().into_iter().collect();
                }
                if !closed {
                    // Two Escs in one read arrive as Alt+Esc: both count.
                    if alt {
                        self.esc_at = Some(now);
                    }
                    self.esc_idle(now);
                }
                return Vec::new();
            }
            KeyCode::Char('t') if ctrl => {
                self.thinking_expanded = !self.thinking_expanded;
                for c in &mut self.transcript.cells {
                    if matches!(c.kind, super::cells::CellKind::Thinking { .. }) {
                        c.expanded = None;
                    }
                }
                self.invalidate();
                return Vec::new();
            }
            KeyCode::Char('s') if ctrl => return self.steer(),
            KeyCode::Char('f') if ctrl => {
                self.open_search();
                return Vec::new();
            }
            KeyCode::Up if ctrl && !shift_held(&key) => {
                self.jump_user(true);
                return Vec::new();
            }
            KeyCode::Down if ctrl && !shift_held(&key) => {
                self.jump_user(false);
                return Vec::new();
            }
            KeyCode::Char('p') | KeyCode::Char('P') if alt => {
                return vec![Action::Command("/pin last".into())];
            }
            KeyCode::Char('t') | KeyCode::Char('T') if alt => {
                let wide = self.viewport_total >= super::side_pane::MIN_TOTAL_WIDTH;
                let shown = self.side_shown.unwrap_or(wide);
                self.side_shown = Some(!shown);
                return Vec::new();
            }
            KeyCode::Char('o') if ctrl => {
                self.toggle_selected();
                return Vec::new();
            }
            KeyCode::Char('p') if ctrl => {
                self.select(true);
                return Vec::new();
            }
            KeyCode::Char('n') if ctrl => {
                self.select(false);
                return Vec::new();
            }
            KeyCode::Up if alt => {
                self.select(true);
                return Vec::new();
            }
            KeyCode::Down if alt => {
                self.select(false);
                return Vec::new();
            }
            _ => {}
        }
        if self.scroll_key(&key) {
            return Vec::new();
        }
        if let Some(p) = &mut self.popup {
            match key.code {
                KeyCode::Tab => {
                    self.accept_completion();
                    return Vec::new();
                }
                KeyCode::Enter if p.mention.is_some() && key.modifiers.is_empty() => {
                    self.accept_completion();
                    return Vec::new();
                }
                KeyCode::BackTab | KeyCode::Up => {
                    p.step(true);
                    return Vec::new();
                }
                KeyCode::Down => {
                    p.step(false);
                    return Vec::new();
                }
                _ => {}
            }
        } else if key.code == KeyCode::Tab {
            self.refresh_popup();
            return Vec::new();
        }
        if key.code == KeyCode::Enter
            && key.modifiers.is_empty()
            && self.composer.is_empty()
            && self.transcript.selected.is_some()
        {
            self.toggle_selected();
            return Vec::new();
        }
        if key.modifiers.is_empty() && self.composer.is_empty() && self.popup.is_none() {
            // Messages kept queued after a stop: Enter sends the next.
            if key.code == KeyCode::Enter
                && !self.running
                && !self.loading
                && let Some(m) = self.next_queued()
            {
                return vec![Action::Send(m)];
            }
            if key.code == KeyCode::Up && self.edit_queued() {
                return Vec::new();
            }
        }
        match self.composer.handle_key(&key) {
            super::composer::ComposerAction::Submit => self.submit(),
            super::composer::ComposerAction::Changed => {
                self.refresh_popup();
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn handle_paste(&mut self, text: &str) {
        if self.search.is_some() {
            self.search_paste(text);
            return;
        }
        if self.approvals.is_empty() && self.picker.is_none() {
            self.composer.paste(text);
            self.refresh_popup();
        }
    }

    /// Esc while idle; the second within a second picks your last message
    /// (then each earlier one) into the composer for edit and resend.
    fn esc_idle(&mut self, now: Instant) {
        let twice = self
            .esc_at
            .take()
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1));
        if !twice {
            self.esc_at = Some(now);
            return;
        }
        let users: Vec<String> = self
            .transcript
            .cells
            .iter()
            .filter_map(|c| match &c.kind {
                super::cells::CellKind::User(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        // Numbered as `/rewind N` numbers them: a resumed history's loaded
        // tail follows `users_before` messages of yours.
        let before = self.users_before;
        let n = self
            .editing
            .map_or(users.len() + before, |n| n.saturating_sub(1));
        let Some(text) = n
            .checked_sub(1 + before)
            .and_then(|i| users.get(i))
            .filter(|_| n > before)
        else {
            self.hint("no earlier message of yours to edit");
            return;
        };
        self.composer.clear();
        self.composer.set_text(text);
        self.editing = Some(n);
        self.flash = Some(format!(
            "editing message {n}: Enter sends it in its place (/rewind {n}: later messages stay in the history, marked); Esc Esc: an earlier one"
        ));
    }

    pub fn handle_mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollUp => {
                self.with_transcript(|t, h, c| t.scroll_up(WHEEL_LINES, h, c))
            }
            MouseEventKind::ScrollDown => {
                self.with_transcript(|t, h, c| t.scroll_down(WHEEL_LINES, h, c))
            }
            _ => {}
        }
    }
}
