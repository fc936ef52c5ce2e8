//! Renders a scripted turn as the SSE events of each wire format, following the
//! providers' API references event by event, and renders their error bodies.

use serde_json::{Value, json};

use crate::Wire;
use crate::binding;
use crate::rules::Reply;
use crate::script::{ScriptedCall, Turn, signature_for, split_chars, split_n};
use crate::search;

/// One SSE event to write, optionally in several network writes.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The event bytes, blank line included.
    pub bytes: Vec<u8>,
    /// Number of separate writes the bytes are split into.
    pub pieces: usize,
}

fn frame(event: Option<&str>, data: &Value, crlf: bool) -> Frame {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut s = String::new();
    if let Some(e) = event {
        s.push_str("event: ");
        s.push_str(e);
        s.push_str(nl);
    }
    s.push_str("data: ");
    s.push_str(&data.to_string());
    s.push_str(nl);
    s.push_str(nl);
    Frame { bytes: s.into_bytes(), pieces: 1 }
}

fn raw_frame(text: &str) -> Frame {
    Frame { bytes: text.as_bytes().to_vec(), pieces: 1 }
}

/// The call id of the `k`-th call of turn `n`, unless the script gave one.
fn call_id(call: &ScriptedCall, prefix: &str, turn: usize, k: usize) -> String {
    call.id.clone().unwrap_or_else(|| format!("{prefix}{turn}_{k}"))
}

fn chunk_size(turn: &Turn) -> usize {
    turn.chunk_chars.unwrap_or(8)
}

fn fragments(turn: &Turn) -> usize {
    turn.arg_fragments.unwrap_or(3)
}

/// The events of a turn in the given wire format, for a request that asked for
/// nothing that shapes the reply.
pub fn render(wire: Wire, turn: &Turn, n: usize, model: &str) -> Vec<Frame> {
    render_reply(wire, turn, n, &Reply::plain(model))
}

/// The events of a turn shaped as the request asked (see [`Reply`]).
pub fn render_reply(wire: Wire, turn: &Turn, n: usize, reply: &Reply) -> Vec<Frame> {
    match wire {
        Wire::Anthropic => anthropic(turn, n, reply),
        Wire::OpenaiResponses => responses(turn, n, reply),
        Wire::OpenaiChat => chat(turn, n, reply),
        Wire::Gemini => gemini(turn, n, reply),
    }
}

fn anthropic(turn: &Turn, n: usize, reply: &Reply) -> Vec<Frame> {
    let u = turn.effective_usage();
    let mut message = json!({
        "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": reply.model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": u.input, "cache_creation_input_tokens": u.cache_write,
                  "cache_read_input_tokens": u.cache_read, "output_tokens": 1}});
    if let Some(t) = &reply.transformations {
        message["input_transformations"] = json!(t);
    }
    let mut out = vec![frame(
        Some("message_start"),
        &json!({"type": "message_start", "message": message}),
        false,
    )];
    out.push(frame(Some("ping"), &json!({"type": "ping"}), false));
    let mut index = 0;
    let mut block = |out: &mut Vec<Frame>, start: Value, deltas: Vec<Value>| {
        out.push(frame(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
            false,
        ));
        for d in deltas {
            out.push(frame(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
                false,
            ));
        }
        out.push(frame(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
            false,
        ));
        index += 1;
    };
    if let Some(thinking) = &turn.thinking {
        // With `display` omitted the text stays on the server: only the signature comes.
        let shown = if reply.omit_thinking_text { "" } else { thinking.as_str() };
        let mut deltas: Vec<Value> = if shown.is_empty() {
            Vec::new()
        } else {
            split_chars(shown, chunk_size(turn))
                .into_iter()
                .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                .collect()
        };
        let signature = match &reply.prefix {
            Some(prefix) => binding::sign(shown, prefix),
            None => signature_for(shown),
        };
        deltas.push(json!({"type": "signature_delta", "signature": signature}));
        block(&mut out, json!({"type": "thinking", "thinking": "", "signature": ""}), deltas);
    }
    let found = search::found(turn, reply);
    if let Some((s, pages)) = &found {
        for (start, deltas) in search::anthropic_blocks(s, pages, n) {
            block(&mut out, start, deltas);
        }
    }
    if let Some(text) = &turn.text {
        let mut deltas: Vec<Value> = found
            .as_ref()
            .and_then(|(_, pages)| search::anthropic_citation(pages, text, n))
            .into_iter()
            .collect();
        deltas.extend(
            split_chars(text, chunk_size(turn))
                .into_iter()
                .map(|p| json!({"type": "text_delta", "text": p})),
        );
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (k, call) in turn.tool_calls.iter().enumerate() {
        let deltas = split_n(&call.argument_text(), fragments(turn))
            .into_iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        let start = json!({"type": "tool_use", "id": call_id(call, "toolu_", n, k),
                           "name": call.name, "input": {}});
        block(&mut out, start, deltas);
    }
    let searches = u64::from(found.is_some());
    let natural = if turn.tool_calls.is_empty() { "end_turn" } else { "tool_use" };
    let reason = match turn.stop_reason.as_deref() {
        Some("length") => "max_tokens",
        Some("tool_use") => "tool_use",
        Some(_) | None => natural,
    };
    out.push(frame(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
                "usage": {"output_tokens": u.output,
                          "output_tokens_details": {"thinking_tokens": u.reasoning},
                          "server_tool_use": {"web_search_requests": searches}}}),
        false,
    ));
    out.push(frame(Some("message_stop"), &json!({"type": "message_stop"}), false));
    out
}

