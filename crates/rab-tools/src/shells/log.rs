//! A background shell's output as kept in memory: only the last ~1 MB / 2000 lines, cut
//! at line boundaries, with a read position so each `bash_output` call returns only what
//! arrived since the previous one, and says how much of that was dropped unread.

/// Most bytes kept per shell.
pub const MAX_KEPT_BYTES: usize = 1024 * 1024;
/// Most lines kept per shell.
pub const MAX_KEPT_LINES: usize = 2000;

/// Output of one background shell.
#[derive(Debug, Default)]
pub(super) struct OutputLog {
    buf: Vec<u8>,
    /// Newlines in `buf`.
    lines: usize,
    /// Offset in the whole output of `buf[0]`.
    start: u64,
    /// Offset in the whole output up to which the model has read.
    read: u64,
}

/// What arrived since the last read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unread {
    /// The new output (lossy UTF-8).
    pub(crate) text: String,
    /// Bytes that arrived since the last read but were dropped before it.
    pub(crate) dropped_bytes: u64,
}

impl OutputLog {
    /// Appends output, dropping the oldest whole lines once past a limit. It trims to
    /// three quarters of the limits, so a steady stream does not shift the buffer on
    /// every read of the pipe.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.lines += bytes.iter().filter(|&&b| b == b'\n').count();
        if self.buf.len() <= MAX_KEPT_BYTES && self.lines <= MAX_KEPT_LINES {
            return;
        }
        let keep_bytes = MAX_KEPT_BYTES / 4 * 3;
        let keep_lines = MAX_KEPT_LINES / 4 * 3;
        let mut cut = 0;
        let mut lines = self.lines;
        while self.buf.len() - cut > keep_bytes || lines > keep_lines {
            match self.buf[cut..].iter().position(|&b| b == b'\n') {
                Some(i) => {
                    cut += i + 1;
                    lines -= 1;
                }
                // One line longer than the limit: keep its end.
                None => {
                    cut = self.buf.len() - keep_bytes;
                    break;
                }
            }
        }
        self.buf.drain(..cut);
        self.lines = lines;
        self.start += cut as u64;
    }

    /// Everything not read yet; marks it read. A UTF-8 character split at the end is
    /// held back for the next read unless `is_final`.
    pub(super) fn take_unread(&mut self, is_final: bool) -> Unread {
        let dropped_bytes = self.start.saturating_sub(self.read);
        let from = usize::try_from(self.read.saturating_sub(self.start)).unwrap_or(usize::MAX);
        let new = self.buf.get(from..).unwrap_or_default();
        let complete = match std::str::from_utf8(new) {
            Err(e) if e.error_len().is_none() && !is_final => e.valid_up_to(),
            Ok(_) | Err(_) => new.len(),
        };
        let text = String::from_utf8_lossy(&new[..complete]).into_owned();
        self.read = self.start.max(self.read) + complete as u64;
        Unread { text, dropped_bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn unread(text: &str, dropped_bytes: u64) -> Unread {
        Unread { text: text.to_owned(), dropped_bytes }
    }

    #[test]
    fn each_read_returns_only_what_came_since_the_last() {
        let mut log = OutputLog::default();
        log.push(b"a\nb");
        assert_eq!(log.take_unread(false), unread("a\nb", 0));
        assert_eq!(log.take_unread(false), unread("", 0));
        log.push(b"c\n");
        assert_eq!(log.take_unread(false), unread("c\n", 0));
    }

    #[test]
    fn a_split_character_waits_for_its_other_half() {
        let mut log = OutputLog::default();
        let e = "é".as_bytes();
        log.push(&[b'x', e[0]]);
        assert_eq!(log.take_unread(false), unread("x", 0));
        log.push(&e[1..]);
        assert_eq!(log.take_unread(false), unread("é", 0));
        log.push(&e[..1]);
        assert_eq!(log.take_unread(true), unread("\u{fffd}", 0));
    }

    #[test]
    fn old_lines_are_dropped_past_2000_and_the_reader_is_told() {
        let mut log = OutputLog::default();
        log.push(b"first\n");
        assert_eq!(log.take_unread(false).text, "first\n");
        let lines: String = (0..3000).map(|i| format!("{i}\n")).collect();
        log.push(lines.as_bytes());
        let got = log.take_unread(false);
        assert_eq!(got.text.lines().count(), 1500);
        assert_eq!(got.text.lines().next(), Some("1500"));
        let dropped: usize = (0..1500).map(|i: i32| i.to_string().len() + 1).sum();
        assert_eq!(got.dropped_bytes, dropped as u64);
        log.push(b"more\n");
        assert_eq!(log.take_unread(false), unread("more\n", 0));
    }

    #[test]
    fn memory_stays_bounded_by_bytes_even_for_one_long_line() {
        let mut log = OutputLog::default();
        for _ in 0..40 {
            log.push(&[b'x'; 100_000]);
        }
        assert!(log.buf.len() <= MAX_KEPT_BYTES, "{}", log.buf.len());
        let got = log.take_unread(false);
        assert_eq!(got.text.len() as u64 + got.dropped_bytes, 4_000_000);
    }
}
