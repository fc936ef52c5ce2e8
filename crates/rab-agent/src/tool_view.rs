//! The progressive tool view: with many tools, a request carries the full schema only
//! of the tools always needed and of those the model asked for; every other tool is
//! sent as its name and first sentence with an empty schema, and `tool_search` returns
//! full schemas (and expands those tools in later requests). This keeps the first
//! request small however many tools are installed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rab_ai::ToolSpec;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};

/// Name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// Which tools are sent in full.
#[derive(Debug)]
pub struct ToolView {
    threshold: usize,
    always: Vec<String>,
    state: Mutex<ViewState>,
}

#[derive(Debug, Default)]
struct ViewState {
    /// Every tool's full spec (what `tool_search` searches).
    all: Vec<ToolSpec>,
    /// The stub of each tool that may be deferred (not always sent in full, and with a
    /// stub worth sending).
    stubs: BTreeMap<String, ToolSpec>,
    /// Bytes the stubs save over the full specs.
    saved: usize,
    expanded: BTreeSet<String>,
}

impl ToolView {
    /// A view of `full` (every tool's spec): with more than `threshold` tools, only
    /// `always` (and expanded tools) are sent in full.
    pub fn new(threshold: usize, always: &[&str], full: &[ToolSpec]) -> Self {
        let view = Self {
            threshold,
            always: always.iter().map(|s| (*s).to_owned()).collect(),
            state: Mutex::new(ViewState::default()),
        };
        view.update(full);
        view
    }

    /// Replaces the tool list (tools that come and go, such as MCP servers' tools);
    /// expanded tools stay expanded.
    pub fn update(&self, full: &[ToolSpec]) {
        let mut saved = 0;
        let mut stubs = BTreeMap::new();
        for spec in full.iter().filter(|s| s.name != TOOL_SEARCH && !self.always.contains(&s.name))
        {
            let bytes = saving(spec);
            if bytes > 0 {
                saved += bytes;
                stubs.insert(spec.name.clone(), stub(spec));
            }
        }
        if let Ok(mut state) = self.state.lock() {
            state.all = full.to_vec();
            state.stubs = stubs;
            state.saved = saved;
        }
    }

    /// Every tool's full spec.
    pub fn all(&self) -> Vec<ToolSpec> {
        self.state.lock().map(|s| s.all.clone()).unwrap_or_default()
    }

    /// Sends these tools in full from now on.
    pub fn expand<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        if let Ok(mut s) = self.state.lock() {
            s.expanded.extend(names.into_iter().map(str::to_owned));
        }
    }

    /// Whether `name` goes as a stub when there are `total` tools.
    pub fn is_deferred(&self, name: &str, total: usize) -> bool {
        total > self.threshold
            && self
                .state
                .lock()
                .is_ok_and(|s| !s.expanded.contains(name) && s.stubs.contains_key(name))
    }

    /// The specs for the next request.
    pub fn specs(&self, full: &[ToolSpec]) -> Vec<ToolSpec> {
        let Ok(state) = self.state.lock() else { return full.to_vec() };
        if full.len() <= self.threshold {
            return full.to_vec();
        }
        full.iter()
            .map(|s| {
                if state.expanded.contains(&s.name) {
                    return s.clone();
                }
                state.stubs.get(&s.name).unwrap_or(s).clone()
            })
            .collect()
    }

    /// Bytes the view saves before any tool is expanded (without counting
    /// `tool_search` itself).
    pub fn bytes_saved(&self) -> usize {
        self.state.lock().map_or(0, |s| s.saved)
    }
}

/// The first clause of a description: up to the first ". ", "; ", ": " or " (".
fn first_sentence(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    let end = [". ", "; ", ": ", " ("].iter().filter_map(|p| line.find(p)).min();
    end.map_or_else(|| line.strip_suffix('.').unwrap_or(line), |i| &line[..i])
}

/// Bytes a stub saves over the full spec, when worth it (at least 32).
fn saving(spec: &ToolSpec) -> usize {
    let size = |s: &ToolSpec| serde_json::to_string(s).map_or(0, |t| t.len());
    size(spec).saturating_sub(size(&stub(spec))).saturating_sub(32)
}

fn stub(spec: &ToolSpec) -> ToolSpec {
    ToolSpec {
        name: spec.name.clone(),
        description: first_sentence(&spec.description).to_owned(),
        parameters: json!({"type": "object"}),
    }
}

/// `tool_search`: full schemas of deferred tools.
pub struct ToolSearch {
    view: Arc<ToolView>,
}

impl ToolSearch {
    /// Searches the view's tools and expands what it returns.
    pub fn new(view: Arc<ToolView>) -> Self {
        Self { view }
    }
}

/// Arguments of `tool_search`.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// "select:a,b" or keywords.
    pub query: String,
}