fn responses(turn: &Turn, n: usize, reply: &Reply) -> Vec<Frame> {
    let (model, phase) = (reply.model.as_str(), reply.phase);
    let u = turn.effective_usage();
    let id = format!("resp_fake_{n}");
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut ev = |out: &mut Vec<Frame>, kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        out.push(frame(Some(kind), &data, false));
    };
    let shell = json!({"id": id, "object": "response", "status": "in_progress", "model": model, "output": []});
    ev(&mut out, "response.created", json!({"response": shell}));
    ev(&mut out, "response.in_progress", json!({"response": shell}));
    let mut output: Vec<Value> = Vec::new();
    if let Some(thinking) = &turn.thinking {
        let oi = output.len();
        let item_id = format!("rs_fake_{n}");
        ev(
            &mut out,
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": item_id, "type": "reasoning", "summary": []}}),
        );
        ev(
            &mut out,
            "response.reasoning_summary_part.added",
            json!({"item_id": item_id, "output_index": oi, "summary_index": 0,
                  "part": {"type": "summary_text", "text": ""}}),
        );
        for p in split_chars(thinking, chunk_size(turn)) {
            ev(
                &mut out,
                "response.reasoning_summary_text.delta",
                json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "delta": p}),
            );
        }
        ev(
            &mut out,
            "response.reasoning_summary_text.done",
            json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "text": thinking}),
        );
        ev(
            &mut out,
            "response.reasoning_summary_part.done",
            json!({"item_id": item_id, "output_index": oi, "summary_index": 0,
                  "part": {"type": "summary_text", "text": thinking}}),
        );
        let item = json!({"id": item_id, "type": "reasoning",
                          "summary": [{"type": "summary_text", "text": thinking}],
                          "encrypted_content": signature_for(thinking)});
        ev(&mut out, "response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }
    let found = search::found(turn, reply);
    if let (Some((s, pages)), Some(offered)) = (&found, &reply.search) {
        let oi = output.len();
        let ws = format!("ws_fake_{n}");
        ev(
            &mut out,
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": ws, "type": "web_search_call", "status": "in_progress"}}),
        );
        for step in ["in_progress", "searching", "completed"] {
            ev(
                &mut out,
                &format!("response.web_search_call.{step}"),
                json!({"item_id": ws, "output_index": oi}),
            );
        }
        let item = search::responses_item(s, pages, offered, n);
        ev(&mut out, "response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }
    if let Some(text) = &turn.text {
        let oi = output.len();
        let item_id = format!("msg_fake_{n}");
        let annotations: Vec<Value> = found
            .as_ref()
            .and_then(|(_, pages)| search::responses_annotation(pages, text))
            .into_iter()
            .collect();
        ev(
            &mut out,
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": item_id, "type": "message", "status": "in_progress",
                                               "role": "assistant", "content": []}}),
        );
        ev(
            &mut out,
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": oi, "content_index": 0,
                  "part": {"type": "output_text", "text": "", "annotations": []}}),
        );
        for p in split_chars(text, chunk_size(turn)) {
            ev(
                &mut out,
                "response.output_text.delta",
                json!({"item_id": item_id, "output_index": oi, "content_index": 0, "delta": p, "logprobs": []}),
            );
        }
        for (k, a) in annotations.iter().enumerate() {
            ev(
                &mut out,
                "response.output_text.annotation.added",
                json!({"item_id": item_id, "output_index": oi, "content_index": 0,
                       "annotation_index": k, "annotation": a}),
            );
        }
        ev(
            &mut out,
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": oi, "content_index": 0, "text": text, "logprobs": []}),
        );
        let part = json!({"type": "output_text", "text": text, "annotations": annotations});
        ev(
            &mut out,
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": oi, "content_index": 0, "part": part}),
        );
        let mut item = json!({"id": item_id, "type": "message", "status": "completed", "role": "assistant",
                          "content": [part]});
        if phase {
            let label = if turn.tool_calls.is_empty() { "final_answer" } else { "commentary" };
            item["phase"] = json!(label);
        }
        ev(&mut out, "response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }
    for (k, call) in turn.tool_calls.iter().enumerate() {
        let oi = output.len();
        let cid = call_id(call, "call_", n, k);
        if let Some(input) = &call.input {
            // A custom (free-form) tool call: its input streams as raw text.
            let item_id = format!("ctc_fake_{n}_{k}");
            ev(
                &mut out,
                "response.output_item.added",
                json!({"output_index": oi, "item": {"id": item_id, "type": "custom_tool_call",
                      "status": "in_progress", "call_id": cid, "name": call.name, "input": ""}}),
            );
            for p in split_n(input, fragments(turn)) {
                ev(
                    &mut out,
                    "response.custom_tool_call_input.delta",
                    json!({"item_id": item_id, "output_index": oi, "delta": p}),
                );
            }
            ev(
                &mut out,
                "response.custom_tool_call_input.done",
                json!({"item_id": item_id, "output_index": oi, "input": input}),
            );
            let item = json!({"id": item_id, "type": "custom_tool_call", "status": "completed",
                              "call_id": cid, "name": call.name, "input": input});
            ev(&mut out, "response.output_item.done", json!({"output_index": oi, "item": item}));
            output.push(item);
            continue;
        }
        let item_id = format!("fc_fake_{n}_{k}");
        let args = call.argument_text();
        ev(
            &mut out,
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": item_id, "type": "function_call", "status": "in_progress",
                                               "call_id": cid, "name": call.name, "arguments": ""}}),
        );
        for p in split_n(&args, fragments(turn)) {
            ev(
                &mut out,
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": oi, "delta": p}),
            );
        }
        ev(
            &mut out,
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": oi, "arguments": args}),
        );
        let item = json!({"id": item_id, "type": "function_call", "status": "completed",
                          "call_id": cid, "name": call.name, "arguments": args});
        ev(&mut out, "response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }
    let incomplete = turn.stop_reason.as_deref() == Some("length");
    let usage = json!({
        "input_tokens": u.input + u.cache_read + u.cache_write,
        "input_tokens_details": {"cached_tokens": u.cache_read, "cache_write_tokens": u.cache_write},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": u.input + u.cache_read + u.cache_write + u.output,
    });
    let (kind, status, details) = if incomplete {
        ("response.incomplete", "incomplete", json!({"reason": "max_output_tokens"}))
    } else {
        ("response.completed", "completed", Value::Null)
    };
    ev(
        &mut out,
        kind,
        json!({"response": {"id": id, "object": "response", "status": status, "model": model,
                                          "output": output, "incomplete_details": details, "usage": usage}}),
    );
    out
}

