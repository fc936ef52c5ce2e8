//! The `read` tool: a text file as numbered lines (`{n}\t{line}`), at most 2000 lines or
//! 50 KB per call with a note on how to continue; images as attachments.
//!
//! Text that is not valid UTF-8 but mostly printable (Latin-1, CP1252 sources) is shown
//! with invalid bytes as `�` and a note, since refusing it would leave the model blind;
//! a NUL byte or a high share of invalid bytes and control characters in the first
//! 8 KB means binary, which is refused. Images are recognised by their magic bytes,
//! not the extension alone, because a provider rejects a corrupt image with an error
//! that would break the conversation; a `.png` that is not a PNG is read as a file.

use std::fs::{self, File};

use crate::handle::FileHandle;
use std::io::{self, BufRead, BufReader, Read as _, Seek, SeekFrom};
use std::path::Path;

use base64::Engine as _;
use rab_agent::{RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput};
use rab_ai::Content;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Workspace;
use crate::truncate::{MAX_BYTES, MAX_LINES, format_size};

/// Lines longer than this many characters are cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Largest image file read (one over the providers' limits is downscaled to fit).
pub const MAX_IMAGE_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes inspected to tell text from binary.
const SNIFF_BYTES: u64 = 8 * 1024;

/// Reads a file with line numbers, or attaches an image.
pub struct Read {
    ws: Workspace,
}

impl Read {
    /// The tool rooted at the workspace.
    pub fn new(ws: Workspace) -> Self {
        Self { ws }
    }
}

/// Arguments of `read`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// File path.
    #[schemars(description = "")]
    pub path: String,
    /// First line, 1-based.
    pub offset: Option<usize>,
    /// Max lines.
    #[schemars(description = "")]
    pub limit: Option<usize>,
}

impl Tool for Read {
    type Args = Args;
    const NAME: &'static str = "read";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Path,
        claude_names: &["Read"],
        covered_by: &[],
        always_full: true,
    };

    fn summary(&self, args: &Args) -> Option<String> {
        Some(match (args.offset, args.limit) {
            (Some(o), Some(l)) => format!("{}:{o}-{}", args.path, o + l.saturating_sub(1)),
            (Some(o), None) => format!("{}:{o}-", args.path),
            (None, Some(l)) => format!("{}:1-{l}", args.path),
            (None, None) => args.path.clone(),
        })
    }

    fn description(&self) -> String {
        "Read a file as numbered lines (N<tab>text), at most 2000 lines/50 KB per call; use \
         offset/limit for more. Also shows images (png, jpg, gif, webp)."
            .to_owned()
    }

    async fn run(&self, args: Args, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let (path, file) = self.ws.resolve_handle(&args.path, crate::sandbox::Access::Read)?;
        // A text file the editor has is read as the editor has it (unsaved changes too);
        // images, binary files and what the editor cannot read come from the disk.
        if let Some(editor) = self.ws.editor().reader()
            && is_text_or_missing(&file)
            && let Ok(text) = editor.read(&path).await
        {
            let shown = self.ws.display(&path);
            if args.limit == Some(0) {
                return Err(ToolError::Model("limit must be at least 1".to_owned()));
            }
            if text.is_empty() {
                return Ok(ToolOutput::text(format!("{shown} is empty (0 bytes)")));
            }
            let first = args.offset.unwrap_or(1).max(1);
            let page = number_lines(io::Cursor::new(text.into_bytes()), first, args.limit)
                .map_err(|e| ToolError::Model(format!("cannot read {shown}: {e}")))?;
            return page.into_output(&shown);
        }
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || read_path(&ws, &file, &path, args.offset, args.limit))
            .await
            .map_err(|e| ToolError::Model(format!("read failed: {e}")))?
    }
}

/// Whether `file` is a text file on disk, or not on disk at all (an editor may have it).
fn is_text_or_missing(file: &FileHandle) -> bool {
    match file.meta() {
        Err(_) => true,
        Ok(meta) if !meta.is_file => false,
        Ok(_) => {
            let mut head = Vec::new();
            let read = file.open().and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head));
            read.is_ok() && image_mime(&head).is_none() && !looks_binary(&head)
        }
    }
}

