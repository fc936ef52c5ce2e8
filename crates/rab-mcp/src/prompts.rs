//! MCP prompts as slash commands: a command line's words mapped onto a prompt's
//! declared arguments, and a prompt's messages joined into one text.

use rmcp::model::{ContentBlock, GetPromptResult, Role};
use serde_json::{Map, Value};

use crate::Error;
use crate::manager::PromptInfo;

/// How to call the prompt: `review <file> [focus]`.
pub fn usage(prompt: &PromptInfo) -> String {
    let mut usage = prompt.name.clone();
    for arg in &prompt.arguments {
        match arg.is_required {
            true => usage.push_str(&format!(" <{}>", arg.name)),
            false => usage.push_str(&format!(" [{}]", arg.name)),
        }
    }
    usage
}

/// Fills the prompt's arguments in order from the whitespace-separated words of `line`;
/// the last argument takes the rest of the line. Words beyond a prompt without
/// arguments are ignored.
pub(crate) fn map_arguments(prompt: &PromptInfo, line: &str) -> Result<Map<String, Value>, Error> {
    let mut values = Map::new();
    let mut rest = line.trim();
    let count = prompt.arguments.len();
    for (i, arg) in prompt.arguments.iter().enumerate() {
        let value = if i + 1 == count {
            std::mem::take(&mut rest)
        } else {
            let (word, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            rest = tail.trim_start();
            word
        };
        if value.is_empty() {
            if arg.is_required {
                return Err(Error::MissingArgument {
                    server: prompt.server.clone(),
                    prompt: prompt.name.clone(),
                    argument: arg.name.clone(),
                    usage: usage(prompt),
                });
            }
            continue;
        }
        values.insert(arg.name.clone(), Value::String(value.to_owned()));
    }
    Ok(values)
}

/// The messages as one text; role lines only when there is more than one message.
pub(crate) fn join_messages(result: &GetPromptResult) -> String {
    let texts: Vec<(String, &Role)> =
        result.messages.iter().map(|m| (text_of(&m.content), &m.role)).collect();
    if let [(text, _)] = texts.as_slice() {
        return text.clone();
    }
    texts
        .iter()
        .map(|(text, role)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("{role}:\n{text}")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn text_of(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Resource(embedded) => embedded.get_text(),
        ContentBlock::ResourceLink(link) => format!("[resource: {} ({})]", link.uri, link.name),
        ContentBlock::Image(image) => format!("[image ({}) not shown]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio ({}) not shown]", audio.mime_type),
        other => format!("[unsupported MCP content: {other:?}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::PromptArgumentInfo;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn review() -> PromptInfo {
        let arg = |name: &str, is_required| PromptArgumentInfo {
            name: name.into(),
            description: None,
            is_required,
        };
        PromptInfo {
            server: "test".into(),
            name: "review".into(),
            description: None,
            arguments: vec![arg("file", true), arg("focus", false)],
        }
    }

    #[test]
    fn the_last_argument_takes_the_rest_of_the_line() {
        let args = map_arguments(&review(), "  src/main.rs  error handling and  naming ").unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"file": "src/main.rs", "focus": "error handling and  naming"})
        );
        let args = map_arguments(&review(), "a.rs").unwrap();
        assert_eq!(Value::Object(args), json!({"file": "a.rs"}));
    }

    #[test]
    fn messages_get_role_lines_only_when_there_are_several() {
        use rmcp::model::PromptMessage;
        let one = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, "just this")]);
        assert_eq!(join_messages(&one), "just this");
        let two = GetPromptResult::new(vec![
            PromptMessage::new_text(Role::User, "question"),
            PromptMessage::new_text(Role::Assistant, "answer"),
        ]);
        assert_eq!(join_messages(&two), "user:\nquestion\n\nassistant:\nanswer");
    }

    #[test]
    fn a_missing_required_argument_names_it_and_the_usage() {
        let err = map_arguments(&review(), "   ").unwrap_err();
        assert_eq!(
            err.to_string(),
            "prompt `review` of MCP server `test` needs the argument `file`; usage: review \
             <file> [focus]"
        );
    }
}
