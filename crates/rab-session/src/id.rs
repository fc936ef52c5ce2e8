//! Identifiers: UUIDv7 for sessions (they sort by creation time, so file names do
//! too), short random hex for entries (unique within their file).

use crate::time::now_millis;

/// A UUIDv7 string: 48 bits of milliseconds, version 7, 74 random bits.
pub fn session_id() -> String {
    let ms = now_millis() & 0xFFFF_FFFF_FFFF;
    let rand_a = fastrand::u16(..) & 0x0FFF;
    let rand_b = fastrand::u64(..) & 0x3FFF_FFFF_FFFF_FFFF;
    let hi = (ms << 16) | 0x7000 | u64::from(rand_a);
    let lo = 0x8000_0000_0000_0000 | rand_b;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// An 8-hex-digit entry id.
pub fn entry_id() -> String {
    format!("{:08x}", fastrand::u32(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_uuid_v7_and_sort_by_time() {
        let a = session_id();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "7");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(session_id() > a);
    }
}
