//! The progressive tool view: with many tools, a request carries the full schema only
//! of the tools always needed and of those the model asked for; every other tool is
//! deferred: only its name is sent (in `tool_search`'s description as the conversation
//! declares its tools, in a system update for tools deferred later), and `tool_search`
//! returns full schemas (and expands those tools in later requests). This keeps the
//! first request small however many tools are installed (50 MCP tools cost about their
//! names), and `tool_search`'s spec the same all conversation long.

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rab_ai::ToolSpec;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext, ToolError, ToolLevel, ToolOutput};

/// Name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// Deferring must save at least this many bytes (about 500 tokens): below, the round
/// trip through `tool_search` costs the model more than the schemas would.
pub const MIN_DEFER_BYTES: usize = 2048;

/// Which tools are sent in full.
#[derive(Debug)]
pub struct ToolView {
    threshold: usize,
    always: Vec<String>,
    /// Deferring pays only when it saves more bytes than this (`tool_search`'s own
    /// schema): below, every tool is sent in full and `tool_search` is left out.
    min_saving: usize,
    state: Mutex<ViewState>,
}

#[derive(Debug, Default)]
struct ViewState {
    /// Every tool's full spec (what `tool_search` searches).
    all: Vec<ToolSpec>,
    /// Tools that may be deferred (not always sent in full, and big enough for
    /// deferring to be worth it).
    deferrable: BTreeSet<String>,
    /// Bytes deferring saves over the full specs.
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
            min_saving: 0,
            state: Mutex::new(ViewState::default()),
        };
        view.update(full);
        view
    }

    /// Defers only while that saves more than `bytes` (the size of `tool_search`'s
    /// schema): tools that come later (MCP servers still starting) are deferred when
    /// they are many or big, and sent in full when they are few and small.
    pub fn with_min_saving(mut self, bytes: usize) -> Self {
        self.min_saving = bytes.max(MIN_DEFER_BYTES);
        self
    }

    /// Defers only while that pays: it must save more than `tool_search`'s own schema
    /// (and at least [`MIN_DEFER_BYTES`]).
    pub fn when_it_pays(self) -> Self {
        // The schema does not depend on the view (deferred names are added later).
        let empty = Arc::new(ToolView::new(0, &[], &[]));
        let search = crate::tool::AgentTool::spec(&ToolSearch::new(empty));
        self.with_min_saving(serde_json::to_string(&search).map_or(0, |s| s.len()))
    }

    /// Bytes deferring must save to be on.
    pub fn min_saving(&self) -> usize {
        self.min_saving
    }

    /// Whether deferring is on now: more tools than the threshold, saving enough.
    fn active(&self, state: &ViewState, total: usize) -> bool {
        total > self.threshold && state.saved > self.min_saving
    }

    /// Replaces the tool list (tools that come and go, such as MCP servers' tools);
    /// expanded tools stay expanded.
    pub fn update(&self, full: &[ToolSpec]) {
        let mut saved = 0;
        let mut deferrable = BTreeSet::new();
        for spec in full.iter().filter(|s| s.name != TOOL_SEARCH && !self.always.contains(&s.name))
        {
            let bytes = saving(spec);
            if bytes > 0 {
                saved += bytes;
                deferrable.insert(spec.name.clone());
            }
        }
        if let Ok(mut state) = self.state.lock() {
            state.all = full.to_vec();
            state.deferrable = deferrable;
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

    /// Whether `name` is deferred (left out, named in `tool_search`) when there are
    /// `total` tools.
    pub fn is_deferred(&self, name: &str, total: usize) -> bool {
        self.state.lock().is_ok_and(|s| self.active(&s, total) && s.is_deferred(name))
    }

    /// The specs for the next request: deferred tools left out; `tool_search` left
    /// out too while nothing is deferred.
    /// (Specs or references to them: the agent compares borrowed ones every turn.)
    pub fn specs<S: Borrow<ToolSpec> + Clone>(&self, full: &[S]) -> Vec<S> {
        let Ok(state) = self.state.lock() else { return full.to_vec() };
        if !self.active(&state, full.len()) {
            return full.iter().filter(|s| (*s).borrow().name != TOOL_SEARCH).cloned().collect();
        }
        full.iter().filter(|s| !state.is_deferred(&(*s).borrow().name)).cloned().collect()
    }

    /// The names of the tools left out of [`ToolView::specs`], in order.
    pub fn deferred<S: Borrow<ToolSpec>>(&self, full: &[S]) -> Vec<String> {
        let Ok(state) = self.state.lock() else { return Vec::new() };
        if !self.active(&state, full.len()) {
            return Vec::new();
        }
        full.iter()
            .map(Borrow::borrow)
            .filter(|s| state.is_deferred(&s.name))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Bytes the view saves before any tool is expanded (without counting
    /// `tool_search` itself).
    pub fn bytes_saved(&self) -> usize {
        self.state.lock().map_or(0, |s| s.saved)
    }
}

impl ViewState {
    fn is_deferred(&self, name: &str) -> bool {
        self.deferrable.contains(name) && !self.expanded.contains(name)
    }
}

/// Bytes deferring saves over sending the full spec (the name stays, in
/// `tool_search`'s description), when worth it: at least 64 bytes, since a deferred
/// tool costs the model a `tool_search` call.
fn saving(spec: &ToolSpec) -> usize {
    let size = serde_json::to_string(spec).map_or(0, |t| t.len());
    size.saturating_sub(spec.name.len() + 2).saturating_sub(64)
}

/// What introduces the deferred tools' names in `tool_search`'s declared description.
const LISTED: &str = "\nDeferred: ";

/// Names `deferred` in `tool_search`'s description (as a conversation declares its tools).
pub fn list_deferred(specs: &mut [ToolSpec], deferred: &[String]) {
    if deferred.is_empty() {
        return;
    }
    if let Some(search) = specs.iter_mut().find(|s| s.name == TOOL_SEARCH) {
        search.description = format!("{}{LISTED}{}", search.description, deferred.join(", "));
    }
}

/// The names [`list_deferred`] put in `tool_search`'s description.
pub fn listed_deferred(specs: &[&ToolSpec]) -> Vec<String> {
    specs
        .iter()
        .find(|s| s.name == TOOL_SEARCH)
        .and_then(|s| s.description.split_once(LISTED))
        .map(|(_, names)| names.split(", ").map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether `wanted` is the tool `in_effect` offers: the same spec, or `tool_search`
/// with the deferred names it was declared with.
pub fn same_tool(wanted: &ToolSpec, in_effect: &ToolSpec) -> bool {
    if wanted == in_effect {
        return true;
    }
    wanted.name == TOOL_SEARCH
        && in_effect.name == TOOL_SEARCH
        && wanted.parameters == in_effect.parameters
        && in_effect
            .description
            .split_once(LISTED)
            .is_some_and(|(base, _)| base == wanted.description)
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
    /// `select:` and tool names (`select:web_fetch,todo_write`), or keywords
    /// (`create issue`); the description shows both forms.
    #[schemars(description = "")]
    pub query: String,
    /// Default 5, max 20.
    pub max_results: Option<usize>,
}

impl Tool for ToolSearch {
    type Args = Args;
    const NAME: &'static str = TOOL_SEARCH;
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        // Weak models copy examples literally: the examples are real tool names.
        "Load deferred tools (listed below or in system updates) by name \
         (\"select:web_fetch,todo_write\") or keywords (\"fetch url\"), then call them."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let max = args.max_results.unwrap_or(5).clamp(1, 20);
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
            grammar: None,
            server: None,
        }
    }

    fn names(specs: &[ToolSpec]) -> Vec<&str> {
        specs.iter().map(|s| s.name.as_str()).collect()
    }

    #[tokio::test]
    async fn max_results_caps_what_a_keyword_search_returns() {
        let specs: Vec<ToolSpec> =
            (0..30).map(|i| spec(&format!("fetch_{i}"), "Fetch a thing from the store.")).collect();
        let view = Arc::new(ToolView::new(2, &[], &specs));
        let search = ToolSearch::new(view);
        let found = |args: Value| {
            let search = &search;
            async move {
                let out = search.execute(args, ToolContext::detached("c")).await.unwrap();
                let Some(rab_ai::Content::Text { text }) = out.content.first() else { panic!() };
                serde_json::from_str::<Value>(text).unwrap()["tools"].as_array().unwrap().len()
            }
        };
        assert_eq!(found(json!({"query": "fetch"})).await, 5);
        assert_eq!(found(json!({"query": "fetch", "max_results": 2})).await, 2);
        assert_eq!(found(json!({"query": "fetch", "max_results": 100})).await, 20);
    }

    #[tokio::test]
    async fn above_the_threshold_tools_are_deferred_until_searched() {
        let long = "Schedule a prompt. Cron syntax: minute hour day month weekday, with lists, \
                    ranges and steps; times are UTC and the job lives while rab runs.";
        let mut cron = spec("cron_create", long);
        cron.parameters["properties"]["y"] = json!({"type": "string", "description": long});
        let sleep = ToolSpec {
            name: "sleep".into(),
            description: "Wait.".into(),
            parameters: json!({"type": "object"}),
            grammar: None,
            server: None,
        };
        let search_spec = ToolSpec {
            name: TOOL_SEARCH.into(),
            description: "Load deferred tools.".into(),
            parameters: json!({"type": "object"}),
            grammar: None,
            server: None,
        };
        let specs = vec![spec("read", "Read a file. More."), cron, sleep, search_spec];
        let view = Arc::new(ToolView::new(2, &["read"], &specs));
        let sent = view.specs(&specs);
        assert_eq!(names(&sent), ["read", "sleep", "tool_search"], "cron_create is deferred");
        assert_eq!(sent[0], specs[0]);
        assert_eq!(sent[2], specs[3], "tool_search's spec never changes");
        assert_eq!(view.deferred(&specs), ["cron_create"]);
        let search = ToolSearch::new(view.clone());
        let out = search
            .execute(json!({"query": "schedule prompt"}), ToolContext::detached("c"))
            .await
            .unwrap();
        let Some(rab_ai::Content::Text { text }) = out.content.first() else { panic!() };
        assert!(text.contains("\"name\":\"cron_create\"") && text.contains("\"x\""), "{text}");
        let sent = view.specs(&specs);
        assert_eq!(sent[1], specs[1], "expanded from now on");
        assert!(view.deferred(&specs).is_empty(), "nothing deferred is left");
        assert!(!view.is_deferred("sleep", 4), "too small to be worth deferring");
        let fresh = ToolView::new(2, &["read"], &specs);
        assert!(fresh.is_deferred("cron_create", 4));
        assert!(!fresh.is_deferred("cron_create", 2), "at or below the threshold all are full");
        let err = search
            .execute(json!({"query": "select:nope"}), ToolContext::detached("c"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no tool named nope"), "{err}");
    }

    #[test]
    fn tools_added_later_are_deferred_and_expanded_ones_stay_full() {
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
        assert_eq!(sent, [a, b], "expanded before it existed: sent in full; get is deferred");
    }
}
