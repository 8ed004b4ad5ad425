//! Reading a pickle with the content of its long bytes payloads left out: a lexer that
//! knows how long each opcode's argument is (protocols 0 to 5), and no more. What it
//! leaves out (the [`Gap`]s) is only ever the payload of a `BINBYTES` or `BINBYTES8`; the
//! check ([`super::decode::check_sparse`]) decides whether that is where a payload is.

use std::io::{self, Read, Seek, SeekFrom};

use super::{BINBYTES, BINBYTES8, FRAME, STOP};
use crate::object::Gap;

/// How long each opcode's argument is: `0..=8` that many bytes; [`COUNTED`] plus 1, 4 or
/// 8, a little-endian length of that many bytes and then that many ([`SIGNED`]: a signed
/// 32-bit length); [`LINES`] plus 1 or 2, that many `\n`-terminated lines; [`UNKNOWN`], an
/// opcode the lexer does not know (nor `STOP`).
static ARGS: [u8; 256] = {
    let t = [UNKNOWN; 256];
    // MARK POP POP_MARK DUP NONE REDUCE APPEND BUILD DICT EMPTY_DICT APPENDS LIST
    // EMPTY_LIST SETITEM TUPLE EMPTY_TUPLE SETITEMS BINPERSID OBJ
    let t = set(t, b"(012NRabd}el]st)uQo", 0);
    // NEWOBJ TUPLE1-3 NEWTRUE NEWFALSE EMPTY_SET ADDITEMS FROZENSET NEWOBJ_EX
    // STACK_GLOBAL MEMOIZE NEXT_BUFFER READONLY_BUFFER
    let t = set(t, &[0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98], 0);
    // PROTO BININT1 BINGET BINPUT EXT1
    let t = set(t, &[0x80, b'K', b'h', b'q', 0x82], 1);
    // BININT2 EXT2
    let t = set(t, &[b'M', 0x83], 2);
    // BININT LONG_BINGET LONG_BINPUT EXT4
    let t = set(t, &[b'J', b'j', b'r', 0x84], 4);
    // BINFLOAT FRAME
    let t = set(t, &[b'G', 0x95], 8);
    // SHORT_BINSTRING LONG1 SHORT_BINBYTES SHORT_BINUNICODE
    let t = set(t, &[b'U', 0x8a, b'C', 0x8c], COUNTED + 1);
    // BINSTRING LONG4
    let t = set(t, &[b'T', 0x8b], COUNTED + SIGNED + 4);
    // BINUNICODE BINBYTES
    let t = set(t, b"XB", COUNTED + 4);
    // BINUNICODE8 BINBYTES8 BYTEARRAY8
    let t = set(t, &[0x8d, 0x8e, 0x96], COUNTED + 8);
    // INT LONG FLOAT STRING UNICODE GET PUT PERSID
    let t = set(t, b"ILFSVgpP", LINES + 1);
    // GLOBAL INST
    set(t, b"ci", LINES + 2)
};

/// `t` with `arg` for each of `ops` (a loop, as `const` allows).
const fn set(mut t: [u8; 256], ops: &[u8], arg: u8) -> [u8; 256] {
    let mut i = 0;
    while i < ops.len() {
        t[ops[i] as usize] = arg;
        i += 1;
    }
    t
}
const COUNTED: u8 = 0x10;
const SIGNED: u8 = 0x20;
const LINES: u8 = 0x40;
const UNKNOWN: u8 = 0xff;

/// CPython's pickler writes a bytes payload this long or longer outside frames
/// (`FRAME_SIZE_TARGET` in `Modules/_pickle.c` and `Lib/pickle.py`).
const FRAME_TARGET: u64 = 64 << 10;

/// What the lexer makes of the bytes at an opcode.
enum Step {
    /// A `BINBYTES`/`BINBYTES8` whose header takes this many bytes, then a payload of
    /// `len` at least `min_gap` long.
    Long(usize, u64),
    /// More bytes are needed to tell.
    More,
    /// `STOP`, or an opcode the lexer does not know: no more gaps.
    End,
}

