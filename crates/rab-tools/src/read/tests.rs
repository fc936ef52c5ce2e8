use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use rab_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use rab_ai::Content;
use serde_json::{Value, json};

use super::*;

async fn read(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
    Read::new(Workspace::new(dir)).execute(args, ToolContext::detached("c1")).await
}

async fn read_text(dir: &Path, args: Value) -> String {
    let out = read(dir, args).await.unwrap();
    match out.content.as_slice() {
        [Content::Text { text }] => text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

async fn read_err(dir: &Path, args: Value) -> String {
    match read(dir, args).await {
        Err(ToolError::Model(msg)) => msg,
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("{i}\tline {i}")).collect::<Vec<_>>().join("\n")
}

fn write_lines(path: &Path, n: usize) {
    let text: String = (1..=n).map(|i| format!("line {i}\n")).collect();
    fs::write(path, text).unwrap();
}

#[test]
fn spec_stays_small() {
    let spec = Read::new(Workspace::new(Path::new("/"))).spec();
    let len = serde_json::to_string(&spec).unwrap().len();
    assert!(len < 500, "read spec is {len} bytes");
}

#[tokio::test]
async fn reads_a_one_line_file_as_number_tab_text() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "hello").unwrap();
    assert_eq!(read_text(dir.path(), json!({"path": "a.txt"})).await, "1\thello");
    fs::write(dir.path().join("b.txt"), "hello\n").unwrap();
    assert_eq!(read_text(dir.path(), json!({"path": "b.txt"})).await, "1\thello");
}

#[tokio::test]
async fn strips_crlf_and_keeps_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a\r\n\r\nb\r\n").unwrap();
    assert_eq!(read_text(dir.path(), json!({"path": "a.txt"})).await, "1\ta\n2\t\n3\tb");
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_say_how_to_continue() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(&dir.path().join("a.txt"), 10);
    let text = read_text(dir.path(), json!({"path": "a.txt", "offset": 3, "limit": 2})).await;
    assert_eq!(
        text,
        format!(
            "{}\n\n[lines 3-4 of 10 shown; call read with offset=5 to continue]",
            numbered(3..=4)
        )
    );
    let text = read_text(dir.path(), json!({"path": "a.txt", "offset": 9})).await;
    assert_eq!(text, numbered(9..=10));
}

#[tokio::test]
async fn caps_at_2000_lines() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(&dir.path().join("a.txt"), 5000);
    let text = read_text(dir.path(), json!({"path": "a.txt"})).await;
    assert_eq!(
        text,
        format!(
            "{}\n\n[lines 1-2000 of 5000 shown; call read with offset=2001 to continue]",
            numbered(1..=2000)
        )
    );
    let text = read_text(dir.path(), json!({"path": "a.txt", "offset": 4001, "limit": 5000})).await;
    assert_eq!(text, numbered(4001..=5000));
}

#[tokio::test]
async fn caps_at_50_kb() {
    let dir = tempfile::tempdir().unwrap();
    let line = "x".repeat(99);
    fs::write(dir.path().join("a.txt"), format!("{line}\n").repeat(1000)).unwrap();
    let text = read_text(dir.path(), json!({"path": "a.txt"})).await;
    let (body, note) = text.split_once("\n\n").unwrap();
    assert!(body.len() <= MAX_BYTES);
    let shown = body.lines().count();
    assert_eq!(
        note,
        format!(
            "[lines 1-{shown} of 1000 shown (50 KB limit); call read with offset={} to continue]",
            shown + 1
        )
    );
}

#[tokio::test]
async fn cuts_very_long_lines_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), format!("{}\nshort\n", "é".repeat(5000))).unwrap();
    let text = read_text(dir.path(), json!({"path": "a.txt"})).await;
    let expected = format!(
        "1\t{}… [line cut at 2000 characters of 9.8 KB]\n2\tshort",
        "é".repeat(MAX_LINE_CHARS)
    );
    assert_eq!(text, expected);
}

#[tokio::test]
async fn offset_past_the_end_says_how_many_lines_there_are() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(&dir.path().join("a.txt"), 3);
    let msg = read_err(dir.path(), json!({"path": "a.txt", "offset": 10})).await;
    assert_eq!(msg, "offset 10 is past the end of a.txt, which has 3 lines");
}

#[tokio::test]
async fn missing_file_names_the_path_and_similar_files() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/main.rs"), "").unwrap();
    let msg = read_err(dir.path(), json!({"path": "src/mian.rs"})).await;
    assert_eq!(msg, "file not found: src/mian.rs; similar: src/main.rs");
    let msg = read_err(dir.path(), json!({"path": "nope/x.rs"})).await;
    assert_eq!(msg, "file not found: nope/x.rs (directory nope does not exist)");
    let msg = read_err(dir.path(), json!({"path": "src/zzzzzz"})).await;
    assert_eq!(msg, "file not found: src/zzzzzz");
}

