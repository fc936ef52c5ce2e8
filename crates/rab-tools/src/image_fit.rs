//! Images sent to a model, fitted to what the providers take: at most 5 MB
//! (Anthropic's limit, the smallest) and 8000 pixels a side. One that is larger is
//! downscaled (long edge 2048, then smaller while it is still too big) and re-encoded —
//! JPEG for opaque pictures, PNG where there is transparency — instead of refused.
//! Decoding is bounded (50 megapixels, 256 MB), so a crafted file can neither exhaust
//! memory nor keep rab busy for seconds.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Largest image sent as is, in bytes.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
/// Largest side sent as is, in pixels.
pub const MAX_SIDE: u32 = 8000;
/// Long edge of a downscaled image.
const FIT_EDGE: u32 = 2048;
/// Largest image decoded to be downscaled (pixels a side).
const DECODE_SIDE: u32 = 30_000;
/// Largest image decoded to be downscaled, in pixels (a 50-megapixel photo fits): a
/// few bytes can claim a huge canvas, and decoding one takes seconds (found by fuzzing:
/// a 44-byte WebP claiming 10497x15429).
pub const DECODE_PIXELS: u64 = 50_000_000;
/// Memory a decode may take.
const DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// The bytes to send.
    pub bytes: Vec<u8>,
    /// Their MIME type.
    pub mime: &'static str,
    /// Size sent.
    pub width: u32,
    /// Size sent.
    pub height: u32,
    /// The original's size, when it was downscaled.
    pub resized_from: Option<(u32, u32)>,
}

/// The MIME type of an image by its magic bytes (PNG, JPEG, GIF, WebP).
pub fn mime_of(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn format_of(mime: &str) -> Option<ImageFormat> {
    match mime {
        "image/png" => Some(ImageFormat::Png),
        "image/jpeg" => Some(ImageFormat::Jpeg),
        "image/gif" => Some(ImageFormat::Gif),
        "image/webp" => Some(ImageFormat::WebP),
        _ => None,
    }
}

fn reader(bytes: &[u8], format: ImageFormat) -> ImageReader<Cursor<&[u8]>> {
    let mut r = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(DECODE_SIDE);
    limits.max_image_height = Some(DECODE_SIDE);
    limits.max_alloc = Some(DECODE_ALLOC);
    r.limits(limits);
    r
}

/// Width and height from the image's header (nothing decoded).
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let format = format_of(mime_of(bytes)?)?;
    reader(bytes, format).into_dimensions().ok()
}

/// `bytes` as they are when a provider takes them, else downscaled until it does.
pub fn fit(bytes: &[u8]) -> Result<Fitted, String> {
    let mime = mime_of(bytes).ok_or("not a PNG, JPEG, GIF or WebP image")?;
    let format = format_of(mime).ok_or("unsupported image type")?;
    let (width, height) =
        reader(bytes, format).into_dimensions().map_err(|e| format!("unreadable image: {e}"))?;
    if bytes.len() <= MAX_BYTES && width <= MAX_SIDE && height <= MAX_SIDE {
        return Ok(Fitted { bytes: bytes.to_vec(), mime, width, height, resized_from: None });
    }
    check_pixels(width, height)?;
    let image =
        reader(bytes, format).decode().map_err(|e| format!("cannot decode the image: {e}"))?;
    let mut edge = FIT_EDGE;
    loop {
        let small = image.resize(edge, edge, image::imageops::FilterType::Triangle);
        let (out, mime) = encode(&small)?;
        if out.len() <= MAX_BYTES || edge <= 256 {
            return Ok(Fitted {
                width: small.width(),
                height: small.height(),
                bytes: out,
                mime,
                resized_from: Some((width, height)),
            });
        }
        edge /= 2;
    }
}