/// Moves `kept` past the opcodes in `bytes` from it until one it cannot pass (the bytes
/// end inside it, it is a long payload, or it ends the lexing); says which.
///
/// With `frames` (gaps of at least [`FRAME_TARGET`] only), a protocol 4 `FRAME` followed
/// by another `FRAME` or by a long bytes opcode is passed whole, its content not lexed:
/// CPython writes every payload of `FRAME_TARGET` or more outside frames, so a frame holds
/// no gap to make, and lexing the opcodes of 300,000 strs took 4 ms of a 35 ms load. A
/// frame followed by anything else (the last, which holds `STOP`) is lexed opcode by
/// opcode. A frame passed wrongly (one with a long payload inside, or `STOP` and then
/// bytes that look like a frame) costs only a gap not made, or bytes read past `STOP` up
/// to the file's end as after an unknown opcode.
#[inline]
fn lex(bytes: &[u8], kept: &mut usize, min_gap: u64, frames: bool) -> Step {
    let mut pos = *kept;
    let step = loop {
        let Some(&op) = bytes.get(pos) else { break Step::More };
        if frames && op == FRAME {
            let Some(field) = bytes.get(pos + 1..pos + 9) else { break Step::More };
            let len = u64::from_le_bytes(field.try_into().expect("8 bytes"));
            // (A frame longer than memory is lexed as any other opcode: the check refuses it.)
            if let Some(end) = usize::try_from(len).ok().and_then(|len| (pos + 9).checked_add(len)) {
                match bytes.get(end) {
                    None => break Step::More,
                    Some(&next) if next == FRAME || next == BINBYTES || next == BINBYTES8 => {
                        pos = end;
                        continue;
                    }
                    Some(_) => {}
                }
            }
        }
        let arg = ARGS[usize::from(op)];
        let total = if arg <= 8 {
            1 + usize::from(arg)
        } else if arg == UNKNOWN {
            // STOP, or unknown.
            break Step::End;
        } else if arg & COUNTED != 0 {
            let k = usize::from(arg & 0xf);
            let Some(field) = bytes.get(pos + 1..pos + 1 + k) else { break Step::More };
            let mut le = [0u8; 8];
            le[..k].copy_from_slice(field);
            let len = u64::from_le_bytes(le);
            if arg & SIGNED != 0 && len >= 1 << 31 {
                // A negative length: the check refuses it.
                break Step::End;
            }
            if (op == BINBYTES || op == BINBYTES8) && len >= min_gap {
                break Step::Long(1 + k, len);
            }
            match usize::try_from(len).ok().and_then(|len| len.checked_add(1 + k)) {
                Some(total) => total,
                None => break Step::End,
            }
        } else {
            // LINES: the one kind left.
            let mut end = pos + 1;
            let mut more = false;
            for _ in 0..arg & 0xf {
                match bytes[end..].iter().position(|&b| b == b'\n') {
                    Some(nl) => end += nl + 1,
                    None => {
                        more = true;
                        break;
                    }
                }
            }
            if more {
                break Step::More;
            }
            end - pos
        };
        if bytes.len() - pos < total {
            break Step::More;
        }
        pos += total;
    };
    *kept = pos;
    step
}