#[tokio::test]
async fn a_directory_points_to_ls() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("src")).unwrap();
    let msg = read_err(dir.path(), json!({"path": "src"})).await;
    assert_eq!(msg, "src is a directory; use ls to list it");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.bin"), b"abc\0def").unwrap();
    let msg = read_err(dir.path(), json!({"path": "a.bin"})).await;
    assert_eq!(msg, "binary file a.bin (7 B) not shown; read only shows text and images");
    let noise: Vec<u8> = (0..2000u32).map(|i| (i * 7 % 255 + 1) as u8).collect();
    fs::write(dir.path().join("noise"), noise).unwrap();
    assert!(read_err(dir.path(), json!({"path": "noise"})).await.starts_with("binary file"));
}

#[tokio::test]
async fn mostly_text_non_utf8_is_shown_lossily_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("latin1.txt"), b"caf\xe9 au lait\nplain\n").unwrap();
    let text = read_text(dir.path(), json!({"path": "latin1.txt"})).await;
    assert_eq!(
        text,
        "1\tcaf\u{fffd} au lait\n2\tplain\n\n[file is not valid UTF-8; invalid bytes are shown as �]"
    );
}

#[tokio::test]
async fn empty_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("e.txt"), "").unwrap();
    assert_eq!(read_text(dir.path(), json!({"path": "e.txt"})).await, "e.txt is empty (0 bytes)");
}

#[tokio::test]
async fn images_are_attached_by_magic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    fs::write(dir.path().join("pic.dat"), &png).unwrap();
    let out = read(dir.path(), json!({"path": "pic.dat"})).await.unwrap();
    assert_eq!(
        out.content,
        vec![
            Content::text("image pic.dat (image/png, 16 B)"),
            Content::Image {
                mime_type: "image/png".into(),
                data: base64::engine::general_purpose::STANDARD.encode(&png),
            },
        ]
    );
    // Named like an image but not one: read as the text it is.
    fs::write(dir.path().join("fake.png"), "not a png").unwrap();
    assert_eq!(read_text(dir.path(), json!({"path": "fake.png"})).await, "1\tnot a png");
}

#[tokio::test]
async fn an_image_over_the_limits_is_downscaled_and_one_that_cannot_be_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // 9000 px wide: over the 8000 px a side providers take.
    let mut wide = Vec::new();
    image::DynamicImage::ImageRgb8(image::RgbImage::new(9000, 20))
        .write_to(&mut std::io::Cursor::new(&mut wide), image::ImageFormat::Png)
        .unwrap();
    fs::write(dir.path().join("wide.png"), &wide).unwrap();
    let out = read(dir.path(), json!({"path": "wide.png"})).await.unwrap();
    let Content::Text { text } = &out.content[0] else { panic!("{:?}", out.content) };
    assert!(text.starts_with("image wide.png (image/png, 9000x20,"), "{text}");
    assert!(text.contains("downscaled to 2048x5 (image/jpeg"), "{text}");
    let Content::Image { mime_type, data } = &out.content[1] else { panic!() };
    assert_eq!(mime_type, "image/jpeg");
    let sent = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    assert_eq!(crate::image_fit::dimensions(&sent), Some((2048, 5)));
    // 6 MB that only starts like a JPEG: too big to send, impossible to shrink.
    let mut jpg = vec![0xFF, 0xD8, 0xFF, 0xE0];
    jpg.resize(6 * 1024 * 1024, 0);
    fs::write(dir.path().join("big.jpg"), jpg).unwrap();
    let msg = read_err(dir.path(), json!({"path": "big.jpg"})).await;
    assert!(
        msg.starts_with(
            "image big.jpg is 6.0 MB, over the providers' 5 MB, and cannot be downscaled"
        ),
        "{msg}"
    );
}

#[tokio::test]
async fn limit_zero_and_bad_arguments_are_model_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_lines(&dir.path().join("a.txt"), 3);
    assert_eq!(
        read_err(dir.path(), json!({"path": "a.txt", "limit": 0})).await,
        "limit must be at least 1"
    );
    assert!(read_err(dir.path(), json!({"offset": 1})).await.starts_with("invalid arguments"));
}

#[test]
fn next_line_keeps_only_a_prefix_of_huge_lines() {
    let data = format!("{}\r\nb", "a".repeat(100));
    let mut reader = io::BufReader::with_capacity(7, data.as_bytes());
    let mut buf = Vec::new();
    assert_eq!(next_line(&mut reader, &mut buf, 10).unwrap(), Some(101));
    assert_eq!(buf, b"aaaaaaaaaa");
    buf.clear();
    assert_eq!(next_line(&mut reader, &mut buf, 10).unwrap(), Some(1));
    assert_eq!(buf, b"b");
    buf.clear();
    assert_eq!(next_line(&mut reader, &mut buf, 10).unwrap(), None);
}

#[cfg(unix)]
#[tokio::test]
async fn devices_are_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let msg = read_err(dir.path(), json!({"path": "/dev/null"})).await;
    assert_eq!(msg, "/dev/null is not a regular file");
}
