//! An arbitrary file read as an image (`read` of a picture, a pasted image): fitted to
//! the providers' limits and its size read, never a panic, a hang or an allocation past
//! the decode bounds. What comes back is an image whose size is what it says.

use rab_tools::image_fit::{MAX_BYTES, MAX_SIDE, dimensions, fit};

/// One input, as the fuzz target gets it.
pub fn run(data: &[u8]) {
    let _ = dimensions(data);
    if let Ok(f) = fit(data) {
        assert!(f.bytes.len() <= MAX_BYTES || f.resized_from.is_none() && data.len() <= MAX_BYTES);
        if f.resized_from.is_some() {
            assert!(f.width <= MAX_SIDE && f.height <= MAX_SIDE);
            assert_eq!(dimensions(&f.bytes), Some((f.width, f.height)));
        }
    }
}
