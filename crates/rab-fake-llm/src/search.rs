//! Web search as each provider runs it on its side: the tool a request declares, the
//! rules on it, and the blocks, items or metadata of a search in the reply
//! (Anthropic's web search tool, OpenAI's `web_search`, Gemini's Google Search
//! grounding, OpenRouter's `openrouter:web_search`; the shapes are the providers' API
//! references and SDK types, read 2026-11-28).

use serde_json::{Value, json};

use crate::Wire;
use crate::inspect::RecordedRequest;
use crate::script::ScriptedSearch;

/// The search settings a request declared, when it offers a search tool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Offered {
    /// Domains a search may reach (empty: any).
    pub allowed: Vec<String>,
    /// Domains a search must not reach.
    pub blocked: Vec<String>,
    /// OpenAI: the request asked for each call's sources (`include`).
    pub sources: bool,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The search tool `req` offers, checked against its provider's rules: `Ok(None)` when
/// it offers none, the 400 message when the declaration is invalid.
pub(crate) fn offered(wire: Wire, req: &RecordedRequest) -> Result<Option<Offered>, String> {
    let empty = Vec::new();
    let tools = req.body["tools"].as_array().unwrap_or(&empty);
    match wire {
        Wire::Anthropic => {
            let Some(t) = tools
                .iter()
                .find(|t| t["type"].as_str().is_some_and(|k| k.starts_with("web_search_")))
            else {
                return Ok(None);
            };
            if t["type"] != "web_search_20250305" && t["type"] != "web_search_20260209" {
                return Err(format!("tools: unknown web search tool version {}", t["type"]));
            }
            if t["name"] != "web_search" {
                return Err("tools: the web search tool's name must be \"web_search\"".into());
            }
            if t.get("allowed_domains").is_some() && t.get("blocked_domains").is_some() {
                return Err(
                    "tools.web_search: allowed_domains cannot be used alongside blocked_domains"
                        .into(),
                );
            }
            let o = Offered {
                allowed: strings(&t["allowed_domains"]),
                blocked: strings(&t["blocked_domains"]),
                sources: true,
            };
            if let Some(d) = o.allowed.iter().chain(&o.blocked).find(|d| d.contains("://")) {
                return Err(format!("tools.web_search: domain {d:?} must not have a scheme"));
            }
            Ok(Some(o))
        }
        Wire::OpenaiResponses => {
            let Some(t) = tools.iter().find(|t| t["type"] == "web_search") else {
                return Ok(None);
            };
            if t["filters"].get("blocked_domains").is_some() {
                return Err("tools.web_search.filters: Unknown parameter: 'blocked_domains'".into());
            }
            let sources =
                strings(&req.body["include"]).iter().any(|i| i == "web_search_call.action.sources");
            Ok(Some(Offered {
                allowed: strings(&t["filters"]["allowed_domains"]),
                blocked: Vec::new(),
                sources,
            }))
        }
        Wire::Gemini => {
            let has = tools
                .iter()
                .any(|t| t.get("google_search").is_some() || t.get("googleSearch").is_some());
            Ok(has.then(|| Offered { sources: true, ..Offered::default() }))
        }
        Wire::OpenaiChat => {
            let Some(t) = tools.iter().find(|t| t["type"] == "openrouter:web_search") else {
                return Ok(None);
            };
            let p = &t["parameters"];
            if p.get("allowed_domains").is_some() && p.get("excluded_domains").is_some() {
                return Err(
                    "tools.openrouter:web_search: allowed_domains and excluded_domains cannot be combined"
                        .into(),
                );
            }
            Ok(Some(Offered {
                allowed: strings(&p["allowed_domains"]),
                blocked: strings(&p["excluded_domains"]),
                sources: true,
            }))
        }
    }
}

/// Whether a page may be searched under `offered`'s domain lists (a domain covers its
/// subdomains).
fn reachable(url: &str, offered: &Offered) -> bool {
    let host = url.split("://").nth(1).unwrap_or(url).split(['/', ':']).next().unwrap_or("");
    let covers = |d: &String| host == d || host.ends_with(&format!(".{d}"));
    (offered.allowed.is_empty() || offered.allowed.iter().any(covers))
        && !offered.blocked.iter().any(covers)
}

