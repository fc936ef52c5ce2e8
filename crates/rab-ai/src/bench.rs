//! Hooks for the decoding benchmark: runs recorded SSE bytes through the same decoder
//! path the HTTP driver uses, without a network. Not part of the stable API.

use crate::assemble::Builder;
use crate::model::{Api, Model};
use crate::provider::{Decoder, StreamOptions};
use crate::sse::{FeedError, SseDecoder};
use crate::types::{AssistantMessage, Context};

/// Decodes a complete recorded stream of the given wire format, fed in chunks of
/// `chunk` bytes, and returns the assembled message and the number of events emitted.
pub fn decode(api: Api, bytes: &[u8], chunk: usize) -> Result<(AssistantMessage, usize), String> {
    let model = Model::custom("bench", "bench", api, "http://localhost");
    let mut builder = Builder::new(&model);
    let mut decoder: Box<dyn Decoder> = match api {
        Api::AnthropicMessages => Box::new(crate::anthropic::AnthropicDecoder::default()),
        Api::OpenaiResponses => Box::new(crate::openai_responses::ResponsesDecoder::default()),
        Api::OpenaiCompletions => Box::new(crate::openai_chat::ChatDecoder::default()),
        Api::GoogleGenerativeAi => Box::new(crate::gemini::GeminiDecoder::default()),
    };
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
    wire.build(model, context, options).map(|r| (r.body, r.prefix_hash))
}
