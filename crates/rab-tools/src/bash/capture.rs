//! Output capture for `bash`: the pipe stdout and stderr share, streamed to the UI.
//! Memory stays bounded whatever the command prints: everything is kept until the output
//! outgrows the result limits, then it goes to a file as it arrives, and only a window
//! larger than the tail the model gets stays in memory. The file (mode 0600, in rab's
//! private folder) gets the output redacted line by line, as the model would see it.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use rab_agent::UpdateSink;
use tokio::fs::File;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio_util::sync::CancellationToken;

use crate::truncate::{self, MAX_BYTES, MAX_LINES, format_size};

/// Bytes per pipe read.
const CHUNK: usize = 16 * 1024;
/// Once spilled, the window is cut back to `KEEP` bytes whenever it passes `WINDOW`. Both
/// exceed `MAX_BYTES`, so the tail the model gets never starts inside the window's first,
/// possibly cut, line.
const KEEP: usize = 2 * MAX_BYTES;
const WINDOW: usize = 4 * MAX_BYTES;

/// Where the full output goes once it is too long for the result.
enum Spill {
    /// Still short: the window holds everything.
    Pending,
    /// Writing to this file; the last line, not yet complete, waits to be redacted whole.
    Writing(PathBuf, BufWriter<File>, Vec<u8>),
    /// The file could not be written (the reason goes in the note).
    Failed(Option<PathBuf>, String),
}

/// Output of a running command.
pub(super) struct Capture {
    window: Vec<u8>,
    is_trimmed: bool,
    total_bytes: usize,
    newlines: usize,
    ends_with_newline: bool,
    spill: Spill,
    temp_dir: PathBuf,
    redact: crate::Redact,
    updates: UpdateSink,
    /// Bytes of a UTF-8 character split across reads, held back from the UI.
    carry: Vec<u8>,
}

/// The output as the model gets it.
pub(super) struct Captured {
    text: String,
    note: Option<String>,
    /// Whether the text is only the tail.
    pub(super) is_truncated: bool,
    /// The file holding everything, when truncated.
    pub(super) full_output_path: Option<String>,
}

impl Captured {
    /// Stands in when the reader task died: nothing is known about the output.
    pub(super) fn lost() -> Self {
        Self {
            text: String::new(),
            note: Some("[output lost: reading it failed]".to_owned()),
            is_truncated: false,
            full_output_path: None,
        }
    }

    /// The output, or `(no output)`, followed by the truncation note.
    pub(super) fn render(&self) -> String {
        let text = self.text.trim_end_matches(['\n', '\r']);
        let mut out =
            if text.trim().is_empty() { "(no output)".to_owned() } else { text.to_owned() };
        if let Some(note) = &self.note {
            out.push('\n');
            out.push_str(note);
        }
        out
    }
}

impl Capture {
    pub(super) fn new(temp_dir: &Path, redact: crate::Redact, updates: UpdateSink) -> Self {
        Self {
            window: Vec::new(),
            is_trimmed: false,
            total_bytes: 0,
            newlines: 0,
            ends_with_newline: false,
            spill: Spill::Pending,
            temp_dir: temp_dir.to_path_buf(),
            redact,
            updates,
            carry: Vec::new(),
        }
    }

