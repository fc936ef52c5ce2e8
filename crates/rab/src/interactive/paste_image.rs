//! Images into the prompt: a pasted path to an image file (what terminals paste when a
//! file is dropped on them), or Ctrl+V with an image on the clipboard. Each becomes a
//! marker in the editor (`[image #1: shot.png 1200x800]`) and goes with the prompt as
//! an image, fitted to the providers' limits; deleting the marker drops it.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::Ui;

/// Largest image file read from a pasted path.
const MAX_FILE: u64 = 64 * 1024 * 1024;

impl Ui {
    /// Attaches the image a pasted text names; `false` when it names none (the text is
    /// pasted as text).
    pub(super) fn paste_image_path(&mut self, text: &str) -> bool {
        let home = self.app.launch.env.get("HOME").map(PathBuf::from);
        let Some(path) = image_path(text, &self.app.launch.cwd, home.as_deref()) else {
            return false;
        };
        match std::fs::read(&path) {
            Ok(bytes) => {
                let name =
                    path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into());
                self.attach_image(&bytes, &name);
            }
            Err(e) => self.app.error(&format!("cannot read {}: {e}", path.display())),
        }
        true
    }

    /// Ctrl+V: the clipboard's image, through the platform's clipboard tool.
    pub(super) fn paste_clipboard_image(&mut self) {
        match clipboard_image() {
            Ok(bytes) => self.attach_image(&bytes, "clipboard"),
            Err(e) => self.app.set_status(e),
        }
    }

    fn attach_image(&mut self, bytes: &[u8], name: &str) {
        let fitted = match rab_tools::image_fit::fit(bytes) {
            Ok(f) => f,
            Err(e) => {
                self.app.error(&format!("{name}: not attached: {e}"));
                return;
            }
        };
        let n = self.images.len() + 1;
        let marker = format!("[image #{n}: {name} {}x{}]", fitted.width, fitted.height);
        if let Some((w, h)) = fitted.resized_from {
            self.app.set_status(format!(
                "{name} ({w}x{h}) was downscaled to {}x{} to fit the providers' limits",
                fitted.width, fitted.height
            ));
        }
        let data = base64::engine::general_purpose::STANDARD.encode(&fitted.bytes);
        self.app.editor.insert_str(&format!("{marker} "));
        self.images.push((marker, rab_ai::Content::Image { mime_type: fitted.mime.into(), data }));
    }

    /// The images whose markers are still in `line` (the others were deleted); all are
    /// forgotten after a send.
    pub(super) fn take_images(&mut self, line: &str) -> Vec<rab_ai::Content> {
        std::mem::take(&mut self.images)
            .into_iter()
            .filter(|(marker, _)| line.contains(marker.as_str()))
            .map(|(_, image)| image)
            .collect()
    }
}

/// The image file a pasted text names: one line, maybe quoted, `file://`, with `\ `
/// escapes or `~/`; relative to `cwd`. Only an existing file that is an image by its
/// first bytes counts.
fn image_path(text: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') || t.len() > 4096 {
        return None;
    }
    let t = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(t);
    let t = match t.strip_prefix("file://") {
        Some(rest) => percent_decode(rest),
        None => t.replace("\\ ", " "),
    };
    let path = match (t.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => cwd.join(&t),
    };
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let mut head = [0u8; 16];
    let n = std::io::Read::read(&mut std::fs::File::open(&path).ok()?, &mut head).ok()?;
    rab_tools::image_fit::mime_of(&head[..n])?;
    Some(path)
}

/// `%20` and friends in a `file://` URL.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The clipboard's image as PNG: `wl-paste` (Wayland), `xclip` (X11), `pngpaste`
/// (macOS), whichever is installed and has one.
fn clipboard_image() -> Result<Vec<u8>, String> {
    let tries: [(&str, &[&str]); 3] = [
        ("wl-paste", &["--no-newline", "--type", "image/png"]),
        ("xclip", &["-selection", "clipboard", "-t", "image/png", "-o"]),
        ("pngpaste", &["-"]),
    ];
    let mut found_tool = false;
    for (tool, args) in tries {
        let Ok(out) = std::process::Command::new(tool)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        found_tool = true;
        if out.status.success() && rab_tools::image_fit::mime_of(&out.stdout).is_some() {
            return Ok(out.stdout);
        }
    }
    Err(if found_tool {
        "No image on the clipboard (copy one, or paste an image file's path)".to_owned()
    } else {
        "No clipboard tool for images: install wl-clipboard (Wayland), xclip (X11) or \
         pngpaste (macOS), or paste an image file's path"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_paths_in_every_form_name_the_image() {
        let dir = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        std::fs::write(dir.path().join("my shot.png"), png).unwrap();
        std::fs::write(dir.path().join("notes.png"), "not an image").unwrap();
        let want = Some(dir.path().join("my shot.png"));
        let abs = dir.path().join("my shot.png").display().to_string();
        assert_eq!(image_path(&format!("'{abs}'"), dir.path(), None), want);
        assert_eq!(image_path(&format!("\"{abs}\"\n"), dir.path(), None), want);
        assert_eq!(image_path(&abs.replace(' ', "\\ "), dir.path(), None), want);
        assert_eq!(
            image_path(&format!("file://{}", abs.replace(' ', "%20")), dir.path(), None),
            want
        );
        assert_eq!(image_path("my shot.png", dir.path(), None), want);
        assert_eq!(image_path("~/my shot.png", Path::new("/"), Some(dir.path())), want);
        assert_eq!(image_path("notes.png", dir.path(), None), None, "not an image");
        assert_eq!(image_path("a\nmy shot.png", dir.path(), None), None, "two lines");
        assert_eq!(image_path("hello world", dir.path(), None), None);
    }
}
