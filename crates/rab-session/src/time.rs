//! Timestamps: RFC 3339 in UTC with milliseconds, computed from the system clock without
//! a date library (the civil-from-days algorithm of H. Hinnant).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `(year, month 1-12, day 1-31)` of a day count since 1970-01-01 (UTC).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-11-22T07:34:04.123Z` for a millisecond timestamp.
pub fn rfc3339(millis: u64) -> String {
    let secs = (millis / 1000) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        millis % 1000
    )
}

/// Milliseconds since the Unix epoch of an RFC 3339 time (`2026-10-02T09:00:00.250Z`,
/// `2026-10-02T11:00:00+02:00`, fractions of any length), or `None` when it is not one.
/// For times written by other programs (imported sessions).
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0_i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0_i64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        // The first three digits, padded: `.5` is 500 ms.
        let digits: String = s[start..i].chars().chain("000".chars()).take(3).collect();
        millis = digits.parse().ok()?;
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && sep(i + 3, b":") => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            if *sign == b'+' { oh * 60 + om } else { -(oh * 60 + om) }
        }
        _ => return None,
    };
    let secs =
        days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec.min(59) - offset_minutes * 60;
    u64::try_from(secs * 1000 + millis).ok()
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (the inverse of [`civil_from_days`]).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-22` for a millisecond timestamp.
pub fn date(millis: u64) -> String {
    rfc3339(millis)[..10].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_333_444_123), "2026-11-22T07:44:04.123Z");
        assert_eq!(date(1_795_333_444_123), "2026-11-22");
    }

    #[test]
    fn reads_rfc3339_written_elsewhere_and_refuses_what_is_not() {
        for (s, ms) in [
            ("2026-11-22T07:44:04.123Z", 1_795_333_444_123),
            ("2026-11-22T07:44:04Z", 1_795_333_444_000),
            ("2026-11-22T09:44:04.1234567+02:00", 1_795_333_444_123),
            ("2026-11-22T02:14:04.5-05:30", 1_795_333_444_500),
            ("2000-02-29T00:00:00.000Z", 951_782_400_000),
            ("1970-01-01T00:00:00Z", 0),
        ] {
            assert_eq!(parse_rfc3339(s), Some(ms), "{s}");
            assert_eq!(rfc3339(parse_rfc3339(s).unwrap()), rfc3339(ms));
        }
        for bad in [
            "",
            "t",
            "2026-11-22",
            "2026-11-22T07:44:04",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T07:44:04.Z",
            "2026-11-22T07:44:04Zjunk",
            "2026-11-22T07:44:04+0200",
            "1969-12-31T23:59:59Z",
            "2026-11-22T07:44:04\u{1b}[2J",
            "２026-11-22T07:44:04Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