fn chat(turn: &Turn, n: usize, reply: &Reply) -> Vec<Frame> {
    let (model, details) = (reply.model.as_str(), reply.reasoning_details);
    let u = turn.effective_usage();
    let id = format!("chatcmpl-fake-{n}");
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut v = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                           "model": model, "system_fingerprint": "fp_fake", "choices": choices});
        if let Some(usage) = usage {
            v["usage"] = usage;
        }
        frame(None, &v, false)
    };
    let delta =
        |d: Value| json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": null}]);
    let mut out = vec![chunk(delta(json!({"role": "assistant", "content": ""})), None)];
    let mistral = turn.has_quirk("mistralThinking");
    let mut text_pieces: Vec<String> =
        turn.text.as_deref().map(|t| split_chars(t, chunk_size(turn))).unwrap_or_default();
    if let (Some(thinking), true) = (&turn.thinking, mistral) {
        // docs.mistral.ai/capabilities/reasoning ("Streaming"): thinking arrives as a
        // list holding a thinking chunk; one event closes it and opens the text; the
        // answer then goes on as plain strings.
        let think =
            |p: &str| json!({"type": "thinking", "thinking": [{"type": "text", "text": p}]});
        let pieces = split_chars(thinking, chunk_size(turn));
        let (last, rest) = pieces.split_last().map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
        for p in rest {
            out.push(chunk(delta(json!({"content": [think(p)]})), None));
        }
        let mut closing = vec![think(last)];
        if !text_pieces.is_empty() {
            closing.push(json!({"type": "text", "text": text_pieces.remove(0)}));
        }
        out.push(chunk(delta(json!({"content": closing})), None));
    } else if let Some(thinking) = &turn.thinking {
        let field =
            if turn.has_quirk("reasoningField") { "reasoning" } else { "reasoning_content" };
        for p in split_chars(thinking, chunk_size(turn)) {
            out.push(chunk(delta(json!({ field: p })), None));
        }
    }
    for p in text_pieces {
        out.push(chunk(delta(json!({"content": p})), None));
    }
    // OpenRouter: the pages a web search found, as the message's annotations.
    if let (Some((_, pages)), Some(text)) = (search::found(turn, reply), &turn.text) {
        out.push(chunk(
            delta(json!({"annotations": search::chat_annotations(&pages, text)})),
            None,
        ));
    }
    if details && !turn.tool_calls.is_empty() {
        // OpenRouter streams Gemini's reasoning as typed blocks, here an encrypted one in
        // two pieces merged by `index`.
        let block = |data: &str, first: bool| {
            let mut b = json!({"type": "reasoning.encrypted", "data": data, "index": 0});
            if first {
                b["id"] = json!(format!("tool_{}", call_id(&turn.tool_calls[0], "call_", n, 0)));
                b["format"] = json!("google-gemini-v1");
            }
            b
        };
        out.push(chunk(
            delta(json!({"reasoning_details": [block(&format!("sig-{n}-"), true)]})),
            None,
        ));
        out.push(chunk(delta(json!({"reasoning_details": [block("end", false)]})), None));
    }
    let no_index = turn.has_quirk("noIndex");
    let empty_id = turn.has_quirk("emptyIdLater");
    for (k, call) in turn.tool_calls.iter().enumerate() {
        let cid = call_id(call, "call_", n, k);
        for (j, p) in split_n(&call.argument_text(), fragments(turn)).into_iter().enumerate() {
            let mut tc = if j == 0 {
                json!({"id": cid, "type": "function", "function": {"name": call.name, "arguments": p}})
            } else if empty_id {
                json!({"id": "", "function": {"arguments": p}})
            } else {
                json!({"function": {"arguments": p}})
            };
            if !no_index {
                tc["index"] = json!(k);
            }
            out.push(chunk(delta(json!({"tool_calls": [tc]})), None));
        }
    }
    let natural = if turn.tool_calls.is_empty() { "stop" } else { "tool_calls" };
    let reason = match turn.stop_reason.as_deref() {
        Some("length") => "length",
        Some(_) | None => natural,
    };
    let prompt = u.input + u.cache_read + u.cache_write;
    let mut usage = json!({
        "prompt_tokens": prompt, "completion_tokens": u.output, "total_tokens": prompt + u.output,
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    });
    if turn.has_quirk("deepseekUsage") {
        usage["prompt_cache_hit_tokens"] = json!(u.cache_read);
        usage["prompt_cache_miss_tokens"] = json!(prompt - u.cache_read);
    } else {
        usage["prompt_tokens_details"] = json!({"cached_tokens": u.cache_read});
        if u.cache_write > 0 {
            usage["prompt_tokens_details"]["cache_write_tokens"] = json!(u.cache_write);
        }
    }
    let finish = json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}]);
    if turn.has_quirk("usageInFinishChunk") {
        out.push(chunk(finish, Some(usage)));
    } else {
        out.push(chunk(finish, None));
        if !turn.has_quirk("noUsage") {
            out.push(chunk(json!([]), Some(usage)));
        }
    }
    if !turn.has_quirk("noDone") {
        out.push(raw_frame("data: [DONE]\n\n"));
    }
    out
}