/// Reads the pickle at `reader`'s position, up to its `STOP`, leaving out the payloads of
/// `BINBYTES` and `BINBYTES8` opcodes at least `min_gap` bytes long (seeking past them,
/// unless read already: bytes are read `min_gap` at a time, at least 64 and at most 1 MiB):
/// the bytes kept and the gaps, in order. After an opcode it does not know, it reads
/// to the end. A file that ends early ends the bytes early (the check then says where).
pub(crate) fn read_sparse<R: Read + Seek>(mut reader: R, min_gap: u64) -> io::Result<(Vec<u8>, Vec<Gap>)> {
    let min_gap = min_gap.max(1);
    // Bytes read at a time: at most this much of a payload left out is read and dropped,
    // and a payload left out is at least this long (unless it was read already).
    let chunk = min_gap.clamp(64, 1 << 20);
    // (Reserving the rest of the file up front made reading 11 MB of ragged arrays take
    // 12.7 ms instead of 8.5: the allocator's fresh pages, faulted in each time.)
    // (Reusing the last pickle's buffer, faulted in already, made loads of 300,000 strs 8%
    // slower than this fresh one.)
    let (mut bytes, mut gaps) = (Vec::new(), Vec::<Gap>::new());
    // The next opcode's offset in `bytes`, and the bytes left out before it.
    let (mut kept, mut left_out) = (0usize, 0u64);
    let mut eof = false;
    loop {
        // Frames are passed whole until the file ends: then the rest is lexed to `STOP`.
        match lex(&bytes, &mut kept, min_gap, !eof && min_gap >= FRAME_TARGET) {
            Step::Long(header, len) => {
                let start = kept + header;
                let have = (bytes.len() - start) as u64;
                if have >= len {
                    // Read already (a payload shorter than a chunk): kept.
                    kept = start + len as usize;
                    continue;
                }
                bytes.truncate(start);
                match i64::try_from(len - have) {
                    Ok(skip) if !eof => {
                        reader.seek(SeekFrom::Current(skip))?;
                    }
                    // Past any file: what follows is not there.
                    _ => eof = true,
                }
                gaps.push(Gap { at: start as u64 + left_out, kept: start, len });
                left_out += len;
                kept = start;
            }
            Step::More if !eof => {
                bytes.reserve(chunk as usize);
                let got = reader.by_ref().take(chunk).read_to_end(&mut bytes)?;
                eof = got == 0;
            }
            Step::More => break,
            Step::End => {
                if bytes.get(kept) == Some(&STOP) {
                    bytes.truncate(kept + 1);
                } else if !eof {
                    reader.read_to_end(&mut bytes)?;
                }
                break;
            }
        }
    }
    Ok((bytes, gaps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::pickle::opcode_name;

    #[test]
    fn the_lexer_knows_every_opcode_but_stop_and_no_other() {
        for op in 0..=255u8 {
            let known = ARGS[usize::from(op)] != UNKNOWN;
            assert_eq!(known, opcode_name(op).is_some() && op != STOP, "0x{op:02x}");
        }
    }

    #[test]
    fn gaps_are_payloads_of_long_binbytes_only() {
        // PROTO 4, BINUNICODE of 100, BINBYTES of 100, BYTEARRAY8 of 100, BINBYTES8 of
        // 100, SHORT_BINBYTES of 100, STOP, then bytes that are not read; from offset 3.
        let mut p = b"abc\x80\x04".to_vec();
        p.extend([&b"X"[..], &100u32.to_le_bytes(), &[b'u'; 100]].concat());
        p.extend([&b"B"[..], &100u32.to_le_bytes(), &[b'b'; 100]].concat());
        p.extend([&[0x96][..], &100u64.to_le_bytes(), &[b'y'; 100]].concat());
        p.extend([&[0x8e][..], &100u64.to_le_bytes(), &[b'c'; 100]].concat());
        p.extend([&b"C"[..], &[100], &[b's'; 100]].concat());
        p.extend(b".after");
        let mut reader = io::Cursor::new(&p);
        reader.set_position(3);
        let (bytes, gaps) = read_sparse(&mut reader, 100).unwrap();
        assert_eq!(bytes, [&p[3..115], &p[215..333], &p[433..536]].concat());
        assert_eq!(gaps, [Gap { at: 112, kept: 112, len: 100 }, Gap { at: 330, kept: 230, len: 100 }]);
        // Shorter than `min_gap`: all kept; cut short: what there is.
        assert!(read_sparse(io::Cursor::new(&p[3..]), 101).unwrap().1.is_empty());
        let (bytes, gaps) = read_sparse(io::Cursor::new(&p[3..150]), 100).unwrap();
        assert_eq!((bytes.len(), gaps.len()), (112, 1));
        // An opcode the lexer does not know: the rest is read whole.
        let (bytes, gaps) = read_sparse(io::Cursor::new(b"\x80\x04\xa0B\x00\x01\x00\x00."), 1).unwrap();
        assert_eq!((bytes.len(), gaps.len()), (9, 0));
    }

    #[test]
    fn frames_followed_by_frames_or_long_payloads_are_passed_whole() {
        let frame = |content: &[u8]| [&[FRAME][..], &(content.len() as u64).to_le_bytes(), content].concat();
        let long = |fill: u8, len: u32| [&b"B"[..], &len.to_le_bytes(), &vec![fill; len as usize]].concat();
        let (gap, more) = (FRAME_TARGET, FRAME_TARGET as u32 + 100);
        // A long BINBYTES inside the first frame is kept (the frame is not lexed); one
        // after it is a gap; the last frame, followed by bytes that are not a frame, is
        // lexed to its STOP, and nothing after that is kept.
        let (inside, outside) = (long(b'i', more), long(b'o', more));
        let last = [&b"\x8c\x02ab"[..], b"."].concat();
        let p = [&b"\x80\x04"[..], &frame(&inside), &outside, &frame(&last), b"junk"].concat();
        let (bytes, gaps) = read_sparse(io::Cursor::new(&p), gap).unwrap();
        let (at, stop) = (2 + 9 + inside.len() + 5, p.len() - 4);
        assert_eq!(bytes, [&p[..at], &p[at + more as usize..stop]].concat());
        assert_eq!(gaps, [Gap { at: at as u64, kept: at, len: u64::from(more) }]);
        // Gaps shorter than frames may be: frames are lexed, and the one inside is a gap.
        let (_, gaps) = read_sparse(io::Cursor::new(&p), gap - 1).unwrap();
        assert_eq!(gaps.len(), 2);
        // A last frame at the file's end is lexed to its STOP once the file ends.
        let p = [&b"\x80\x04"[..], &frame(&[&inside[..], b".junk"].concat())].concat();
        let (bytes, gaps) = read_sparse(io::Cursor::new(&p), gap).unwrap();
        assert_eq!((bytes, gaps), (p[..p.len() - 4].to_vec(), vec![]));
        // A frame that claims more than the file holds is lexed once the file ends.
        let mut p = [&b"\x80\x04"[..], &frame(&last)].concat();
        p[3..11].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let (bytes, gaps) = read_sparse(io::Cursor::new(&p), gap).unwrap();
        assert_eq!((bytes, gaps), (p.clone(), vec![]));
    }
}
