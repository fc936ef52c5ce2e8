//! Where the lines of a loaded tape come from. Loading reads the whole file once (ids,
//! parents and the active branch's messages are parsed from that text); afterwards the
//! text can be released and a line is read back from the file when an entry is first
//! needed, so a resumed session does not keep a second copy of its history in memory.
//! The tape is append-only, so the byte ranges found at load stay valid.

use std::borrow::Cow;
use std::fs::File;
use std::ops::Range;

/// The text of a loaded tape, or the open file once the text is released.
#[derive(Debug, Default)]
pub(crate) struct Source {
    text: String,
    file: Option<File>,
    /// The text is the file's bytes unchanged (it was valid UTF-8), so ranges into
    /// the text are file offsets too and the text may be released.
    is_exact: bool,
}

impl Source {
    /// A source over `bytes` read from `file`.
    pub(crate) fn new(bytes: Vec<u8>, file: File) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Self { text, file: Some(file), is_exact: true },
            // Ranges into a repaired text are not file offsets: keep it in memory.
            Err(e) => Self {
                text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
                file: None,
                is_exact: false,
            },
        }
    }

    /// The text as loaded (empty once released).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Frees the text; later lines are read from the file.
    pub(crate) fn release(&mut self) {
        if self.is_exact && self.file.is_some() {
            self.text = String::new();
        }
    }

    /// Whether the line at `range` can be read back when dropped from memory.
    pub(crate) fn can_read(&self, range: &Range<usize>) -> bool {
        self.text.get(range.clone()).is_some() || (self.is_exact && self.file.is_some())
    }

    /// Reads lines appended from now on back from `path` (a new session's file, once
    /// its first line is written); a source over a repaired text keeps what it has.
    pub(crate) fn follow(&mut self, path: &std::path::Path) {
        if self.file.is_none()
            && self.text.is_empty()
            && let Ok(file) = File::open(path)
        {
            self.file = Some(file);
            self.is_exact = true;
        }
    }

    /// The line at `range` (`None` when it cannot be read back).
    pub(crate) fn line(&self, range: &Range<usize>) -> Option<Cow<'_, str>> {
        if let Some(line) = self.text.get(range.clone()) {
            return Some(Cow::Borrowed(line));
        }
        let file = self.file.as_ref()?;
        let mut buf = vec![0u8; range.len()];
        if let Err(e) = read_exact_at(file, &mut buf, range.start as u64) {
            tracing::warn!("cannot read a session line back from its file: {e}");
            return None;
        }
        String::from_utf8(buf).ok().map(Cow::Owned)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
