use super::*;

fn parse(chunks: &[&[u8]]) -> Vec<Input> {
    let mut p = Parser::default();
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, &mut out);
    }
    p.flush(&mut out);
    out
}

fn k(code: KeyCode, mods: KeyModifiers) -> Input {
    key(code, mods)
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;

#[test]
fn text_control_bytes_and_alt() {
    assert_eq!(
        parse(&[b"aB\x03\r\t\x7f\x1ba\x1b\r\x00"]),
        [
            k(KeyCode::Char('a'), NONE),
            k(KeyCode::Char('B'), SHIFT),
            k(KeyCode::Char('c'), CTRL),
            k(KeyCode::Enter, NONE),
            k(KeyCode::Tab, NONE),
            k(KeyCode::Backspace, NONE),
            k(KeyCode::Char('a'), ALT),
            k(KeyCode::Enter, ALT),
            k(KeyCode::Char(' '), CTRL),
        ]
    );
    // A character split between reads.
    let e = "é".as_bytes();
    assert_eq!(parse(&[&e[..1], &e[1..]]), [k(KeyCode::Char('é'), NONE)]);
}

#[test]
fn a_lone_escape_is_the_esc_key_only_when_nothing_follows() {
    let mut p = Parser::default();
    let mut out = Vec::new();
    p.feed(b"\x1b", &mut out);
    assert!(out.is_empty() && p.is_pending());
    p.feed(b"[A", &mut out);
    assert_eq!(out, [k(KeyCode::Up, NONE)]);
    p.feed(b"\x1b", &mut out);
    p.flush(&mut out);
    assert_eq!(out[1], k(KeyCode::Esc, NONE));
    assert_eq!(parse(&[b"\x1b\x1b"]), [k(KeyCode::Esc, NONE), k(KeyCode::Esc, NONE)]);
}

#[test]
fn cursor_function_and_editing_keys_with_modifiers() {
    assert_eq!(
        parse(&[b"\x1b[A\x1b[1;5C\x1bOD\x1b[H\x1b[3~\x1b[5;2~\x1b[15~\x1b[Z\x1bOP\x1b[1;2R"]),
        [
            k(KeyCode::Up, NONE),
            k(KeyCode::Right, CTRL),
            k(KeyCode::Left, NONE),
            k(KeyCode::Home, NONE),
            k(KeyCode::Delete, NONE),
            k(KeyCode::PageUp, SHIFT),
            k(KeyCode::F(5), NONE),
            k(KeyCode::BackTab, SHIFT),
            k(KeyCode::F(1), NONE),
            k(KeyCode::F(3), SHIFT),
        ]
    );
    // Split inside the sequence.
    assert_eq!(parse(&[b"\x1b[1;", b"5C"]), [k(KeyCode::Right, CTRL)]);
}

#[test]
fn the_kitty_keyboard_protocol() {
    let release = Input::Event(Event::Key(KeyEvent::new_with_kind(
        KeyCode::Char('a'),
        NONE,
        KeyEventKind::Release,
    )));
    assert_eq!(
        parse(&[b"\x1b[13;2u\x1b[99;5u\x1b[97;1:3u\x1b[97:65;2u\x1b[27u\x1b[9;2u"]),
        [
            k(KeyCode::Enter, SHIFT),
            k(KeyCode::Char('c'), CTRL),
            release,
            k(KeyCode::Char('A'), NONE),
            k(KeyCode::Esc, NONE),
            k(KeyCode::BackTab, SHIFT),
        ]
    );
    let out = parse(&[b"\x1b[57441;2u"]);
    assert!(
        matches!(&out[..], [Input::Event(Event::Key(e))] if e.code == KeyCode::Modifier(ModifierKeyCode::LeftShift)),
        "{out:?}"
    );
}

#[test]
fn a_bracketed_paste_is_one_event_even_split_across_reads() {
    assert_eq!(
        parse(&[b"\x1b[200~hello\r\nwor", b"ld \x1b[A\x1b[20", b"1~x"]),
        [Input::Event(Event::Paste("hello\nworld \x1b[A".into())), k(KeyCode::Char('x'), NONE)]
    );
}

/// What crossterm's parser could not take: the colour-scheme report (after which its
/// parser swallowed the keys typed) and the background colour's answer.
#[test]
fn colour_scheme_reports_and_answers_are_read_and_keys_after_them_still_arrive() {
    assert_eq!(
        parse(&[b"\x1b[?997;2na\x1b[?997;1nb"]),
        [
            Input::Light(true),
            k(KeyCode::Char('a'), NONE),
            Input::Light(false),
            k(KeyCode::Char('b'), NONE)
        ]
    );
    assert_eq!(
        parse(&[b"\x1b]11;rgb:ffff/ffff/ffff\x07x\x1b]11;rgb:0000/0000/0000\x1b\\"]),
        [Input::Light(true), k(KeyCode::Char('x'), NONE), Input::Light(false)]
    );
}

#[test]
fn replies_and_reports_that_are_not_keys_are_skipped_whole() {
    assert_eq!(
        parse(&[b"\x1b[?62;22c\x1b[?15u\x1b_Gi=1;OK\x1b\\\x1b[12;40R\x1b]0;title\x07\x1b[<0;3;4M\x1b[I\x1b[Oz"]),
        [Input::Event(Event::FocusGained), Input::Event(Event::FocusLost), k(KeyCode::Char('z'), NONE)]
    );
    // Garbage that never ends is dropped, not kept forever.
    let mut p = Parser::default();
    let mut out = Vec::new();
    p.feed(b"\x1b]", &mut out);
    p.feed(&vec![b'x'; MAX_SEQUENCE + 10], &mut out);
    p.feed(b"q", &mut out);
    assert_eq!(out, [k(KeyCode::Char('q'), NONE)]);
}

/// Any bytes at all, in any chunks: no panic, and what is kept waiting stays bounded.
#[test]
fn random_bytes_never_panic_and_never_pile_up() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Bytes weighted towards the ones sequences are made of.
    let alphabet = b"\x1b[]O?;:0123456789~uRnMcPI_\\\x07\x1babcAZ\r\t\x7f\xc3\xa9\xe2\x82\xac";
    let mut p = Parser::default();
    let mut out = Vec::new();
    for _ in 0..20_000 {
        let len = (next() % 16) as usize;
        let chunk: Vec<u8> = (0..len)
            .map(|_| match next() % 8 {
                0 => (next() % 256) as u8,
                _ => alphabet[(next() as usize) % alphabet.len()],
            })
            .collect();
        p.feed(&chunk, &mut out);
        if next() % 50 == 0 {
            p.flush(&mut out);
        }
        assert!(p.buf.len() <= MAX_SEQUENCE + 16, "{}", p.buf.len());
        out.clear();
    }
}
