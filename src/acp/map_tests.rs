#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use serde_json::json;

fn ev(v: Value) -> AgentEvent {
    serde_json::from_value(v).unwrap()
}

/// The updates as the JSON the client receives.
fn wire(m: &mut Mapper, v: Value) -> Vec<Value> {
    m.map(&ev(v))
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

#[test]
fn live_text_and_thinking_stream_once() {
    let mut m = Mapper::default();
    assert!(wire(&mut m, json!({"type":"stream_start","session_id":"s"})).is_empty());
    let t = wire(&mut m, json!({"type":"thinking_delta","delta":"hmm"}));
    assert_eq!(t[0]["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(t[0]["content"]["text"], "hmm");
    // The whole block after its deltas is not sent again.
    let whole = json!({"type":"turn_thinking","thinking":"hmm","is_subagent":false});
    assert!(wire(&mut m, whole.clone()).is_empty());
    let d = wire(&mut m, json!({"type":"stream_delta","delta":"Hel"}));
    assert_eq!(d[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(d[0]["content"], json!({"type":"text","text":"Hel"}));
    let end =
        json!({"type":"stream_end","content":"Hello","context_tokens":1,"max_context_tokens":2});
    assert!(wire(&mut m, end.clone()).is_empty());
    // A turn that streamed nothing sends its final text once.
    wire(&mut m, json!({"type":"stream_start","session_id":"s"}));
    let e = wire(&mut m, end);
    assert_eq!(e[0]["content"]["text"], "Hello");
    // Thinking without deltas (replay) is sent whole.
    let t = wire(&mut m, whole);
    assert_eq!(t[0]["sessionUpdate"], "agent_thought_chunk");
}

#[test]
fn subagent_text_stays_out_of_the_main_message() {
    let mut m = Mapper::default();
    let d = json!({"type":"stream_delta","delta":"inner","is_subagent":true});
    assert!(wire(&mut m, d).is_empty());
    let t = json!({"type":"thinking_delta","delta":"inner","is_subagent":true});
    assert!(wire(&mut m, t).is_empty());
}

/// The typed call data a write of `notes.txt` in /w carries.
fn write_call() -> Value {
    json!({"kind":"edit","title":"filesystem: write notes.txt","paths":["/w/notes.txt"],
           "edit":{"path":"/w/notes.txt","old_text":"hello\n","new_text":"hi\n"}})
}

#[test]
fn a_tool_call_and_its_result() {
    let mut m = Mapper::default();
    let args = json!({"action":"write","path":"notes.txt","content":"hi\n"});
    let s = wire(
        &mut m,
        json!({"type":"tool_started","id":"c1","tool":"filesystem","args":args,
               "is_subagent":false,"call":write_call()}),
    );
    assert_eq!(s[0]["sessionUpdate"], "tool_call");
    assert_eq!(s[0]["toolCallId"], "c1");
    assert_eq!(s[0]["kind"], "edit");
    // `pending` is the schema's default status: omitted on the wire.
    assert!(
        s[0].get("status").is_none_or(|v| v == "pending"),
        "{}",
        s[0]
    );
    assert!(s[0].get("name").is_none(), "not in the schema: {}", s[0]);
    assert_eq!(s[0]["title"], "filesystem: write notes.txt");
    assert_eq!(s[0]["locations"][0]["path"], "/w/notes.txt");
    assert_eq!(s[0]["rawInput"], args);
    assert_eq!(s[0]["content"][0]["oldText"], "hello\n");
    let r = wire(
        &mut m,
        json!({"type":"tool_call","id":"c1","tool":"filesystem","args":args,
               "result":"wrote 3 bytes","success":true,"is_subagent":false}),
    );
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(r[0]["status"], "completed");
    assert_eq!(r[0]["content"][0]["type"], "diff");
    assert_eq!(r[0]["content"][0]["path"], "/w/notes.txt");
    assert_eq!(r[0]["content"][0]["oldText"], "hello\n");
    assert_eq!(r[0]["content"][0]["newText"], "hi\n");
    assert_eq!(r[0]["content"][1]["content"]["text"], "wrote 3 bytes");
    assert_eq!(
        r[0]["rawOutput"],
        json!({"output":"wrote 3 bytes","success":true})
    );
    assert!(m.close_open().is_empty());
}

#[test]
fn a_new_file_has_a_null_old_text_and_an_unfaithful_edit_no_diff() {
    let mut m = Mapper::default();
    let mut call = write_call();
    call["edit"]["old_text"] = Value::Null;
    let s = wire(
        &mut m,
        json!({"type":"tool_started","id":"c1","tool":"filesystem","args":{},"call":call,"is_subagent":false}),
    );
    let d = &s[0]["content"][0];
    assert_eq!(d["type"], "diff");
    assert!(d.get("oldText").is_none_or(Value::is_null), "{d}");
    let mut call = write_call();
    call["edit"]["note"] = json!("the file's earlier text is not kept");
    let s = wire(
        &mut m,
        json!({"type":"tool_started","id":"c2","tool":"filesystem","args":{},"call":call,"is_subagent":false}),
    );
    assert!(s.iter().all(|u| u.get("content").is_none()), "{s:?}");
}

#[test]
fn a_pending_call_runs_when_anything_else_happens_but_not_while_asking() {
    let mut m = Mapper::default();
    let started = json!({"type":"tool_started","id":"c1","tool":"x","args":{},"is_subagent":false});
    wire(&mut m, started.clone());
    let next = wire(&mut m, json!({"type":"stream_delta","delta":"sub"}));
    assert_eq!(next[0]["toolCallId"], "c1");
    assert_eq!(next[0]["status"], "in_progress");
    assert_eq!(next.len(), 2);
    // A call that asks first stays pending; the answer flips it (session.rs).
    wire(&mut m, started);
    m.asking("c1");
    let next = wire(&mut m, json!({"type":"stream_delta","delta":"x"}));
    assert_eq!(next.len(), 1, "{next:?}");
}

#[test]
fn a_failed_call_and_a_result_without_its_call() {
    let mut m = Mapper::default();
    let r = wire(
        &mut m,
        json!({"type":"tool_call","id":"c9","tool":"terminal","args":{"command":"ls"},
               "result":"denied","success":false,"is_subagent":false}),
    );
    assert_eq!(r[0]["sessionUpdate"], "tool_call");
    // Nothing is guessed from the tool's name: without call data, `other`.
    assert!(r[0].get("kind").is_none_or(|v| v == "other"), "{}", r[0]);
    assert_eq!(r[1]["status"], "failed");
    assert_eq!(r[1]["content"][0]["content"]["text"], "denied");
    assert_eq!(r[1]["rawOutput"]["success"], false);
}

#[test]
fn calls_left_open_by_a_stop_are_closed_as_failed() {
    let mut m = Mapper::default();
    wire(
        &mut m,
        json!({"type":"tool_started","id":"c2","tool":"terminal","args":{"command":"sleep 9"},"is_subagent":false}),
    );
    let closed: Vec<Value> = m
        .close_open()
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["toolCallId"], "c2");
    assert_eq!(closed[0]["status"], "failed");
}

#[test]
fn todos_become_a_plan() {
    let mut m = Mapper::default();
    let p = wire(
        &mut m,
        json!({"type":"todo_updated","items":[
            {"id":1,"text":"read","status":"done"},
            {"id":2,"text":"write","status":"in_progress"},
            {"id":3,"text":"test","status":"pending"},
            {"id":4,"text":"ship","status":"failed"}]}),
    );
    assert_eq!(p[0]["sessionUpdate"], "plan");
    let e = &p[0]["entries"];
    assert_eq!(e[0]["status"], "completed");
    assert_eq!(e[1]["status"], "in_progress");
    assert_eq!(e[2]["status"], "pending");
    assert_eq!(e[3]["content"], "ship (failed)");
    assert_eq!(e[3]["priority"], "medium");
}

#[test]
fn replayed_messages() {
    let mut m = Mapper::default();
    let u = wire(&mut m, json!({"type":"user_message","message":"hi"}));
    assert_eq!(u[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(u[0]["content"]["text"], "hi");
    let a = wire(&mut m, json!({"type":"agent_message","content":"hello"}));
    assert_eq!(a[0]["sessionUpdate"], "agent_message_chunk");
    assert!(wire(&mut m, json!({"type":"agent_message","content":"  "})).is_empty());
}

#[test]
fn kinds_come_from_the_call_data() {
    assert_eq!(kind(CallKind::Read), ToolKind::Read);
    assert_eq!(kind(CallKind::Delete), ToolKind::Delete);
    assert_eq!(kind(CallKind::SwitchMode), ToolKind::SwitchMode);
    let mut m = Mapper::default();
    let s = wire(
        &mut m,
        json!({"type":"tool_started","id":"c1","tool":"filesystem","args":{"action":"read"},
               "is_subagent":false,
               "call":{"kind":"execute","title":"terminal: ls","cwd":"/w"}}),
    );
    assert_eq!(s[0]["kind"], "execute");
    assert_eq!(s[0]["title"], "terminal: ls");
    assert_eq!(s[0]["locations"][0]["path"], "/w");
}