    /// Reads the pipe until it closes or `stop` fires.
    pub(super) async fn collect<R: AsyncRead + Unpin>(
        mut self,
        mut output: R,
        stop: CancellationToken,
    ) -> Self {
        let mut buf = vec![0; CHUNK];
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                read = output.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => self.push(&buf[..n]).await,
                },
            }
        }
        self
    }

    async fn push(&mut self, bytes: &[u8]) {
        self.stream(bytes);
        self.total_bytes += bytes.len();
        self.newlines += bytes.iter().filter(|&&b| b == b'\n').count();
        self.ends_with_newline = bytes.last() == Some(&b'\n');
        self.window.extend_from_slice(bytes);
        match &mut self.spill {
            Spill::Pending => {
                if self.total_bytes > MAX_BYTES || self.newlines >= MAX_LINES {
                    self.spill = open_spill(&self.temp_dir, &self.window, &self.redact).await;
                }
            }
            Spill::Writing(path, file, pending) => {
                pending.extend_from_slice(bytes);
                if let Err(e) = write_lines(file, pending, &self.redact, false).await {
                    self.spill = Spill::Failed(Some(path.clone()), e.to_string());
                }
            }
            Spill::Failed(..) => {}
        }
        let is_spilled = !matches!(self.spill, Spill::Pending);
        if is_spilled && self.window.len() > WINDOW {
            self.window.drain(..self.window.len() - KEEP);
            self.is_trimmed = true;
        }
    }

    /// Sends the chunk to the UI, holding back a character split across reads.
    fn stream(&mut self, bytes: &[u8]) {
        let carry = &mut self.carry;
        carry.extend_from_slice(bytes);
        let complete = match std::str::from_utf8(carry) {
            Ok(_) => carry.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => carry.len(),
        };
        if complete > 0 {
            self.updates.send(String::from_utf8_lossy(&carry[..complete]).into_owned());
            carry.drain(..complete);
        }
    }

    /// The tail for the model, the full output flushed to its file when it was cut, and
    /// the file removed when it was not needed after all.
    pub(super) async fn finish(self) -> Captured {
        let text = String::from_utf8_lossy(&self.window);
        let tail = truncate::tail(&text, MAX_LINES, MAX_BYTES);
        let is_truncated = self.is_trimmed || tail.is_truncated;
        let total_lines =
            self.newlines + usize::from(self.total_bytes > 0 && !self.ends_with_newline);
        let saved = match self.spill {
            Spill::Pending => Err((None, "it was never written".to_owned())),
            Spill::Writing(path, mut file, mut pending) => {
                let written = write_lines(&mut file, &mut pending, &self.redact, true).await;
                match written.and(file.shutdown().await) {
                    Ok(()) => Ok(path),
                    Err(e) => Err((Some(path), e.to_string())),
                }
            }
            Spill::Failed(path, err) => Err((path, err)),
        };
        if !is_truncated {
            if let Ok(path) | Err((Some(path), _)) = &saved {
                let _ = tokio::fs::remove_file(path).await;
            }
            return Captured { text: tail.text, note: None, is_truncated, full_output_path: None };
        }
        let mut shown = format!("the last {} of {total_lines} lines", tail.kept_lines);
        if tail.kept_lines < MAX_LINES {
            let kept = format_size(tail.text.len());
            let total = format_size(self.total_bytes);
            shown = format!("{shown} ({kept} of {total})");
        }
        let (saved_note, path) = match saved {
            Ok(path) => (format!("full output in {}", path.display()), Some(path)),
            Err((partial, err)) => {
                if let Some(partial) = partial {
                    let _ = tokio::fs::remove_file(partial).await;
                }
                (format!("the full output could not be saved: {err}"), None)
            }
        };
        Captured {
            text: tail.text,
            note: Some(format!("[output truncated: showing {shown}; {saved_note}]")),
            is_truncated,
            full_output_path: path.map(|p| p.display().to_string()),
        }
    }
}

/// Creates `rab-bash-<random>.log` in `dir`, readable by its owner only, and writes
/// what came so far.
async fn open_spill(dir: &Path, so_far: &[u8], redact: &crate::Redact) -> Spill {
    // Any hasher from a fresh RandomState is randomly keyed: enough for a unique name,
    // and `create_new` guards against the unlikely clash.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let path = dir.join(format!("rab-bash-{:016x}.log", hasher.finish()));
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let file = match options.open(&path).await {
        Ok(file) => file,
        Err(e) => return Spill::Failed(None, format!("{}: {e}", path.display())),
    };
    let mut file = BufWriter::with_capacity(64 * 1024, file);
    let mut pending = so_far.to_vec();
    match write_lines(&mut file, &mut pending, redact, false).await {
        Ok(()) => Spill::Writing(path, file, pending),
        Err(e) => Spill::Failed(Some(path), e.to_string()),
    }
}

/// Writes the complete lines of `pending` redacted, keeping the incomplete last one
/// (all of it when `is_last`). A line longer than the window is written as it is cut.
async fn write_lines(
    file: &mut BufWriter<File>,
    pending: &mut Vec<u8>,
    redact: &crate::Redact,
    is_last: bool,
) -> std::io::Result<()> {
    let end = match pending.iter().rposition(|&b| b == b'\n') {
        _ if is_last || pending.len() > WINDOW => pending.len(),
        Some(i) => i + 1,
        None => return Ok(()),
    };
    let text = String::from_utf8_lossy(&pending[..end]);
    file.write_all(redact.apply(&text).as_bytes()).await?;
    pending.drain(..end);
    Ok(())
}