fn read_path(
    ws: &Workspace,
    pinned: &FileHandle,
    path: &Path,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let shown = ws.display(path);
    let io_err = |e: io::Error| ToolError::Model(format!("cannot read {shown}: {e}"));
    let meta = match pinned.meta() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ToolError::Model(missing_file_message(ws, path)));
        }
        Err(e) => return Err(io_err(e)),
    };
    if meta.is_dir {
        return Err(ToolError::Model(format!("{shown} is a directory; use ls to list it")));
    }
    if !meta.is_file {
        // Opening a FIFO or a device could block forever.
        return Err(ToolError::Model(format!("{shown} is not a regular file")));
    }
    if limit == Some(0) {
        return Err(ToolError::Model("limit must be at least 1".to_owned()));
    }
    let mut file = pinned.open().map_err(io_err)?;
    let mut head = Vec::new();
    file.by_ref().take(SNIFF_BYTES).read_to_end(&mut head).map_err(io_err)?;
    if let Some(mime) = image_mime(&head) {
        return read_image(file, &shown, mime, meta.len);
    }
    if head.is_empty() {
        return Ok(ToolOutput::text(format!("{shown} is empty (0 bytes)")));
    }
    if looks_binary(&head) {
        return Err(ToolError::Model(format!(
            "binary file {shown} ({}) not shown; read only shows text and images",
            format_size(usize::try_from(meta.len).unwrap_or(usize::MAX))
        )));
    }
    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
    // Offset 0 reads as 1: models mix up 0- and 1-based lines, and both mean "the top".
    let page =
        number_lines(BufReader::new(file), offset.unwrap_or(1).max(1), limit).map_err(io_err)?;
    page.into_output(&shown)
}

fn read_image(mut file: File, shown: &str, mime: &str, size: u64) -> Result<ToolOutput, ToolError> {
    let size_text = format_size(usize::try_from(size).unwrap_or(usize::MAX));
    if size > MAX_IMAGE_BYTES {
        return Err(ToolError::Model(format!(
            "image {shown} is {size_text}; images over 64 MB are not read (shrink it first, \
             e.g. with ImageMagick via bash)"
        )));
    }
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|e| ToolError::Model(format!("cannot read {shown}: {e}")))?;
    let (text, mime, bytes) = match crate::image_fit::fit(&bytes) {
        Ok(f) => match f.resized_from {
            None => (
                format!("image {shown} ({mime}, {}x{}, {size_text})", f.width, f.height),
                f.mime,
                f.bytes,
            ),
            Some((w, h)) => (
                format!(
                    "image {shown} ({mime}, {w}x{h}, {size_text}), downscaled to {}x{} ({}, {}) \
                     to fit the providers' limits (5 MB, 8000 px a side)",
                    f.width,
                    f.height,
                    f.mime,
                    format_size(f.bytes.len())
                ),
                f.mime,
                f.bytes,
            ),
        },
        // Within the limits the provider judges what it cannot read; over them it is
        // refused, since it could not be made to fit.
        Err(_) if bytes.len() <= crate::image_fit::MAX_BYTES => {
            (format!("image {shown} ({mime}, {size_text})"), mime, bytes)
        }
        Err(e) => {
            return Err(ToolError::Model(format!(
                "image {shown} is {size_text}, over the providers' 5 MB, and cannot be \
                 downscaled: {e}"
            )));
        }
    };
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(ToolOutput {
        content: vec![Content::text(text), Content::Image { mime_type: mime.to_owned(), data }],
        details: None,
    })
}

/// The image type by magic bytes.
fn image_mime(head: &[u8]) -> Option<&'static str> {
    crate::image_fit::mime_of(head)
}

/// Binary if the sample has a NUL byte, or over a tenth of its characters are invalid
/// UTF-8 or control characters other than the usual whitespace and escape.
fn looks_binary(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(sample);
    let (mut bad, mut all) = (0usize, 0usize);
    for c in text.chars() {
        all += 1;
        let is_odd_control = c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c' | '\x1b');
        if c == char::REPLACEMENT_CHARACTER || is_odd_control {
            bad += 1;
        }
    }
    bad * 10 > all
}

/// One page of numbered lines and what the notes need.
struct Page {
    text: String,
    first: usize,
    last_shown: usize,
    total: usize,
    is_byte_capped: bool,
    has_invalid_utf8: bool,
}

impl Page {
    fn into_output(self, shown: &str) -> Result<ToolOutput, ToolError> {
        let total = self.total;
        if self.first > total {
            return Err(ToolError::Model(format!(
                "offset {} is past the end of {shown}, which has {total} line{}",
                self.first,
                if total == 1 { "" } else { "s" }
            )));
        }
        let mut notes = Vec::new();
        if self.last_shown < total {
            let (first, last) = (self.first, self.last_shown);
            let why = if self.is_byte_capped { " (50 KB limit)" } else { "" };
            notes.push(format!(
                "[lines {first}-{last} of {total} shown{why}; call read with offset={} to \
                 continue]",
                last + 1
            ));
        }
        if self.has_invalid_utf8 {
            notes.push("[file is not valid UTF-8; invalid bytes are shown as �]".to_owned());
        }
        let mut text = self.text;
        if !notes.is_empty() {
            text.push_str("\n\n");
            text.push_str(&notes.join("\n"));
        }
        Ok(ToolOutput::text(text))
    }
}

