//! `navi context`: each profile's base cost, read without the network, as
//! JSON and as text; an unknown profile is a usage error.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::run_cli::{Env, run};
use crate::support::FakeLlm;
use serde_json::Value;

#[tokio::test]
async fn navi_context_prints_each_profiles_base_cost_without_the_network() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let (code, out, err) = run(&env, &fake, "ollama", &["context", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let costs: Value = serde_json::from_str(&out).unwrap();
    let costs = costs.as_array().unwrap();
    let ids: Vec<&str> = costs
        .iter()
        .map(|c| c["profile"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"developer") && ids.contains(&"tester"),
        "{ids:?}"
    );
    for c in costs {
        let tools: u64 = c["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tokens"].as_u64().unwrap())
            .sum();
        let total = c["total"].as_u64().unwrap();
        assert!(
            total >= tools + c["profile_prompt"].as_u64().unwrap(),
            "{c}"
        );
        assert!(total <= 3000, "{c}");
    }
    let (code, out, _) = run(
        &env,
        &fake,
        "ollama",
        &["context", "--profile", "developer"],
    )
    .await;
    assert_eq!(code, 0);
    assert!(
        out.contains("profile developer") && out.contains("filesystem"),
        "{out}"
    );
    let (code, _, err) = run(&env, &fake, "ollama", &["context", "--profile", "nope"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("unknown profile 'nope'"), "{err}");
    assert!(fake.requests().is_empty(), "no network");
}