/// The pages a search returns under the request's domain lists.
pub(crate) fn pages(search: &ScriptedSearch, offered: &Offered) -> Vec<(String, String)> {
    search
        .results
        .iter()
        .filter(|p| reachable(&p.url, offered))
        .map(|p| (p.url.clone(), p.title.clone()))
        .collect()
}

/// The turn's search and the pages it finds, when the turn searches and the request
/// offers search.
pub(crate) fn found<'a>(
    turn: &'a crate::script::Turn,
    reply: &crate::rules::Reply,
) -> Option<(&'a ScriptedSearch, Vec<(String, String)>)> {
    let (search, offered) = (turn.search.as_ref()?, reply.search.as_ref()?);
    Some((search, pages(search, offered)))
}

/// Anthropic: the `server_tool_use` block's start and its input deltas, and the
/// `web_search_tool_result` block.
pub(crate) fn anthropic_blocks(
    search: &ScriptedSearch,
    pages: &[(String, String)],
    n: usize,
) -> [(Value, Vec<Value>); 2] {
    let id = format!("srvtoolu_fake_{n}");
    let input = json!({"query": search.query}).to_string();
    let (a, b) = input.split_at(input.len() / 2);
    let use_block = json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {}});
    let deltas =
        [a, b].iter().map(|p| json!({"type": "input_json_delta", "partial_json": p})).collect();
    let results: Vec<Value> = pages
        .iter()
        .enumerate()
        .map(|(k, (url, title))| {
            json!({"type": "web_search_result", "url": url, "title": title,
                   "encrypted_content": format!("enc_{n}_{k}"), "page_age": null})
        })
        .collect();
    let result = json!({"type": "web_search_tool_result", "tool_use_id": id, "content": results});
    [(use_block, deltas), (result, Vec::new())]
}

/// Anthropic: the citation of the first page, as a `citations_delta`.
pub(crate) fn anthropic_citation(
    pages: &[(String, String)],
    text: &str,
    n: usize,
) -> Option<Value> {
    let (url, title) = pages.first()?;
    Some(json!({"type": "citations_delta", "citation": {
        "type": "web_search_result_location", "url": url, "title": title,
        "encrypted_index": format!("idx_{n}_0"), "cited_text": text}}))
}

/// OpenAI: the `web_search_call` item when done (sources only when asked for).
pub(crate) fn responses_item(
    search: &ScriptedSearch,
    pages: &[(String, String)],
    offered: &Offered,
    n: usize,
) -> Value {
    let mut action = json!({"type": "search", "query": search.query});
    if offered.sources {
        action["sources"] =
            pages.iter().map(|(url, _)| json!({"type": "url", "url": url})).collect();
    }
    json!({"id": format!("ws_fake_{n}"), "type": "web_search_call", "status": "completed",
           "action": action})
}

/// OpenAI: the `url_citation` annotation of the first page over the whole text.
pub(crate) fn responses_annotation(pages: &[(String, String)], text: &str) -> Option<Value> {
    let (url, title) = pages.first()?;
    Some(json!({"type": "url_citation", "start_index": 0,
                "end_index": text.chars().count(), "url": url, "title": title}))
}

/// Gemini: the candidate's `groundingMetadata` (segment offsets in bytes).
pub(crate) fn gemini_metadata(
    search: &ScriptedSearch,
    pages: &[(String, String)],
    text: &str,
) -> Value {
    let chunks: Vec<Value> =
        pages.iter().map(|(url, title)| json!({"web": {"uri": url, "title": title}})).collect();
    let supports = if pages.is_empty() {
        Vec::new()
    } else {
        vec![json!({"segment": {"startIndex": 0, "endIndex": text.len(), "text": text},
                    "groundingChunkIndices": [0]})]
    };
    json!({"webSearchQueries": [search.query], "groundingChunks": chunks,
           "groundingSupports": supports,
           "searchEntryPoint": {"renderedContent": "<div>Google Search</div>"}})
}

/// OpenRouter: the message's `annotations` (nested `url_citation`).
pub(crate) fn chat_annotations(pages: &[(String, String)], text: &str) -> Value {
    pages
        .iter()
        .map(|(url, title)| {
            json!({"type": "url_citation", "url_citation": {
                "url": url, "title": title, "content": format!("About {title}."),
                "start_index": 0, "end_index": text.chars().count()}})
        })
        .collect()
}

