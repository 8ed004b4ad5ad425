//! The part index of a member compressed in independent parts (`parts`): where each
//! part's stream starts, so a reader can decompress the parts at once, each into its own
//! place. It is a central directory extra field of ID [`ID`] (0x706e, the bytes "np"),
//! which NumPy, Python's `zipfile` and other zip readers skip, as the zip format says
//! readers do with IDs they do not know.
//!
//! Its body, little-endian: a version byte (1), the parts' length when decompressed
//! (`u32`, every part's but the last, which holds the rest), then the compressed length of
//! each part but the last (`u32` each; the last runs to the member's end and ends the
//! stream). In a deflated member each part but the last ends byte-aligned after an empty
//! stored block that is not final (a sync flush), and no part copies from data before it;
//! in a Zstandard one each part is whole frames.
//!
//! [`decode`] checks that the index fits the member (part count, lengths); what it claims
//! of the stream is checked as the parts decompress (`whole`).

use std::ops::Range;

/// The extra field's header ID: "np".
pub(super) const ID: u16 = u16::from_le_bytes(*b"np");
const VERSION: u8 = 1;
/// Bytes before the lengths: the version and the parts' length.
const FIXED: usize = 5;
/// The most parts an index lists: its field (with its 4-byte header, and a zip64 field of
/// at most 32 bytes beside it) fits in the 65,535 bytes of a central header's extra field.
pub(super) const MAX_PARTS: usize = 16_000;

/// A part of a member: its compressed bytes and its data, as offsets in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    pub(super) compressed: Range<usize>,
    pub(super) data: Range<usize>,
}

/// The index of a member of parts of `part_len` bytes, all but the last of which were
/// compressed to `lens` bytes each; `None` for one part, or more than
/// [`MAX_PARTS`].
pub(super) fn encode(part_len: usize, lens: &[usize]) -> Option<Vec<u8>> {
    if lens.is_empty() || lens.len() >= MAX_PARTS {
        return None;
    }
    let mut body = Vec::with_capacity(FIXED + 4 * lens.len());
    body.push(VERSION);
    body.extend_from_slice(&u32::try_from(part_len).ok()?.to_le_bytes());
    for &len in lens {
        body.extend_from_slice(&u32::try_from(len).ok()?.to_le_bytes());
    }
    Some(body)
}

/// The parts `body` lists for a member of `size` bytes compressed into `compressed`; why
/// not, when the index does not fit the member.
pub(super) fn decode(body: &[u8], size: usize, compressed: usize) -> Result<Vec<Part>, String> {
    if body.len() < FIXED || !(body.len() - FIXED).is_multiple_of(4) {
        return Err(format!("its part index (extra field 0x{ID:04x}) is {} bytes long", body.len()));
    }
    if body[0] != VERSION {
        return Err(format!("its part index (extra field 0x{ID:04x}) is of version {}, not {VERSION}", body[0]));
    }
    let le32 = |at: usize| u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]) as usize;
    let part_len = le32(1);
    let count = (body.len() - FIXED) / 4 + 1;
    // Every part but the last is full, and the last holds at least a byte.
    let full = part_len.checked_mul(count - 1).filter(|&full| part_len > 0 && full < size);
    if full.is_none() || part_len.checked_mul(count).is_some_and(|all| all < size) {
        return Err(format!(
            "its part index lists {count} parts of {part_len} bytes, which do not make its {size} bytes"
        ));
    }
    let mut parts = Vec::with_capacity(count);
    let mut at = 0usize;
    for k in 0..count {
        let data = k * part_len..((k + 1) * part_len).min(size);
        let end = if k + 1 == count { Some(compressed) } else { at.checked_add(le32(FIXED + 4 * k)) };
        match end {
            Some(end) if end > at && end <= compressed => parts.push(Part { compressed: at..end, data }),
            _ => {
                return Err(format!(
                    "its part index places part {} of {count} past the member's {compressed} compressed bytes",
                    k + 1
                ))
            }
        }
        at = parts[k].compressed.end;
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_reads_back_and_one_that_does_not_fit_its_member_is_refused() {
        let body = encode(100, &[40, 30]).unwrap();
        assert_eq!(body.len(), 13);
        let parts = decode(&body, 250, 90).unwrap();
        assert_eq!(
            parts,
            [
                Part { compressed: 0..40, data: 0..100 },
                Part { compressed: 40..70, data: 100..200 },
                Part { compressed: 70..90, data: 200..250 },
            ]
        );
        assert_eq!(decode(&body, 201, 71).unwrap()[2], Part { compressed: 70..71, data: 200..201 });
        assert_eq!(encode(100, &[]), None, "one part needs no index");
        assert_eq!(encode(100, &vec![1; MAX_PARTS]), None);
        assert_eq!(encode(1 << 32, &[1]), None);

        let refused = |body: &[u8], size: usize, compressed: usize| decode(body, size, compressed).unwrap_err();
        // Parts that do not make the member's size: too few, too many, of length 0.
        assert!(refused(&body, 301, 90).contains("do not make its 301 bytes"));
        assert!(refused(&body, 200, 90).contains("do not make its 200 bytes"));
        assert!(refused(&encode(0, &[1]).unwrap(), 0, 90).contains("parts of 0 bytes"));
        assert!(refused(&encode(u32::MAX as usize, &[1; 3]).unwrap(), usize::MAX, 90).contains("4 parts"));
        // Deflated lengths past the member's, or of 0 bytes, or leaving the last part none.
        assert!(refused(&body, 250, 69).contains("part 2 of 3 past"));
        assert!(refused(&body, 250, 70).contains("part 3 of 3 past"));
        assert!(refused(&encode(100, &[0, 30]).unwrap(), 250, 90).contains("part 1 of 3"));
        assert!(
            refused(&encode(100, &[u32::MAX as usize; 2]).unwrap(), 250, 2 * u32::MAX as usize).contains("part 3 of 3")
        );
        // A body of the wrong shape or version.
        assert!(refused(&body[..12], 250, 90).contains("12 bytes long"));
        assert!(refused(&body[..3], 250, 90).contains("3 bytes long"));
        let mut v2 = body.clone();
        v2[0] = 2;
        assert!(refused(&v2, 250, 90).contains("version 2"));
    }
}