/// A PNG of the image at most `max_side` pixels a side (for terminals that show PNG
/// only, such as kitty's graphics protocol), with its size.
pub fn thumbnail_png(bytes: &[u8], max_side: u32) -> Result<(Vec<u8>, u32, u32), String> {
    let mime = mime_of(bytes).ok_or("not a PNG, JPEG, GIF or WebP image")?;
    let format = format_of(mime).ok_or("unsupported image type")?;
    let (width, height) =
        reader(bytes, format).into_dimensions().map_err(|e| format!("unreadable image: {e}"))?;
    check_pixels(width, height)?;
    let image =
        reader(bytes, format).decode().map_err(|e| format!("cannot decode the image: {e}"))?;
    let small = if image.width() > max_side || image.height() > max_side {
        image.resize(max_side, max_side, image::imageops::FilterType::Triangle)
    } else {
        image
    };
    let mut out = Vec::new();
    small
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .map_err(|e| format!("cannot encode the image: {e}"))?;
    Ok((out, small.width(), small.height()))
}

/// Refuses to decode more than [`DECODE_PIXELS`].
fn check_pixels(width: u32, height: u32) -> Result<(), String> {
    if u64::from(width) * u64::from(height) > DECODE_PIXELS {
        return Err(format!(
            "{width}x{height} is too large to downscale here (at most {} megapixels)",
            DECODE_PIXELS / 1_000_000
        ));
    }
    Ok(())
}

/// JPEG for opaque images (much smaller for photos), PNG when there is transparency.
fn encode(image: &DynamicImage) -> Result<(Vec<u8>, &'static str), String> {
    let mut out = Vec::new();
    if image.color().has_alpha() {
        image
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .map_err(|e| format!("cannot encode the image: {e}"))?;
        Ok((out, "image/png"))
    } else {
        let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
        rgb.write_with_encoder(encoder).map_err(|e| format!("cannot encode the image: {e}"))?;
        Ok((out, "image/jpeg"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32, noisy: bool) -> Vec<u8> {
        let mut img = image::RgbImage::new(width, height);
        let mut seed = 7u32;
        for p in img.pixels_mut() {
            if noisy {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *p = image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, seed as u8]);
            } else {
                *p = image::Rgb([40, 90, 200]);
            }
        }
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_image_goes_as_it_is() {
        let bytes = png(64, 32, false);
        let f = fit(&bytes).unwrap();
        assert_eq!((f.width, f.height, f.mime, f.resized_from), (64, 32, "image/png", None));
        assert_eq!(f.bytes, bytes);
        assert_eq!(dimensions(&bytes), Some((64, 32)));
    }

    #[test]
    fn a_too_large_image_is_downscaled_below_the_limit() {
        // Noise does not compress: 1400x1400 RGB noise is ~5.9 MB as PNG.
        let bytes = png(1400, 1400, true);
        assert!(bytes.len() > MAX_BYTES, "{}", bytes.len());
        let f = fit(&bytes).unwrap();
        assert!(f.bytes.len() <= MAX_BYTES, "{}", f.bytes.len());
        assert_eq!(f.resized_from, Some((1400, 1400)));
        assert_eq!(f.mime, "image/jpeg");
        assert_eq!(dimensions(&f.bytes), Some((f.width, f.height)));
    }

    #[test]
    fn a_too_wide_image_is_downscaled_even_when_small_in_bytes() {
        let bytes = png(9000, 10, false);
        let f = fit(&bytes).unwrap();
        assert_eq!((f.width, f.resized_from), (2048, Some((9000, 10))));
    }

    #[test]
    fn garbage_and_bombs_are_errors_not_panics() {
        assert!(fit(b"not an image").is_err());
        let truncated = &png(100, 100, true)[..20];
        assert!(fit(truncated).is_err());
        // A PNG header claiming 100000 x 100000 pixels.
        let mut bomb = png(1, 1, false);
        bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        assert!(fit(&bomb).is_err());
        // 44 bytes of WebP claiming 10497x15429 (a fuzzing find: it decoded for seconds).
        let webp = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x29\x11\x0f\x88\x88\xfe\x07WE\x00\x89PG\x0d\x0a\x1a\x0a\x00\xff\xff\x00\x00";
        assert_eq!(dimensions(webp), Some((10497, 15429)));
        let started = std::time::Instant::now();
        let e = fit(webp).unwrap_err();
        assert!(e.contains("too large to downscale"), "{e}");
        // Refused from its header, never decoded (a decode took seconds undebugged; the
        // bound leaves room for a machine busy with other work).
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert!(thumbnail_png(webp, 800).is_err());
    }
}
