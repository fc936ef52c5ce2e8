//! Entry points for the fuzz targets (`fuzz/`): one incoming line of the RPC and ACP
//! modes, decoded as the mode decodes it, without a session. Not part of the stable API.

/// Reads one line of `rab --mode rpc`'s stdin: `None` for a blank line, else the
/// request's type or the error its response would carry.
pub fn rpc_line(line: &str) -> Option<Result<String, String>> {
    crate::rpc::decode_line(line)
}

/// Reads one line from the editor of `rab acp`: the method, or the error the editor
/// would get.
pub fn acp_line(line: &str) -> Result<String, String> {
    crate::acp::decode_line(line)
}
