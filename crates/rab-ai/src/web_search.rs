//! Web search run by the provider (a server tool), for every wire: how a request
//! declares it, and how the search and the citations in the answer are read back.
//!
//! Pages read 2026-11-28: Anthropic's web search tool
//! (platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool), OpenAI's
//! web search guide (developers.openai.com/api/docs/guides/tools-web-search), Gemini's
//! grounding with Google Search (ai.google.dev/gemini-api/docs/google-search) and
//! OpenRouter's web search (openrouter.ai/docs/guides/features/server-tools/web-search).
//! Where an API cannot enforce the domain lists rab was given (Gemini takes none,
//! OpenAI takes no blocked list), the search is not offered at all (see
//! [`supports_domains`]).

use serde_json::{Value, json};

use crate::model::Api;
use crate::types::{Citation, SearchResult, ServerTool, ToolSpec, WebSearch};

/// The web search settings of a tool, when it is the server's web search.
pub(crate) fn settings(spec: &ToolSpec) -> Option<(&[String], &[String], Option<u32>)> {
    match &spec.server {
        Some(ServerTool::WebSearch { allowed_domains, blocked_domains, max_uses }) => {
            Some((allowed_domains, blocked_domains, *max_uses))
        }
        None => None,
    }
}

/// Whether `api` can keep a search to the domain lists: Anthropic and OpenRouter take
/// both, OpenAI takes allowed domains only, Gemini none.
pub fn supports_domains(api: Api, allowed: &[String], blocked: &[String]) -> bool {
    match api {
        Api::AnthropicMessages | Api::OpenaiCompletions => true,
        Api::OpenaiResponses => blocked.is_empty(),
        Api::GoogleGenerativeAi => allowed.is_empty() && blocked.is_empty(),
    }
}

/// Why `spec`, a server tool, cannot be offered with `model`: it has no server-side
/// search, or its API cannot keep to the domain rules. `None`: it can (and for every
/// tool rab runs itself).
pub fn search_unavailable(model: &crate::model::Model, spec: &ToolSpec) -> Option<String> {
    let (allowed, blocked, _) = settings(spec)?;
    if model.compat.web_search != Some(model.api) {
        let name = format!("{}/{}", model.provider, model.id);
        return Some(match model.compat.web_search {
            Some(api) => format!("{name} searches the web on the {} API only", api.as_str()),
            None => format!("{name} has no server-side web search"),
        });
    }
    if !supports_domains(model.api, allowed, blocked) {
        return Some(format!(
            "{}'s web search cannot keep to the domain rules (web_search(domain:…) rules)",
            model.provider
        ));
    }
    None
}

/// OpenAI Responses: the `web_search` tool.
pub(crate) fn responses_tool(spec: &ToolSpec) -> Option<Value> {
    let (allowed, _, _) = settings(spec)?;
    let mut tool = json!({"type": "web_search"});
    if !allowed.is_empty() {
        tool["filters"] = json!({"allowed_domains": allowed});
    }
    Some(tool)
}

