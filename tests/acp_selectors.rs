//! `navi acp`'s selectors, driven by the TypeScript ACP client SDK: the
//! model option lists what the server serves (the profile's wishes it has
//! first), refuses what it does not offer, is kept with the session and
//! comes back with `session/load`; the profiles are a `mode` option too.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};

/// The values of config option `id` in a list of options.
fn values(options: &Value, id: &str) -> Vec<String> {
    let opt = options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no option {id}: {options}"));
    opt["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap().to_string())
        .collect()
}

fn current(options: &Value, id: &str) -> String {
    options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .map(|o| o["currentValue"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// `tester` wishes for a model the server lacks, then one it has.
fn wishes(home: &Home) {
    let p = home.path("cfg/profiles/tester/config.json");
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    cfg["model"] = json!(["not-served", "alpha"]);
    std::fs::write(&p, cfg.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_model_option_is_the_servers_list_validated_and_kept_across_load() {
    let Some(client) = client_or_skip("acp_model_option_is_the_servers_list") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("zeta-model".into(), Some(8192)),
        ("test-model".into(), Some(8192)),
        ("alpha".into(), Some(8192)),
    ]);
    fake.push(Reply::text("from zeta"));
    fake.push(Reply::text("zeta again"));
    let home = Home::new(&fake);
    wishes(&home);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setOption", "session": "a", "id": "mode", "value": "tester"},
                {"op": "setOption", "session": "a", "id": "model", "value": "not-served"},
                {"op": "setOption", "session": "a", "id": "mode", "value": "no-such-profile"},
                {"op": "setOption", "session": "a", "id": "model", "value": "zeta-model"},
                {"op": "prompt", "session": "a", "text": "hello"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    let id = d.id("a");
    // session/new: the server's models, the model option first, and a
    // mode option beside the modes.
    let new = &d.results("new")[0]["result"];
    let opts = &new["configOptions"];
    assert_eq!(opts[0]["id"], "model", "{dump}");
    let listed = values(opts, "model");
    for m in ["default", "zeta-model", "test-model", "alpha"] {
        assert!(listed.contains(&m.to_string()), "{m} in {listed:?}");
    }
    assert!(!listed.contains(&"not-served".to_string()), "{listed:?}");
    let mode = opts
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(mode["category"], "mode", "{dump}");
    let profiles = values(opts, "mode");
    assert!(
        profiles.contains(&"tester".to_string()) && profiles.contains(&"second".to_string()),
        "{profiles:?}"
    );
    assert_eq!(
        current(opts, "mode"),
        new["modes"]["currentModeId"].as_str().unwrap()
    );

    let set = d.results("setOption");
    // The mode option switched the profile: its wish the server has
    // comes first, the one it lacks is not offered.
    let after_mode = &set[0]["result"]["configOptions"];
    assert_eq!(current(after_mode, "mode"), "tester", "{dump}");
    assert_eq!(
        values(after_mode, "model"),
        ["default", "alpha", "zeta-model", "test-model"],
        "{dump}"
    );
    // A model that is not offered: an error naming the options.
    let refused = &set[1]["error"];
    let msg = refused["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(msg.contains("not-served"), "{msg}");
    for m in ["alpha", "zeta-model", "test-model", "default"] {
        assert!(msg.contains(m), "{m} named in: {msg}");
    }
    assert_eq!(refused["data"], msg, "{dump}");
    // An unknown profile: an error naming the profiles.
    let msg = set[2]["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(
        msg.contains("no-such-profile") && msg.contains("tester"),
        "{msg}"
    );
    assert_eq!(
        current(&set[3]["result"]["configOptions"], "model"),
        "zeta-model"
    );
    // A current_mode_update and a config_option_update told the client.
    let kinds = d.kinds(&id);
    assert!(
        kinds.contains(&"current_mode_update".to_string()),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"config_option_update".to_string()),
        "{kinds:?}"
    );

    // Kept with the session.
    let db = home.db();
    let stored: String = db
        .query_row(
            "SELECT value FROM session_state WHERE session_id = ?1 AND key = 'model'",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert!(stored.contains("zeta-model"), "{stored}");

    // Another navi loads it with the same model and uses it.
    let again = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "load", "session": id, "as": "a"},
                {"op": "prompt", "session": "a", "text": "again"},
            ]),
            "allow_once",
        )
        .await;
    let dump = again.dump();
    let loaded = &again.results("load")[0]["result"];
    assert_eq!(
        current(&loaded["configOptions"], "model"),
        "zeta-model",
        "{dump}"
    );
    assert_eq!(
        current(&loaded["configOptions"], "mode"),
        "tester",
        "{dump}"
    );
    assert_eq!(loaded["modes"]["currentModeId"], "tester", "{dump}");
    let models: Vec<String> = fake
        .chat_requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["zeta-model", "zeta-model"], "{dump}");
}

/// A server that cannot list its models: the profile's list is offered
/// (nothing invented), and a name outside it is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_model_option_without_a_server_list_offers_the_profiles() {
    let Some(client) = client_or_skip("acp_model_option_without_a_server_list") else {
        return;
    };
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    wishes(&home);
    // Nothing listens there: the listing fails at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let d = home
        .drive_env(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setOption", "session": "a", "id": "mode", "value": "tester"},
                {"op": "setOption", "session": "a", "id": "model", "value": "zeta-model"},
                {"op": "setOption", "session": "a", "id": "model", "value": "alpha"},
            ]),
            "allow_once",
            &[("OLLAMA_HOST", dead.as_str())],
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    let set = d.results("setOption");
    let listed = values(&set[0]["result"]["configOptions"], "model");
    assert_eq!(listed, ["default", "not-served", "alpha"], "{dump}");
    let msg = set[1]["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(msg.contains("zeta-model") && msg.contains("alpha"), "{msg}");
    assert_eq!(
        current(&set[2]["result"]["configOptions"], "model"),
        "alpha"
    );
}
