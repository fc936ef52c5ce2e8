//! Lines of `rab --mode rpc`'s stdin (arbitrary text, one request per line): each is a
//! request or gets an error response, never a panic.

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    // The mode reads lines of UTF-8 text; other bytes end its input.
    let Ok(text) = std::str::from_utf8(data) else { return };
    for line in text.lines() {
        let _ = rab::fuzz::rpc_line(line);
    }
}
