//! Writing HTTP/1.1 responses on the fake server's connection.
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;

type Io = std::io::Result<()>;

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

pub(super) async fn simple(
    wr: &mut OwnedWriteHalf,
    code: u16,
    extra: &[(&str, &str)],
    body: &Value,
) -> Io {
    let body = body.to_string();
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason_phrase(code),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(&body);
    wr.write_all(head.as_bytes()).await
}

pub(super) async fn write_chunk(wr: &mut OwnedWriteHalf, data: &str) -> Io {
    let framed = format!("{:x}\r\n{data}\r\n", data.len());
    wr.write_all(framed.as_bytes()).await
}
