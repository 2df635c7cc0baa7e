//! What rmcp's typed tool list drops: a tool's `execution.taskSupport`.
//!
//! A tool marked `"required"` must run as an MCP task, which navi cannot do;
//! a plain `tools/call` of it fails every time, so it is not offered to the
//! model. rmcp's `Tool` has no field for it, so the stdio reader is watched
//! on its way to rmcp: lines that mention `taskSupport` are parsed once more
//! and the names of task-only tools noted.
//!
//! Invariant: bytes pass through unchanged; at most [`LINE_MAX`] bytes of a
//! line are held (longer lines — big tool results — are not looked at).
use serde_json::Value;
use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Longest line looked at.
const LINE_MAX: usize = 4 * 1024 * 1024;

/// Names of the tools that need MCP tasks, as the server listed them.
#[derive(Clone, Default)]
pub(crate) struct TaskOnly(Arc<Mutex<HashSet<String>>>);

impl TaskOnly {
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.lock().is_ok_and(|s| s.contains(name))
    }

    /// Notes the task-only tools of one JSON-RPC message (a `tools/list`
    /// answer); anything else is ignored.
    pub(crate) fn note_line(&self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(tools) = v.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        for t in tools {
            let required =
                t.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required");
            if let (true, Some(name), Ok(mut set)) = (
                required,
                t.get("name").and_then(Value::as_str),
                self.0.lock(),
            ) {
                set.insert(name.to_string());
            }
        }
    }
}

/// A reader that passes everything through and shows [`TaskOnly`] the
/// lines that may list task-only tools.
pub(crate) struct Inspect<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line is too long to look at.
    skipping: bool,
    found: TaskOnly,
}

impl<R> Inspect<R> {
    pub(crate) fn new(inner: R, found: TaskOnly) -> Self {
        Inspect {
            inner,
            line: Vec::new(),
            skipping: false,
            found,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, rest, end) = match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            if !self.skipping {
                if self.line.len() + part.len() > LINE_MAX {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if end {
                if !self.skipping && contains(&self.line, b"taskSupport") {
                    self.found.note_line(&self.line);
                }
                self.line.clear();
                self.skipping = false;
            }
            bytes = rest;
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl<R: AsyncRead + Unpin> AsyncRead for Inspect<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut me.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            me.scan(&buf.filled()[before..]);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn notes_task_only_tools_and_passes_bytes_through() {
        let list = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","execution":{"taskSupport":"required"}},{"name":"c","execution":{"taskSupport":"optional"}}]}}"#;
        let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".to_vec();
        input.extend_from_slice(list);
        input.push(b'\n');
        let found = TaskOnly::default();
        let mut r = Inspect::new(&input[..], found.clone());
        let mut out = Vec::new();
        // Small reads: lines arrive in pieces.
        let mut buf = [0u8; 7];
        loop {
            let n = r.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, input);
        assert!(found.contains("b"));
        assert!(!found.contains("a") && !found.contains("c"));
    }
}