/// OpenRouter (Chat Completions): the `openrouter:web_search` server tool.
pub(crate) fn openrouter_tool(spec: &ToolSpec) -> Option<Value> {
    let (allowed, blocked, max_uses) = settings(spec)?;
    let mut parameters = json!({"max_results": 5});
    if !allowed.is_empty() {
        parameters["allowed_domains"] = json!(allowed);
    } else if !blocked.is_empty() {
        parameters["excluded_domains"] = json!(blocked);
    }
    if let Some(n) = max_uses {
        parameters["max_total_results"] = json!(n * 5);
    }
    Some(json!({"type": "openrouter:web_search", "parameters": parameters}))
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

/// Anthropic: a `web_search_tool_result` block's content into the search's results or
/// error.
pub(crate) fn anthropic_result(search: &mut WebSearch, block: &Value) {
    match &block["content"] {
        Value::Array(items) => {
            search.results = items
                .iter()
                .filter(|r| r["type"] == "web_search_result")
                .map(|r| SearchResult { url: text(r, "url"), title: text(r, "title") })
                .collect();
        }
        error => {
            search.error = Some(error["error_code"].as_str().unwrap_or("unknown error").to_owned());
        }
    }
}

/// Anthropic: a `web_search_result_location` citation.
pub(crate) fn anthropic_citation(c: &Value) -> Option<Citation> {
    (c["type"] == "web_search_result_location").then(|| Citation {
        url: text(c, "url"),
        title: text(c, "title"),
        cited_text: c["cited_text"].as_str().map(str::to_owned),
        raw: Some(c.clone()),
    })
}

/// OpenAI Responses: a finished `web_search_call` item.
pub(crate) fn responses_search(item: &Value) -> WebSearch {
    let action = &item["action"];
    let mut queries: Vec<String> = action["queries"]
        .as_array()
        .map(|q| q.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    if queries.is_empty()
        && let Some(q) = action["query"].as_str()
    {
        queries.push(q.to_owned());
    }
    // Opening a page or finding in one: the page is the result.
    let results: Vec<SearchResult> = match action["sources"].as_array() {
        Some(sources) => sources
            .iter()
            .filter_map(|s| s["url"].as_str())
            .map(|url| SearchResult { url: url.to_owned(), title: String::new() })
            .collect(),
        None => action["url"]
            .as_str()
            .map(|url| vec![SearchResult { url: url.to_owned(), title: String::new() }])
            .unwrap_or_default(),
    };
    WebSearch {
        id: text(item, "id"),
        queries,
        results,
        error: (item["status"] == "failed").then(|| "failed".to_owned()),
        raw: vec![item.clone()],
    }
}

/// OpenAI Responses and OpenRouter: a `url_citation` annotation (flat, or nested under
/// `url_citation` as Chat Completions has it).
pub(crate) fn url_citation(a: &Value) -> Option<Citation> {
    if a["type"] != "url_citation" {
        return None;
    }
    let c = if a["url_citation"].is_object() { &a["url_citation"] } else { a };
    Some(Citation {
        url: text(c, "url"),
        title: text(c, "title"),
        cited_text: c["content"].as_str().map(str::to_owned),
        raw: None,
    })
}

/// Gemini: a candidate's `groundingMetadata` into the search it ran and the citations
/// of the answer (each grounded segment with the pages that support it).
pub(crate) fn gemini_grounding(meta: &Value, n: usize) -> Option<(WebSearch, Vec<Citation>)> {
    let queries: Vec<String> = meta["webSearchQueries"]
        .as_array()?
        .iter()
        .filter_map(|q| q.as_str())
        .filter(|q| !q.is_empty())
        .map(str::to_owned)
        .collect();
    let empty = Vec::new();
    let chunks = meta["groundingChunks"].as_array().unwrap_or(&empty);
    let page = |i: &Value| {
        let web = &chunks.get(usize::try_from(i.as_u64()?).ok()?)?["web"];
        Some((text(web, "uri"), text(web, "title")))
    };
    let results = chunks
        .iter()
        .map(|c| SearchResult { url: text(&c["web"], "uri"), title: text(&c["web"], "title") })
        .collect();
    let mut citations = Vec::new();
    for support in meta["groundingSupports"].as_array().unwrap_or(&empty) {
        let cited = support["segment"]["text"].as_str().map(str::to_owned);
        for i in support["groundingChunkIndices"].as_array().unwrap_or(&empty) {
            if let Some((url, title)) = page(i) {
                citations.push(Citation { url, title, cited_text: cited.clone(), raw: None });
            }
        }
    }
    let search = WebSearch {
        id: format!("google_search_{n}"),
        queries,
        results,
        error: None,
        raw: Vec::new(),
    };
    Some((search, citations))
}

/// OpenRouter: a search made of the pages its answer cites (the stream shows no
/// search of its own).
pub(crate) fn cited_search(citations: &[Citation]) -> WebSearch {
    let mut results: Vec<SearchResult> = Vec::new();
    for c in citations {
        if !results.iter().any(|r| r.url == c.url) {
            results.push(SearchResult { url: c.url.clone(), title: c.title.clone() });
        }
    }
    WebSearch { id: "openrouter_web_search".to_owned(), results, ..WebSearch::default() }
}
