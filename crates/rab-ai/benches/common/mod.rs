//! What the wall-time benches and the instruction-count gate (`callgrind.rs`) share:
//! the model, the tool-heavy conversation and the long streamed reply they measure.
// Each bench uses a part of this file.
#![allow(dead_code, clippy::expect_used)]

use rab_ai::{
    Api, AssistantBlock, AssistantMessage, Content, Context, Message, Model, StopReason,
    StreamOptions, ThinkingLevel, ToolCall, ToolResultMessage, ToolSpec,
};
use rab_fake_llm::{Turn, Wire, render};
use serde_json::json;

/// A reasoning model of the wire format `api` that takes system messages and tool changes.
pub fn model(api: Api) -> Model {
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
pub fn conversation(api: Api, turns: usize) -> Context {
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
        memo: None,
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

/// A long streamed reply of `sentences` sentences (a tenth as many of thinking), as
/// rab-fake-llm serves it, in deltas of `delta_chars` characters.
pub fn stream(wire: Wire, delta_chars: usize, sentences: usize) -> Vec<u8> {
    let sentence = "The quick brown fox jumps over the lazy dog; fn main() { println!(\"hi\"); } ";
    let text: String = sentence.repeat(sentences);
    let mut turn = Turn::text(text).with_thinking(sentence.repeat(sentences / 10));
    turn.chunk_chars = Some(delta_chars);
    render(wire, &turn, 1, "bench-model").into_iter().flat_map(|f| f.bytes).collect()
}
