//! rab's own reading of the terminal's input: bytes in, key presses, pastes, focus
//! changes and the terminal's colour scheme out.
//!
//! crossterm's reader cannot be used for the colour scheme: a terminal that reports a
//! light/dark switch (`CSI ? 997 ; 1|2 n`, after rab turned on mode 2031) or answers a
//! background query (`OSC 11`) sends sequences crossterm does not know, and its parser
//! then either turns them into typed keys or keeps waiting for an ending that never
//! comes, swallowing the keys typed after it. This parser knows them, and skips every
//! other sequence a terminal may send (device attributes, cursor reports, mouse,
//! kitty graphics answers) whole. Keys come out as crossterm's `KeyEvent`s, in the
//! form crossterm gives them (an upper-case letter carries Shift, `Ctrl+letter` is a
//! control byte, the kitty keyboard protocol's event kinds and alternate keys), so the
//! rest of the UI is unchanged.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, ModifierKeyCode,
};

#[cfg(unix)]
mod reader;
#[cfg(unix)]
pub use reader::InputReader;

/// What the terminal said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A key, a paste, a focus change (crossterm's form).
    Event(Event),
    /// The terminal's colour scheme: `true` for light (a mode 2031 report, or the
    /// answer to an OSC 11 query).
    Light(bool),
}

/// The longest sequence waited for before it is dropped as garbage.
const MAX_SEQUENCE: usize = 4096;

/// A byte-at-a-time parser that keeps an incomplete sequence for the next bytes.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    /// Inside a bracketed paste: what it holds so far.
    paste: Option<Vec<u8>>,
}

/// One step of parsing.
enum Step {
    /// `n` bytes made this (or nothing to report).
    Done(usize, Option<Input>),
    /// More bytes are needed.
    More,
    /// `n` bytes are not a sequence anything knows: dropped.
    Skip(usize),
    /// A bracketed paste begins after `n` bytes.
    PasteStart(usize),
}

