//! Helpers the tools' tests share.

use rab_agent::{ToolError, ToolOutput};
use rab_ai::Content;

/// The one text block of an output.
pub fn text(out: &ToolOutput) -> String {
    match &out.content[..] {
        [Content::Text { text }] => text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// The message of a [`ToolError::Model`].
pub fn model_error(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Model(text)) => text,
        other => panic!("expected a model error, got {other:?}"),
    }
}