impl Tool for ToolSearch {
    type Args = Args;
    const NAME: &'static str = TOOL_SEARCH;
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Tools listed with empty parameters are deferred: get their schemas here (select:a,b \
         or keywords), then call them."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let max = 5;
        let specs = self.view.all();
        let found: Vec<&ToolSpec> = match args.query.trim().strip_prefix("select:") {
            Some(names) => {
                let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
                let unknown: Vec<&str> = wanted
                    .iter()
                    .copied()
                    .filter(|w| !specs.iter().any(|s| s.name == *w))
                    .collect();
                if !unknown.is_empty() {
                    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                    return Err(ToolError::Model(format!(
                        "no tool named {}; tools: {}",
                        unknown.join(", "),
                        names.join(", ")
                    )));
                }
                specs.iter().filter(|s| wanted.contains(&s.name.as_str())).collect()
            }
            None => rank(&specs, &args.query).into_iter().take(max).collect(),
        };
        if found.is_empty() {
            return Err(ToolError::Model(format!(
                "no tool matches \"{}\"; try other words or select:NAME",
                args.query
            )));
        }
        self.view.expand(found.iter().map(|s| s.name.as_str()));
        let tools: Vec<Value> = found
            .iter()
            .map(|s| json!({"name": s.name, "description": s.description, "parameters": s.parameters}))
            .collect();
        let text = serde_json::to_string(&json!({"tools": tools})).unwrap_or_default();
        Ok(ToolOutput::text(text))
    }
}

/// Tools whose name or description contain the query's words, best first.
fn rank<'a>(specs: &'a [ToolSpec], query: &str) -> Vec<&'a ToolSpec> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &ToolSpec)> = specs
        .iter()
        .filter(|s| s.name != TOOL_SEARCH)
        .map(|s| {
            let name = s.name.to_lowercase();
            let desc = s.description.to_lowercase();
            let score = words
                .iter()
                .map(|w| {
                    if name.contains(w.as_str()) {
                        3
                    } else {
                        usize::from(desc.contains(w.as_str()))
                    }
                })
                .sum();
            (score, s)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::AgentTool;
    use pretty_assertions::assert_eq;

    fn spec(name: &str, desc: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: desc.into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        }
    }

    #[tokio::test]
    async fn above_the_threshold_tools_are_stubs_until_searched() {
        let long = "Schedule a prompt. Cron syntax: minute hour day month weekday, with lists, \
                    ranges and steps; times are UTC and the job lives while rab runs.";
        let mut cron = spec("cron_create", long);
        cron.parameters["properties"]["y"] = json!({"type": "string", "description": long});
        let sleep = ToolSpec {
            name: "sleep".into(),
            description: "Wait.".into(),
            parameters: json!({"type": "object"}),
        };
        let specs = vec![spec("read", "Read a file. More."), cron, sleep];
        let view = Arc::new(ToolView::new(2, &["read"], &specs));
        let sent = view.specs(&specs);
        assert_eq!(sent[0], specs[0]);
        assert_eq!(sent[1].parameters, json!({"type": "object"}));
        assert_eq!(sent[1].description, "Schedule a prompt");
        let search = ToolSearch::new(view.clone());
        let out = search
            .execute(json!({"query": "schedule prompt"}), ToolContext::detached("c"))
            .await
            .unwrap();
        let Some(rab_ai::Content::Text { text }) = out.content.first() else { panic!() };
        assert!(text.contains("\"name\":\"cron_create\"") && text.contains("\"x\""), "{text}");
        assert_eq!(view.specs(&specs)[1], specs[1], "expanded from now on");
        assert!(!view.is_deferred("sleep", 3), "too small to be worth a stub");
        assert_eq!(view.specs(&specs)[2], specs[2]);
        let fresh = ToolView::new(2, &["read"], &specs);
        assert!(fresh.is_deferred("cron_create", 3));
        assert!(!fresh.is_deferred("cron_create", 2), "at or below the threshold all are full");
        let err = search
            .execute(json!({"query": "select:nope"}), ToolContext::detached("c"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no tool named nope"), "{err}");
    }

    #[test]
    fn tools_added_later_are_stubbed_and_expanded_ones_stay_full() {
        let long = "Look things up in the issue tracker. Takes a query, a project, a state \
                    and a limit; returns matching issues with their titles and links.";
        let mut a = spec("read", "Read.");
        a.parameters["properties"]["y"] = json!({"type": "string", "description": long});
        let mut b = spec("mcp__t__search", long);
        b.parameters["properties"]["y"] = json!({"type": "string", "description": long});
        let mut c = spec("mcp__t__get", long);
        c.parameters["properties"]["y"] = json!({"type": "string", "description": long});
        let view = ToolView::new(1, &["read"], std::slice::from_ref(&a));
        assert_eq!(view.bytes_saved(), 0);
        view.expand(["mcp__t__search"]);
        let all = vec![a.clone(), b.clone(), c.clone()];
        view.update(&all);
        assert!(view.bytes_saved() > 0);
        assert_eq!(view.all().len(), 3);
        let sent = view.specs(&all);
        assert_eq!(sent[0], a);
        assert_eq!(sent[1], b, "expanded before it existed: sent in full");
        assert_eq!(sent[2].parameters, json!({"type": "object"}));
    }
}