/// The history rules of a replayed search: Anthropic's result block follows its
/// `server_tool_use` with the same id and keeps its `encrypted_content`, and a
/// citation keeps its `encrypted_index`.
pub(crate) fn check_history(wire: Wire, body: &Value) -> Result<(), String> {
    if wire != Wire::Anthropic {
        return Ok(());
    }
    let empty = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap_or(&empty).iter().enumerate() {
        let blocks = m["content"].as_array().unwrap_or(&empty);
        let mut uses: Vec<&str> = Vec::new();
        for (j, b) in blocks.iter().enumerate() {
            match b["type"].as_str() {
                Some("server_tool_use") => uses.push(b["id"].as_str().unwrap_or_default()),
                Some("web_search_tool_result") => {
                    let id = b["tool_use_id"].as_str().unwrap_or_default();
                    if !uses.contains(&id) {
                        return Err(format!(
                            "messages.{i}.content.{j}: web_search_tool_result {id} has no server_tool_use before it"
                        ));
                    }
                    let results = b["content"].as_array().unwrap_or(&empty);
                    if results.iter().any(|r| !r["encrypted_content"].is_string()) {
                        return Err(format!(
                            "messages.{i}.content.{j}.content: encrypted_content: Field required"
                        ));
                    }
                }
                Some("text") => {
                    for c in b["citations"].as_array().unwrap_or(&empty) {
                        if !c["encrypted_index"].is_string() {
                            return Err(format!(
                                "messages.{i}.content.{j}.citations: encrypted_index: Field required"
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(wire: Wire, body: Value) -> RecordedRequest {
        RecordedRequest {
            wire: Some(wire),
            method: "POST".into(),
            path: String::new(),
            headers: Vec::new(),
            body,
            raw: Vec::new(),
            status: 200,
            transformations: Vec::new(),
        }
    }

    #[test]
    fn each_api_refuses_what_its_reference_refuses() {
        let both = json!({"tools": [{"type": "web_search_20250305", "name": "web_search",
            "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]}]});
        let e = offered(Wire::Anthropic, &req(Wire::Anthropic, both)).unwrap_err();
        assert!(e.contains("cannot be used alongside"), "{e}");
        let scheme = json!({"tools": [{"type": "web_search_20250305", "name": "web_search",
            "blocked_domains": ["https://b.org"]}]});
        assert!(offered(Wire::Anthropic, &req(Wire::Anthropic, scheme)).is_err());
        let blocked =
            json!({"tools": [{"type": "web_search", "filters": {"blocked_domains": ["b.org"]}}]});
        assert!(offered(Wire::OpenaiResponses, &req(Wire::OpenaiResponses, blocked)).is_err());
        let none = json!({"tools": [{"type": "function", "name": "read"}]});
        assert_eq!(offered(Wire::OpenaiResponses, &req(Wire::OpenaiResponses, none)), Ok(None));
    }

    #[test]
    fn a_replayed_search_must_come_back_whole() {
        let result = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
            "content": [{"type": "web_search_result", "url": "https://a.org", "title": "A",
                         "encrypted_content": "enc"}]});
        let lone = json!({"messages": [{"role": "assistant", "content": [result.clone()]}]});
        let e = check_history(Wire::Anthropic, &lone).unwrap_err();
        assert!(e.contains("no server_tool_use before it"), "{e}");
        let call = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                          "input": {"query": "a"}});
        let uncited = json!({"type": "text", "text": "A.", "citations": [
            {"type": "web_search_result_location", "url": "https://a.org", "cited_text": "A"}]});
        let body = json!({"messages": [{"role": "assistant", "content": [call, result, uncited]}]});
        let e = check_history(Wire::Anthropic, &body).unwrap_err();
        assert!(e.contains("encrypted_index"), "{e}");
    }

    #[test]
    fn pages_outside_the_domain_lists_are_not_found() {
        let search = ScriptedSearch {
            query: "q".into(),
            results: vec![
                crate::script::ScriptedPage { url: "https://docs.rs/x".into(), title: "x".into() },
                crate::script::ScriptedPage {
                    url: "https://sub.example.org/y".into(),
                    title: "y".into(),
                },
            ],
        };
        let blocked = Offered { blocked: vec!["example.org".into()], ..Offered::default() };
        assert_eq!(pages(&search, &blocked).len(), 1);
        let allowed = Offered { allowed: vec!["example.org".into()], ..Offered::default() };
        assert_eq!(pages(&search, &allowed)[0].0, "https://sub.example.org/y");
    }
}