fn gemini(turn: &Turn, n: usize, reply: &Reply) -> Vec<Frame> {
    let (model, sign_calls) = (reply.model.as_str(), reply.sign_calls);
    let u = turn.effective_usage();
    // Grounding comes with the last chunk, for the whole answer.
    let grounding = search::found(turn, reply).map(|(s, pages)| {
        search::gemini_metadata(s, &pages, turn.text.as_deref().unwrap_or_default())
    });
    let chunk = |parts: Value, finish: Option<&str>, usage: Option<Value>| {
        let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            cand["finishReason"] = json!(f);
            if let Some(g) = &grounding {
                cand["groundingMetadata"] = g.clone();
            }
        }
        let mut v = json!({"candidates": [cand], "modelVersion": model,
                           "responseId": format!("gemini-fake-{n}")});
        if let Some(usage) = usage {
            v["usageMetadata"] = usage;
        }
        frame(None, &v, true)
    };
    let mut out = Vec::new();
    let mut signature = None;
    if let Some(thinking) = &turn.thinking {
        for p in split_chars(thinking, chunk_size(turn)) {
            out.push(chunk(json!([{"text": p, "thought": true}]), None, None));
        }
        signature = Some(signature_for(thinking));
    }
    if let Some(text) = &turn.text {
        for p in split_chars(text, chunk_size(turn)) {
            let mut part = json!({"text": p});
            if turn.tool_calls.is_empty()
                && let Some(sig) = signature.take()
            {
                part["thoughtSignature"] = json!(sig);
            }
            out.push(chunk(json!([part]), None, None));
        }
    }
    if sign_calls && signature.is_none() && !turn.tool_calls.is_empty() {
        // Gemini 3 and later sign the first function call of every step.
        signature = Some(signature_for(&format!("call-{n}")));
    }
    for call in &turn.tool_calls {
        let args: Value = match &call.raw_arguments {
            // Gemini sends args as an object; a "raw" script value is sent as a string to
            // imitate a malformed call.
            Some(raw) => json!(raw),
            None if call.arguments.is_null() => json!({}),
            None => call.arguments.clone(),
        };
        let mut fc = json!({"name": call.name, "args": args});
        if let Some(id) = &call.id {
            fc["id"] = json!(id);
        }
        let mut part = json!({"functionCall": fc});
        if let Some(sig) = signature.take() {
            part["thoughtSignature"] = json!(sig);
        }
        let mut f = chunk(json!([part]), None, None);
        // The Gemini API sends a call whole; split its event over several network
        // writes so the client's reassembly across reads is exercised.
        f.pieces = fragments(turn);
        out.push(f);
    }
    let finish = match turn.stop_reason.as_deref() {
        Some("length") => "MAX_TOKENS",
        Some(_) | None => "STOP",
    };
    let usage = json!({
        "promptTokenCount": u.input + u.cache_read,
        "candidatesTokenCount": u.output - u.reasoning.min(u.output),
        "cachedContentTokenCount": u.cache_read,
        "thoughtsTokenCount": u.reasoning,
        "totalTokenCount": u.input + u.cache_read + u.output,
    });
    out.push(chunk(json!([{"text": ""}]), Some(finish), Some(usage)));
    out
}

