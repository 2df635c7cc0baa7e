//! `navi acp`'s transport: JSON-RPC lines on stdin and stdout, with stdin
//! read as bytes.
//!
//! Invariant: every input line reaches the SDK as one line. A line that is
//! not UTF-8 arrives as text that is not JSON (naming where the bad byte
//! is), so it is answered with a parse error (-32700) like any other
//! malformed line and the connection goes on; the SDK's own reader would
//! end the connection instead.
use agent_client_protocol::Lines;
use futures_util::{Sink, Stream};
use std::io::{self, BufRead};

/// What a line that is not UTF-8 becomes.
fn decode(line: Vec<u8>) -> String {
    match String::from_utf8(line) {
        Ok(s) => s,
        Err(e) => format!(
            "invalid UTF-8 at byte {} of the line",
            e.utf8_error().valid_up_to()
        ),
    }
}

/// Drops the line end (`\n`, `\r\n`).
fn trim_end(buf: &mut Vec<u8>) {
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
}

type Outgoing = std::pin::Pin<Box<dyn Sink<String, Error = io::Error> + Send>>;
type Incoming = std::pin::Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>;

/// The lines transport over the process's stdin and stdout.
pub(super) fn transport() -> Lines<Outgoing, Incoming> {
    let (tx, rx) = tokio::sync::mpsc::channel::<io::Result<String>>(16);
    // A thread of its own: a read blocked on stdin must not keep the
    // runtime from shutting down.
    let reader = std::thread::Builder::new()
        .name("acp-stdin".into())
        .spawn(move || {
            let mut input = io::stdin().lock();
            loop {
                let mut buf = Vec::new();
                match input.read_until(b'\n', &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        trim_end(&mut buf);
                        if tx.blocking_send(Ok(decode(buf))).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.blocking_send(Err(e));
                        break;
                    }
                }
            }
        });
    if let Err(e) = reader {
        tracing::error!("navi acp: cannot start the stdin reader: {e}");
    }
    let incoming = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|line| (line, rx))
    });
    let outgoing =
        futures_util::sink::unfold(tokio::io::stdout(), |mut out, line: String| async move {
            use tokio::io::AsyncWriteExt;
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            out.write_all(&bytes).await?;
            out.flush().await?;
            Ok::<_, io::Error>(out)
        });
    Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_utf8_become_text_that_is_not_json() {
        assert_eq!(decode(b"{\"a\":1}".to_vec()), "{\"a\":1}");
        let bad = decode(b"{\"a\":\"\xff\"}".to_vec());
        assert!(bad.contains("invalid UTF-8 at byte 6"), "{bad}");
        let mut b = b"x\r\n".to_vec();
        trim_end(&mut b);
        assert_eq!(b, b"x");
    }
}
