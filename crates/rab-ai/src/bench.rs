//! Hooks for the decoding benchmark and the fuzz targets: runs recorded SSE bytes
//! through the same decoder path the HTTP driver uses, without a network. Not part of
//! the stable API.

use crate::assemble::Builder;
use crate::model::{Api, Model};
use crate::provider::{Decoder, StreamOptions, WireError};
use crate::sse::{FeedError, SseDecoder};
use crate::types::{AssistantMessage, Context, StopReason};

/// A fresh decoder of the wire format `api`.
fn decoder(api: Api) -> Box<dyn Decoder> {
    match api {
        Api::AnthropicMessages => Box::new(crate::anthropic::AnthropicDecoder::default()),
        Api::OpenaiResponses => Box::new(crate::openai_responses::ResponsesDecoder::default()),
        Api::OpenaiCompletions => Box::new(crate::openai_chat::ChatDecoder::default()),
        Api::GoogleGenerativeAi => Box::new(crate::gemini::GeminiDecoder::default()),
    }
}

/// Decodes a complete recorded stream of the given wire format, fed in chunks of
/// `chunk` bytes, and returns the assembled message and the number of events emitted.
pub fn decode(api: Api, bytes: &[u8], chunk: usize) -> Result<(AssistantMessage, usize), String> {
    let model = Model::custom("bench", "bench", api, "http://localhost");
    let mut builder = Builder::new(&model);
    let mut decoder = decoder(api);
    let mut sse = SseDecoder::new();
    let mut events = 0;
    for piece in bytes.chunks(chunk.max(1)) {
        sse.feed(piece, |ev| decoder.event(ev, &mut builder)).map_err(|e| match e {
            FeedError::Sse(e) => e.to_string(),
            FeedError::Handler(e) => format!("{e:?}"),
        })?;
        events += builder.take_events().count();
    }
    decoder.end(&mut builder).map_err(|e| format!("{e:?}"))?;
    let message = builder.finish();
    events += builder.take_events().count();
    Ok((message, events))
}

/// What [`replay`] ends with: the finished message, or the error text and the partial
/// message an `Error` event would carry.
pub type Replayed = Result<AssistantMessage, (String, AssistantMessage)>;

/// Runs the body of a streamed response through the whole path the HTTP driver takes
/// after a 200, fed in pieces of `chunk` bytes: SSE decoding, the adapter's decoder, the
/// end-of-stream check (naming an event cut off at the end), then the finished message
/// or the partial one of a failure. Returns the number of events emitted on the way and
/// how it ended; any bytes give one or the other, never a panic.
pub fn replay(api: Api, bytes: &[u8], chunk: usize) -> (usize, Replayed) {
    let model = Model::custom("replay", "replay", api, "http://localhost");
    let mut builder = Builder::new(&model);
    let mut decoder = decoder(api);
    let mut sse = SseDecoder::new();
    let mut events = 0;
    fn failed(builder: &mut Builder, events: usize, message: String) -> (usize, Replayed) {
        let partial = builder.partial(StopReason::Error, &message);
        (events, Err((message, partial)))
    }
    for piece in bytes.chunks(chunk.max(1)) {
        let fed = sse.feed(piece, |ev| decoder.event(ev, &mut builder));
        events += builder.take_events().count();
        match fed {
            Ok(()) => {}
            Err(FeedError::Sse(e)) => return failed(&mut builder, events, e.to_string()),
            Err(FeedError::Handler(e)) => return failed(&mut builder, events, format!("{e:?}")),
        }
    }
    let had_tail = sse.finish();
    let ended = decoder.end(&mut builder);
    events += builder.take_events().count();
    match ended {
        Ok(()) => {
            let message = builder.finish();
            events += builder.take_events().count();
            (events, Ok(message))
        }
        Err(WireError::Incomplete(m)) if had_tail => {
            failed(&mut builder, events, format!("{m} (last event cut off)"))
        }
        Err(e) => failed(&mut builder, events, format!("{e:?}")),
    }
}

/// Builds the request body the adapter of `model.api` would send for `context` (with
/// the prefix fingerprint an Anthropic reply would record), without a network.
pub fn build(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<(Vec<u8>, Option<String>), String> {
    let wire: &dyn crate::provider::Wire = match model.api {
        Api::AnthropicMessages => &crate::anthropic::AnthropicWire,
        Api::OpenaiResponses => &crate::openai_responses::ResponsesWire,
        Api::OpenaiCompletions => &crate::openai_chat::ChatWire,
        Api::GoogleGenerativeAi => &crate::gemini::GeminiWire,
    };
    wire.build(model, context, options).map(|r| (r.body.to_vec(), r.prefix_hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_ends_in_the_message_or_the_error_with_what_arrived() {
        let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\
                     \"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n\
                     event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\
                     \"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                     event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
                     \"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n";
        let end = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
                   event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let whole = format!("{start}{end}");
        let (_, done) = replay(Api::AnthropicMessages, whole.as_bytes(), 5);
        assert_eq!(done.map(|m| m.text()), Ok("hi".to_owned()));
        let cut = format!("{start}event: content_block_stop\ndata: {{\"type\"");
        let (_, failed) = replay(Api::AnthropicMessages, cut.as_bytes(), 5);
        let (error, partial) = failed.unwrap_err();
        assert!(error.ends_with("(last event cut off)"), "{error}");
        assert_eq!((partial.text(), partial.stop_reason), ("hi".to_owned(), StopReason::Error));
    }

    /// Found by fuzzing: a block or item index near `usize::MAX` made the decoder
    /// allocate a slot per index (capacity overflow, or an out-of-memory abort).
    #[test]
    fn issue_19_a_huge_block_index_is_an_error_not_an_allocation() {
        let anthropic = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\
            \"index\":1152921504606846976,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
        let responses = "event: response.output_item.added\ndata: {\"type\":\
            \"response.output_item.added\",\"output_index\":1152921504606846976,\"item\":\
            {\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"c\",\"name\":\"f\"}}\n\n";
        for (api, body) in [(Api::AnthropicMessages, anthropic), (Api::OpenaiResponses, responses)]
        {
            let (_, ended) = replay(api, body.as_bytes(), body.len());
            let Err((message, _)) = ended else { panic!("{api:?}: accepted") };
            assert!(message.contains("index 1152921504606846976 is out of range"), "{message}");
        }
    }
}