/// Numbers the lines from `first` (1-based) on, within `limit`, [`MAX_LINES`] and
/// [`MAX_BYTES`], and counts all lines. Each line is buffered only up to what can be
/// shown, so a huge single-line file does not fill memory.
fn number_lines(mut reader: impl BufRead, first: usize, limit: Option<usize>) -> io::Result<Page> {
    let limit = limit.unwrap_or(MAX_LINES).min(MAX_LINES);
    let mut page = Page {
        text: String::new(),
        first,
        last_shown: 0,
        total: 0,
        is_byte_capped: false,
        has_invalid_utf8: false,
    };
    // Room for MAX_LINE_CHARS characters of up to 4 bytes each.
    let keep = MAX_LINE_CHARS * 4 + 4;
    let mut buf = Vec::with_capacity(256);
    loop {
        buf.clear();
        let Some(len) = next_line(&mut reader, &mut buf, keep)? else { break };
        page.total += 1;
        let n = page.total;
        if n < first || n >= first.saturating_add(limit) || page.is_byte_capped {
            continue;
        }
        let (line, was_invalid) = decode_line(&buf, len);
        let entry = format!("{}{n}\t{line}", if page.text.is_empty() { "" } else { "\n" });
        if page.text.len() + entry.len() > MAX_BYTES {
            page.is_byte_capped = true;
            continue;
        }
        page.text.push_str(&entry);
        page.last_shown = n;
        page.has_invalid_utf8 |= was_invalid;
    }
    Ok(page)
}

/// Reads one line into `buf` (at most `keep` bytes of it, line ending removed) and
/// returns the line's full length in bytes, or `None` at the end of input.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> io::Result<Option<usize>> {
    let mut len = 0;
    let mut saw_any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        saw_any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        let room = keep.saturating_sub(buf.len());
        buf.extend_from_slice(&part[..part.len().min(room)]);
        len += part.len();
        let used = part.len() + usize::from(done);
        reader.consume(used);
        if done {
            break;
        }
    }
    if !saw_any {
        return Ok(None);
    }
    if len <= keep && buf.last() == Some(&b'\r') {
        buf.pop();
        len -= 1;
    }
    Ok(Some(len))
}

/// The line as text, cut to [`MAX_LINE_CHARS`] with a marker, and whether it had
/// invalid UTF-8. `len` is the full line length, of which `bytes` may be a prefix.
fn decode_line(bytes: &[u8], len: usize) -> (String, bool) {
    let is_prefix = len > bytes.len();
    let (text, is_invalid) = match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_owned(), false),
        // A prefix may end inside a character; that is not an encoding problem.
        Err(e) if is_prefix && e.error_len().is_none() => {
            (String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(), false)
        }
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    };
    let chars = text.chars().count();
    if chars <= MAX_LINE_CHARS && !is_prefix {
        return (text, is_invalid);
    }
    let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
    let size = format_size(len);
    (format!("{cut}… [line cut at {MAX_LINE_CHARS} characters of {size}]"), is_invalid)
}

/// "file not found" with the resolved path and, when the directory exists, up to three
/// similarly named entries in it.
pub(crate) fn missing_file_message(ws: &Workspace, path: &Path) -> String {
    let shown = ws.display(path);
    let Some(parent) = path.parent() else { return format!("file not found: {shown}") };
    if !parent.is_dir() {
        return format!(
            "file not found: {shown} (directory {} does not exist)",
            ws.display(parent)
        );
    }
    let names = similar_names(parent, path);
    if names.is_empty() {
        return format!("file not found: {shown}");
    }
    let list: Vec<String> = names.iter().map(|n| ws.display(&parent.join(n))).collect();
    format!("file not found: {shown}; similar: {}", list.join(", "))
}

fn similar_names(dir: &Path, path: &Path) -> Vec<String> {
    let Some(wanted) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    // Bounded so a huge directory does not make a typo expensive.
    let names: Vec<String> =
        entries.take(2000).filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let refs: Vec<&str> = lower.iter().map(String::as_str).collect();
    let close = similar::get_close_matches(wanted.as_str(), &refs, 3, 0.6);
    close
        .into_iter()
        .filter_map(|c| lower.iter().position(|l| l == c).map(|i| names[i].clone()))
        .collect()
}

#[cfg(test)]
mod tests;
