//! The fake server's settings: what it serves besides scripted replies
//! (models, `/props`, capabilities), token counting, a required key and a
//! strict chat template.
use super::{FakeLlm, lock};
use serde_json::Value;

impl FakeLlm {
    /// Names and context lengths served by the model endpoints.
    pub fn set_models(&self, models: Vec<(String, Option<u64>)>) {
        lock(&self.state).models = models;
    }
    /// Serve `GET /props` like llama-server (e.g. `{"default_generation_settings":
    /// {"n_ctx": 4096}, "total_slots": 4}`); `None` = 404, like other servers.
    pub fn set_props(&self, props: Option<Value>) {
        lock(&self.state).props = props;
    }
    /// The capabilities `/api/show` reports (e.g. add "vision").
    pub fn set_capabilities(&self, caps: &[&str]) {
        lock(&self.state).capabilities = Some(caps.iter().map(|c| c.to_string()).collect());
    }
    /// Adds `fields` (an object) to every entry `GET …/models` lists, e.g.
    /// `{"input_modalities": ["text"]}`.
    pub fn set_model_fields(&self, fields: Value) {
        lock(&self.state).model_fields = Some(fields);
    }
    /// Count tokens like llama-server: serve `POST /tokenize` and
    /// `POST /apply-template`, report usage computed from the prompt when a
    /// reply has none, and refuse a prompt over the `/props` window.
    pub fn set_counting(&self, on: bool) {
        lock(&self.state).counting = on;
    }
    /// Requests without this key (or with another) get HTTP 401.
    pub fn require_key(&self, key: &str) {
        lock(&self.state).key = Some(key.to_string());
    }

    /// Refuse chat requests whose roles Gemma 3's template refuses (HTTP
    /// 400 with its message, like llama-server); see `fake_llm/strict.rs`.
    pub fn set_strict_template(&self, on: bool) {
        lock(&self.state).strict_template = on;
    }
}