/// The wire format's in-stream error event.
pub fn error_event(wire: Wire) -> Frame {
    match wire {
        Wire::Anthropic => frame(
            Some("error"),
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            false,
        ),
        Wire::OpenaiResponses => frame(
            Some("error"),
            &json!({"type": "error", "code": "server_error", "message": "The server had an error", "param": null}),
            false,
        ),
        Wire::OpenaiChat => {
            frame(None, &json!({"error": {"message": "Upstream error", "code": 502}}), false)
        }
        Wire::Gemini => frame(
            None,
            &json!({"error": {"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"}}),
            true,
        ),
    }
}

/// A line that is not valid for the wire format: JSON cut off mid-object.
pub fn malformed_event(wire: Wire) -> Frame {
    match wire {
        Wire::Anthropic => {
            raw_frame("event: content_block_delta\ndata: {\"type\": this is not json\n\n")
        }
        Wire::OpenaiResponses => {
            raw_frame("event: response.output_text.delta\ndata: {\"type\": this is not json\n\n")
        }
        Wire::OpenaiChat | Wire::Gemini => raw_frame("data: {\"choices\": this is not json\n\n"),
    }
}

fn default_message(wire: Wire, status: u16) -> &'static str {
    match (status, wire) {
        (401, Wire::Anthropic) => "invalid x-api-key",
        (401, Wire::OpenaiResponses | Wire::OpenaiChat) => "Incorrect API key provided",
        (401, Wire::Gemini) => "API key not valid. Please pass a valid API key.",
        (403, _) => "Permission denied",
        (404, _) => "model not found",
        (429, _) => "Rate limit exceeded",
        (529, _) => "Overloaded",
        (500, _) => "Internal server error",
        (502, _) => "Bad gateway",
        (503, _) => "Service unavailable",
        _ => "fake-llm fault",
    }
}

/// An HTTP error body in the wire format's documented shape.
pub fn error_body(wire: Wire, status: u16, message: Option<&str>) -> String {
    let message = message.unwrap_or_else(|| default_message(wire, status));
    let body = match wire {
        Wire::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Wire::OpenaiResponses | Wire::OpenaiChat => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", json!("invalid_api_key")),
                429 => ("requests", json!("rate_limit_exceeded")),
                400 | 404 => ("invalid_request_error", Value::Null),
                _ => ("server_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Wire::Gemini => {
            let s = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status, "message": message, "status": s}})
        }
    };
    body.to_string()
}
