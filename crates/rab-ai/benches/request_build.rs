//! What building one request costs as a conversation grows: the body for each wire
//! format, and for Anthropic the prefix fingerprint that decides which thinking goes
//! back (one pass over the history). The conversation is a tool-heavy session: each
//! turn a reply with thinking and a tool call, and a 2 KB tool result.
//!
//! Run: `cargo bench -p rab-ai --bench request_build`
#![allow(clippy::expect_used)]

use std::time::Instant;

use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Context, Message, Model, StopReason,
    StreamOptions, ThinkingLevel, ToolCall, ToolResultMessage, ToolSpec,
};
use serde_json::json;

fn model(api: Api) -> Model {
    let mut m = Model::custom("claude-sonnet-5-5", "anthropic", api, "http://localhost");
    m.reasoning = true;
    m.compat.thinking = match api {
        Api::AnthropicMessages => rab_ai::ThinkingFormat::AnthropicAdaptive,
        Api::OpenaiResponses | Api::OpenaiCompletions => rab_ai::ThinkingFormat::OpenaiEffort,
        Api::GoogleGenerativeAi => rab_ai::ThinkingFormat::GeminiLevel,
    };
    m.compat.system_messages = true;
    m.compat.tool_changes = true;
    m
}

/// A conversation of `turns` tool rounds whose Anthropic replies carry the fingerprint
/// of the request before them, as they would after a real session.
fn conversation(api: Api, turns: usize) -> Context {
    let tools: Vec<ToolSpec> = (0..25)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "Does one thing well; the description is as long as a real one. "
                .repeat(4),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            grammar: None,
            server: None,
        })
        .collect();
    let mut ctx = Context {
        system_prompt: "You are rab. ".repeat(400),
        messages: vec![Message::user("work through the repository")],
        tools,
    };
    let m = model(api);
    let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
    for t in 0..turns {
        // Fingerprints are computed incrementally here only for the last few turns;
        // earlier ones are left unknown, which costs the same pass.
        let prefix = if t + 3 >= turns {
            rab_ai::bench::build(&m, &ctx, &opts).expect("builds").1
        } else {
            None
        };
        let mut a = AssistantMessage::empty(api, "anthropic", "claude-sonnet-5-5");
        a.content.push(AssistantBlock::Thinking {
            thinking: "I should look at the next file before changing anything. ".repeat(6),
            signature: Some("EqQBCkYIBxgCKkD".repeat(20)),
            item_id: None,
            redacted: false,
        });
        a.content.push(AssistantBlock::ToolCall(ToolCall {
            id: format!("toolu_{t}"),
            name: "tool_1".into(),
            arguments: json!({"path": format!("src/file_{t}.rs")}),
            invalid_arguments: None,
            signature: None,
            item_id: None,
        }));
        a.stop_reason = StopReason::ToolUse;
        a.prefix_hash = prefix;
        ctx.messages.push(Message::Assistant(a));
        ctx.messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("toolu_{t}"),
            tool_name: "tool_1".into(),
            content: vec![Content::text("fn example() -> usize { 42 }\n".repeat(70))],
            is_error: false,
        }));
    }
    ctx
}

fn main() {
    println!("{:<22} {:>7} {:>9} {:>12} {:>10}", "wire", "turns", "body MB", "ms (median)", "MB/s");
    for turns in [50, 500] {
        for api in Api::ALL {
            let ctx = conversation(api, turns);
            let m = model(api);
            let opts = StreamOptions { thinking: ThinkingLevel::High, ..Default::default() };
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..9 {
                let start = Instant::now();
                let (body, _) = rab_ai::bench::build(&m, &ctx, &opts).expect("builds");
                times.push(start.elapsed().as_secs_f64());
                size = body.len();
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            println!(
                "{:<22} {:>7} {:>9.2} {:>12.2} {:>10.0}",
                api.as_str(),
                turns,
                size as f64 / 1e6,
                median * 1e3,
                size as f64 / median / 1e6
            );
        }
    }
}
