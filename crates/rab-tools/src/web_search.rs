//! The `web_search` tool: a search of the web that the model's provider runs on its
//! side (Anthropic's web search tool, OpenAI's `web_search`, Gemini's Google Search
//! grounding, OpenRouter's web search). rab declares it in the request; the search,
//! its results and the answer's citations come back in the reply, recorded on the tape
//! and billed per search. rab never runs it itself: a call that reaches rab (a model
//! without server search) is answered with an error. Where the current model has no
//! server search, or its API cannot keep to the domain rules, the tool is not offered
//! (see `rab_ai::search_unavailable`).

use rab_agent::{RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput};
use rab_ai::ServerTool;
use schemars::JsonSchema;
use serde::Deserialize;

/// The tool's name.
pub const NAME: &str = "web_search";

/// A web search by the provider, within domain lists.
#[derive(Clone, Debug, Default)]
pub struct WebSearch {
    allowed: Vec<String>,
    blocked: Vec<String>,
    max_uses: Option<u32>,
}

impl WebSearch {
    /// Searches anywhere but `blocked` (and only `allowed`, when it names any); at
    /// most `max_uses` searches a request.
    pub fn new(allowed: Vec<String>, blocked: Vec<String>, max_uses: Option<u32>) -> Self {
        Self { allowed, blocked, max_uses }
    }
}

/// Arguments of `web_search` (the provider's own tool takes them).
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct Args {
    /// What to search for.
    pub query: String,
}

impl Tool for WebSearch {
    type Args = Args;
    const NAME: &'static str = NAME;
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Domain,
        claude_names: &["WebSearch"],
        covered_by: &[],
        always_full: false,
    };

    fn description(&self) -> String {
        "Search the web for current information (documentation, releases, error \
         messages) and cite the pages used. Runs at the model provider."
            .to_owned()
    }

    fn server(&self) -> Option<ServerTool> {
        Some(ServerTool::WebSearch {
            allowed_domains: self.allowed.clone(),
            blocked_domains: self.blocked.clone(),
            max_uses: self.max_uses,
        })
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Model(format!(
            "web_search runs at the model's provider, and this model has none (searched for \
             {:?}); use web_fetch on a known address instead",
            args.query
        )))
    }
}
