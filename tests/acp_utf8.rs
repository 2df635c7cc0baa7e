//! `navi acp` and input that is not UTF-8: each such line is answered with
//! a JSON-RPC parse error (-32700) and the server keeps serving.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_bad_input::{Raw, code, req};
use crate::acp_support::Home;
use crate::support::FakeLlm;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_lines_of_invalid_utf8_are_parse_errors_and_serving_goes_on() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    let t = tokio::task::spawn_blocking(move || {
        let mut raw = Raw::start(&home);
        // A request with a bad byte inside a string, and bare bad bytes.
        raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"x\":\"\xff\"}}\n");
        raw.send(b"\xc3\x28\xfe\xfe\r\n");
        raw.send(&req(1, "initialize", json!({"protocolVersion": 1})));
        let mut got = raw.responses(&[json!(null), json!(1)]);
        while got.get("null").map_or(0, Vec::len) < 2 {
            let more = raw.responses(&[json!(null)]);
            got.entry("null".into())
                .or_default()
                .extend(more["null"].clone());
        }
        assert_eq!(got["1"][0]["result"]["protocolVersion"], 1, "{got:?}");
        assert!(
            !got.contains_key("7"),
            "the bad line is not a request: {got:?}"
        );
        let errors: Vec<&Value> = got["null"].iter().collect();
        for e in &errors {
            assert_eq!(e["error"]["code"], -32700, "{e}");
        }
        assert!(
            errors[0]["error"]["data"]["line"]
                .as_str()
                .unwrap()
                .contains("invalid UTF-8"),
            "{errors:?}"
        );
        // Still serving after the bad lines.
        raw.send(&req(2, "navi/no_such_method", json!({})));
        let got = raw.responses(&[json!(2)]);
        assert_eq!(code(&got, "2"), -32601);
        let (exit, err) = raw.finish();
        assert_eq!(exit, 0, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    });
    t.await.unwrap();
}
