//! A `models.json` of arbitrary text applied to the built-in model table, then every
//! provider and model it names resolved as `--provider`/`--model` would: each step
//! succeeds or fails with an error, never a panic.

use rab_ai::{ModelQuery, Registry, Usage};
use rab_config::load_models_file;
use serde_json::Value;

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("models.json");
    std::fs::write(&path, data).expect("models.json is written");
    let mut registry = Registry::builtin();
    if load_models_file(&path, &mut registry).is_err() {
        return;
    }
    // The names the file gives, read again as plain JSON.
    let Ok(file) = serde_json::from_slice::<Value>(data) else { return };
    let Some(providers) = file.get("providers").and_then(Value::as_object) else { return };
    let usage = Usage {
        input: 1000,
        output: 500,
        cache_read: 200,
        cache_write: 100,
        reasoning: 50,
        web_searches: 1,
    };
    for (name, provider) in providers {
        let _ = registry.resolve(&ModelQuery { provider: Some(name), ..Default::default() });
        let models = provider.get("models").and_then(Value::as_array).into_iter().flatten();
        for id in models.filter_map(|m| m.get("id").and_then(Value::as_str)) {
            let qualified = format!("{name}/{id}");
            for query in [
                ModelQuery { provider: Some(name), model: Some(id), ..Default::default() },
                ModelQuery { model: Some(&qualified), ..Default::default() },
            ] {
                if let Ok(resolved) = registry.resolve(&query) {
                    let _ = resolved.model.cost.of(&usage);
                }
            }
        }
    }
}
