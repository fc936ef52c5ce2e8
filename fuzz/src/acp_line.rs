//! Lines from the editor of `rab acp` (arbitrary text, one JSON-RPC message per line):
//! framed and typed as the connection does, then read by rab's handlers (a prompt's
//! blocks, the editor's MCP servers). A message or an error for the editor, never a
//! panic.

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for line in text.lines() {
        let _ = rab::fuzz::acp_line(line);
    }
}