impl Parser {
    /// Parses `bytes` after what was kept; what is complete goes to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Input>) {
        self.buf.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            if let Some(paste) = &mut self.paste {
                const END: &[u8] = b"\x1b[201~";
                let rest = &self.buf[at..];
                match rest.windows(END.len()).position(|w| w == END) {
                    Some(i) => {
                        paste.extend_from_slice(&rest[..i]);
                        let text = String::from_utf8_lossy(paste).replace("\r\n", "\n");
                        out.push(Input::Event(Event::Paste(text.replace('\r', "\n"))));
                        self.paste = None;
                        at += i + END.len();
                        continue;
                    }
                    None => {
                        // Keep what could be the start of the end marker.
                        let keep = (END.len() - 1).min(rest.len());
                        paste.extend_from_slice(&rest[..rest.len() - keep]);
                        at = self.buf.len() - keep;
                        break;
                    }
                }
            }
            if at >= self.buf.len() {
                break;
            }
            match step(&self.buf[at..]) {
                Step::Done(n, input) => {
                    out.extend(input);
                    at += n;
                }
                Step::Skip(n) => at += n,
                Step::PasteStart(n) => {
                    self.paste = Some(Vec::new());
                    at += n;
                }
                Step::More if self.buf.len() - at > MAX_SEQUENCE => at = self.buf.len(),
                Step::More => break,
            }
        }
        self.buf.drain(..at);
    }

    /// Whether bytes are kept waiting for the rest of a sequence.
    pub fn is_pending(&self) -> bool {
        !self.buf.is_empty() && self.paste.is_none()
    }

    /// No more bytes came soon: a lone Esc is the Esc key (Alt+key when a key byte
    /// followed is parsed already), and an unfinished sequence is dropped.
    pub fn flush(&mut self, out: &mut Vec<Input>) {
        if self.paste.is_some() {
            return;
        }
        if self.buf == [0x1b] {
            out.push(key(KeyCode::Esc, KeyModifiers::NONE));
        }
        self.buf.clear();
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Input {
    Input::Event(Event::Key(KeyEvent::new(code, modifiers)))
}

/// One key, paste start or reply at the start of `b` (not empty).
fn step(b: &[u8]) -> Step {
    match b[0] {
        0x1b => escape(b),
        b'\r' => Step::Done(1, Some(key(KeyCode::Enter, KeyModifiers::NONE))),
        b'\t' => Step::Done(1, Some(key(KeyCode::Tab, KeyModifiers::NONE))),
        0x7f => Step::Done(1, Some(key(KeyCode::Backspace, KeyModifiers::NONE))),
        0x00 => Step::Done(1, Some(key(KeyCode::Char(' '), KeyModifiers::CONTROL))),
        c @ 0x01..=0x1a => {
            Step::Done(1, Some(key(KeyCode::Char((c - 1 + b'a') as char), KeyModifiers::CONTROL)))
        }
        c @ 0x1c..=0x1f => Step::Done(
            1,
            Some(key(KeyCode::Char((c - 0x1c + b'4') as char), KeyModifiers::CONTROL)),
        ),
        _ => utf8(b),
    }
}

/// A character, upper case with Shift as crossterm gives it.
fn utf8(b: &[u8]) -> Step {
    let len = match b[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Step::Skip(1),
    };
    if b.len() < len {
        return Step::More;
    }
    match std::str::from_utf8(&b[..len]).ok().and_then(|s| s.chars().next()) {
        Some(c) => {
            let shift = if c.is_uppercase() { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
            Step::Done(len, Some(key(KeyCode::Char(c), shift)))
        }
        None => Step::Skip(1),
    }
}

/// What starts with Esc: a sequence, or Alt with a key.
fn escape(b: &[u8]) -> Step {
    let Some(&second) = b.get(1) else { return Step::More };
    match second {
        b'[' => csi(b),
        b'O' => match b.get(2) {
            None => Step::More,
            Some(&f) => Step::Done(3, final_key(f).map(|c| key(c, KeyModifiers::NONE))),
        },
        b']' => string_sequence(b, true),
        b'P' | b'_' | b'^' | b'X' => string_sequence(b, false),
        0x1b => Step::Done(1, Some(key(KeyCode::Esc, KeyModifiers::NONE))),
        _ => match step(&b[1..]) {
            Step::Done(n, Some(Input::Event(Event::Key(mut k)))) => {
                k.modifiers |= KeyModifiers::ALT;
                Step::Done(n + 1, Some(Input::Event(Event::Key(k))))
            }
            Step::Done(n, other) => Step::Done(n + 1, other),
            Step::More => Step::More,
            Step::Skip(n) => Step::Skip(n + 1),
            Step::PasteStart(n) => Step::PasteStart(n + 1),
        },
    }
}

/// OSC (`ESC ]`), DCS, APC (kitty graphics answers), PM, SOS: up to BEL or ST. Only an
/// OSC 11 answer (the background colour) means anything here.
fn string_sequence(b: &[u8], is_osc: bool) -> Step {
    let body = &b[2..];
    let end = body.iter().enumerate().find_map(|(i, &c)| match c {
        0x07 if is_osc => Some((i, 1)),
        0x1b if body.get(i + 1) == Some(&b'\\') => Some((i, 2)),
        _ => None,
    });
    let Some((i, terminator)) = end else { return Step::More };
    let n = 2 + i + terminator;
    if !is_osc {
        return Step::Done(n, None);
    }
    let reply = crate::background::parse_answer(&b[..n])
        .map(|rgb| Input::Light(crate::background::is_light(rgb)));
    Step::Done(n, reply)
}

/// The key of a final byte shared by CSI and SS3 (`A` up, `P` F1, …).
fn final_key(f: u8) -> Option<KeyCode> {
    Some(match f {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

/// `ESC [ params final`.
fn csi(b: &[u8]) -> Step {
    // X10 mouse reports carry three raw bytes after `ESC [ M`.
    if b.get(2) == Some(&b'M') {
        return if b.len() < 6 { Step::More } else { Step::Done(6, None) };
    }
    let Some(end) = b[2..].iter().position(|c| (0x40..=0x7e).contains(c)).map(|i| i + 2) else {
        return Step::More;
    };
    let n = end + 1;
    let Ok(params) = std::str::from_utf8(&b[2..end]) else { return Step::Skip(n) };
    let f = b[end];
    let input = if let Some(private) = params.strip_prefix('?') {
        // Replies: a colour-scheme report; keyboard flags and device attributes are not
        // for the UI.
        match (f, private.strip_prefix("997;")) {
            (b'n', Some("1")) => Some(Input::Light(false)),
            (b'n', Some("2")) => Some(Input::Light(true)),
            _ => None,
        }
    } else if params.starts_with(['<', '>', '=']) {
        None // SGR mouse reports and other private replies
    } else {
        let mut fields = params.split(';');
        let first = fields.next().unwrap_or("");
        let (mods, kind, state) = modifiers(fields.next());
        match f {
            b'I' if params.is_empty() => Some(Input::Event(Event::FocusGained)),
            b'O' if params.is_empty() => Some(Input::Event(Event::FocusLost)),
            b'~' if first == "200" => return Step::PasteStart(n),
            b'~' => tilde_key(first).map(|c| key_with(c, mods, kind, state)),
            b'u' => kitty_key(first, mods, kind, state),
            b'Z' => Some(key_with(KeyCode::BackTab, mods | KeyModifiers::SHIFT, kind, state)),
            // `ESC [ row ; col R` is a cursor position report, not F3.
            b'R' if !(first.is_empty() || first == "1") => None,
            _ => final_key(f).map(|c| key_with(c, mods, kind, state)),
        }
    };
    Step::Done(n, input)
}

fn key_with(code: KeyCode, mods: KeyModifiers, kind: KeyEventKind, state: KeyEventState) -> Input {
    Input::Event(Event::Key(KeyEvent::new_with_kind_and_state(code, mods, kind, state)))
}

/// `ESC [ n ~` keys.
fn tilde_key(n: &str) -> Option<KeyCode> {
    Some(match n.parse::<u8>().ok()? {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        n @ 11..=15 => KeyCode::F(n - 10),
        n @ 17..=21 => KeyCode::F(n - 11),
        n @ 23..=26 => KeyCode::F(n - 12),
        n @ 28..=29 => KeyCode::F(n - 13),
        n @ 31..=34 => KeyCode::F(n - 14),
        _ => return None,
    })
}

/// A modifier field `m[:kind]`: the modifier bits are `m - 1`.
fn modifiers(field: Option<&str>) -> (KeyModifiers, KeyEventKind, KeyEventState) {
    let Some(field) = field else {
        return (KeyModifiers::NONE, KeyEventKind::Press, KeyEventState::NONE);
    };
    let mut parts = field.split(':');
    let bits = parts.next().and_then(|m| m.parse::<u16>().ok()).unwrap_or(1).saturating_sub(1);
    let mut mods = KeyModifiers::NONE;
    for (bit, m) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if bits & bit != 0 {
            mods |= m;
        }
    }
    let mut state = KeyEventState::NONE;
    if bits & 64 != 0 {
        state |= KeyEventState::CAPS_LOCK;
    }
    if bits & 128 != 0 {
        state |= KeyEventState::NUM_LOCK;
    }
    let kind = match parts.next() {
        Some("2") => KeyEventKind::Repeat,
        Some("3") => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    (mods, kind, state)
}

/// The kitty keyboard protocol's `CSI code[:shifted[:base]] ; mods[:kind] u`.
fn kitty_key(
    codes: &str,
    mut mods: KeyModifiers,
    kind: KeyEventKind,
    state: KeyEventState,
) -> Option<Input> {
    let mut codes = codes.split(':');
    let code: u32 = codes.next()?.parse().ok()?;
    let mut keycode = match code {
        27 => KeyCode::Esc,
        13 | 57414 => KeyCode::Enter,
        9 if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        9 => KeyCode::Tab,
        127 | 8 => KeyCode::Backspace,
        57358 => KeyCode::CapsLock,
        57359 => KeyCode::ScrollLock,
        57360 => KeyCode::NumLock,
        57361 => KeyCode::PrintScreen,
        57362 => KeyCode::Pause,
        57363 => KeyCode::Menu,
        57376..=57398 => KeyCode::F(u8::try_from(code - 57376 + 13).ok()?),
        57399..=57408 => KeyCode::Char(char::from_digit(code - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57415 => KeyCode::Char('='),
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        57441..=57452 => {
            let (key, m) = match code {
                57441 => (ModifierKeyCode::LeftShift, KeyModifiers::SHIFT),
                57442 => (ModifierKeyCode::LeftControl, KeyModifiers::CONTROL),
                57443 => (ModifierKeyCode::LeftAlt, KeyModifiers::ALT),
                57444 => (ModifierKeyCode::LeftSuper, KeyModifiers::SUPER),
                57445 => (ModifierKeyCode::LeftHyper, KeyModifiers::HYPER),
                57446 => (ModifierKeyCode::LeftMeta, KeyModifiers::META),
                57447 => (ModifierKeyCode::RightShift, KeyModifiers::SHIFT),
                57448 => (ModifierKeyCode::RightControl, KeyModifiers::CONTROL),
                57449 => (ModifierKeyCode::RightAlt, KeyModifiers::ALT),
                57450 => (ModifierKeyCode::RightSuper, KeyModifiers::SUPER),
                57451 => (ModifierKeyCode::RightHyper, KeyModifiers::HYPER),
                _ => (ModifierKeyCode::RightMeta, KeyModifiers::META),
            };
            mods |= m;
            KeyCode::Modifier(key)
        }
        _ => KeyCode::Char(char::from_u32(code)?),
    };
    // With "report alternate keys", Shift+key carries the shifted character.
    if mods.contains(KeyModifiers::SHIFT)
        && let Some(shifted) =
            codes.next().and_then(|c| c.parse::<u32>().ok()).and_then(char::from_u32)
    {
        keycode = KeyCode::Char(shifted);
        mods.remove(KeyModifiers::SHIFT);
    }
    Some(key_with(keycode, mods, kind, state))
}

#[cfg(test)]
mod tests;
