//! One part of a deflated member, deflated by the fastest encoder that comes within
//! [`SIZE_MARGIN`] of zlib's size for it. zlib at the asked level is what CPython (and so
//! `np.savez_compressed`) writes; it is the reference and the fallback. The others are
//! tried in a fixed order, fastest first, on a sample of slices along the part (four of
//! 64 KiB; one of 32 KiB, the middle, below a MiB), deflated by zlib too: measured, not
//! guessed, and the same bytes every time for the same data. (A part's start, which
//! zlib's stream could have gone on from, is a poor sample: a short ramp of floats,
//! NumPy's header before it, came out 1.41 times zlib's size by libdeflate 2.)
//!
//! Why these, one core, whole arrays of the deflate bench's kinds against zlib 6 (size,
//! time; CHANGELOG, issue 82): zlib-rs's run-length matching (zeros: 1.000, 0.09; random
//! floats: 0.997, 0.21), libdeflate at level 2 (samples, walks, ids, images: 0.99 to 1.006
//! in 0.05 to 0.56), zlib-rs at 4 (small integers: 1.012 in 0.21) and 5 (integers 0-49:
//! 0.958 in 0.30). None of libdeflate's levels is both near zlib's size and fast on every
//! kind; zlib-rs below level 6 skips the 3-byte matches arrays of numbers are full of.
//! Each is right on some kinds only, so the sample decides. libdeflate 6, a candidate
//! before, was chosen for no kind of the bench and is no longer one: no sample of a part
//! told its size on smooth signals, which grows against zlib's with the length it is
//! given (rounded sines, `<f4`: 0.97 of zlib's on four slices of 64 KiB, 1.07 on the
//! part; the traces' samples: 1.00, 1.05). zlib-rs's Huffman coding alone, tried first
//! before, was only 0.024 faster than its runs on random floats and twice zlib's time per
//! byte on data that deflates well, where every part paid for trying it. Text of `<U8`
//! words is nobody's: zlib-rs 6 and libdeflate 7 come nearest (0.999 in 0.94; 1.028 in
//! 0.92), so it stays zlib's.
//!
//! Every encoder deflates a part on its own (nothing in it copies from the data before it,
//! so readers can inflate parts at once: `part_index`) and leaves its stream open, as
//! [`super::parts`] joins parts: byte-aligned, without a final block. zlib and
//! zlib-rs end with a sync flush; libdeflate cannot, and [`open`] turns the final block it
//! always writes into one that is not.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use flate2::{Compress, Compression, FlushCompress};
#[cfg(not(any(target_family = "wasm", miri)))]
use libdeflater::{CompressionLvl, Compressor};
#[cfg(not(any(target_family = "wasm", miri)))]
use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Strategy};

/// Input handed to an encoder at a time, so a dropped archive stops a part soon.
const STEP: usize = 1 << 20;
/// The slices of a part of [`SMALL`] or more the encoders are measured on are twice
/// deflate's window (32 KiB) long. On a smooth signal libdeflate's size against zlib's
/// grows with the length it is given, and slices of 32 KiB chose it for rounded sines
/// 1.08 times zlib's size (`<f8`; a sample of four slices of 64 KiB: zlib's, 1.003).
/// Slices of 16 KiB ranked libdeflate 2 on a ramp of floats at 0.977 of zlib's size where
/// the part was 1.347 times it.
const SLICE: usize = 64 << 10;
/// A part's sample, four slices (1/16 of a part of 4 MiB); zlib's time on it is what
/// choosing costs most. Three slices, or four of 48 KiB, left the sines 1.03 and 1.05.
pub(super) const SAMPLE: usize = 4 * SLICE;
/// The one slice of a part shorter than [`SMALL`], its middle: deflate's window.
const SMALL_SLICE: usize = 32 << 10;
/// The shortest part an encoder is chosen for. Below [`SMALL`] the sample is one slice.
const CHOICE_MIN: usize = 256 << 10;
/// Parts shorter than this are sampled in one slice, their middle, and chosen for only if
/// zlib leaves more than a tenth of it. zlib's time on the sample weighs most there: two
/// slices were 16% of it for the traces' 400 KB of ids (zlib: 67 ns a byte), whose write
/// took 0.24 of NumPy's time (one: 0.17). Data zlib shrinks further it deflates at a byte
/// every 2 ns or so, and no candidate was three times faster there, so the trials cost
/// more than they saved: the traces' 800 KB of start times (1%), by libdeflate 6 in 0.56
/// of zlib's time, took 1.07 of NumPy's time in all against 0.89 by zlib alone.
const SMALL: usize = 1 << 20;
/// How much larger than zlib's a candidate's sample may deflate and still be chosen. The
/// members' goal is 1.02 of NumPy's size; the rest is left for a sample that says less
/// than the whole part.
const SIZE_MARGIN: f64 = 1.015;

/// An encoder of deflate parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoder {
    /// zlib-rs's matches of the byte before only (runs).
    Runs,
    /// libdeflate at a level.
    Libdeflate(i32),
    /// zlib-rs at a level.
    ZlibRs(i32),
    /// zlib, CPython's, at a level.
    Zlib(u32),
}

/// The encoders tried, fastest first (one core, the bench's kinds). In WebAssembly and
/// under Miri, where no C builds or runs, members are not deflated in parts by choice
/// (`chosen_by_sample`), and a part is zlib's (there zlib-rs's).
#[cfg(not(any(target_family = "wasm", miri)))]
const CANDIDATES: [Encoder; 4] = [Encoder::Runs, Encoder::Libdeflate(2), Encoder::ZlibRs(4), Encoder::ZlibRs(5)];

#[cfg(any(target_family = "wasm", miri))]
const CANDIDATES: [Encoder; 0] = [];

/// Whether members of `len` bytes deflated at `level` go through [`deflate_chosen`], part
/// by part, rather than whole through zlib: those long enough to choose for
/// ([`CHOICE_MIN`]), where C builds, at levels that cut members into parts (`parts`) up
/// to NumPy's, 6. Above it zlib is asked for its smallest, which a sample's margin does
/// not promise: sparse data (a 1 every 4,099 zeros) was 2.8% larger by runs than by zlib
/// at level 9.
pub(super) fn chosen_by_sample(len: u64, level: u32) -> bool {
    !CANDIDATES.is_empty() && len >= CHOICE_MIN as u64 && (CUT_LEVEL_MIN..=CHOICE_LEVEL_MAX).contains(&level)
}

/// The lowest level whose members are cut. At levels 1 to 3 (zlib's fast matcher, which
/// does not index the strings inside long matches) the parts of a member can deflate to
/// more than the whole, whatever the priming: 8 MiB of sparse ones (a 1 every 4,099
/// zeros) 2.9% more in 4 parts at level 1, where levels 4 to 9 give at most 0.5%.
pub(super) const CUT_LEVEL_MIN: u32 = 4;

/// The highest level whose parts are deflated by [`deflate_chosen`]'s encoder.
const CHOICE_LEVEL_MAX: u32 = 6;

/// `part` deflated at `level` (4 to 9) by the first candidate whose sample of it (four
/// slices of [`SLICE`], one of [`SMALL_SLICE`] below [`SMALL`]) deflates within
/// [`SIZE_MARGIN`] of zlib's, its stream left open; by zlib when none does, above
/// [`CHOICE_LEVEL_MAX`], for a part shorter than [`CHOICE_MIN`] (it costs little either
/// way) or a [`SMALL`] one zlib shrinks well. The sample's sizes say how the encoders
/// compare, not what the part's size will be: zlib's size for a part of the bench's traces
/// was 3.9 times its sample's scaled, and 0.46 for an image's, while libdeflate 2's stayed
/// within 1.4% of zlib's on both, sample and part.
pub(super) fn deflate_chosen(part: &[u8], level: u32, cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    let zlib = Encoder::Zlib(level);
    if CANDIDATES.is_empty() || part.len() < CHOICE_MIN || level > CHOICE_LEVEL_MAX {
        return deflate(zlib, part, cancel);
    }
    // Slices from the part's eighths 1, 3, 5 and 7 (the middle of a small part), so that a
    // part that changes along its length (zeros, then numbers) is sampled for each.
    let (slices, slice) = if part.len() < SMALL { (1, SMALL_SLICE) } else { (SAMPLE / SLICE, SLICE) };
    let sample: Vec<u8> = (0..slices)
        .flat_map(|i| {
            let start = (part.len() * (2 * i + 1) / (2 * slices)).min(part.len() - slice);
            &part[start..start + slice]
        })
        .copied()
        .collect();
    let zlib_len = deflated_len(zlib, &sample)?;
    if part.len() < SMALL && zlib_len * 10 <= sample.len() {
        return deflate(zlib, part, cancel);
    }
    let reference = zlib_len as f64 * SIZE_MARGIN;
    for candidate in CANDIDATES {
        if deflated_len(candidate, &sample)? as f64 <= reference {
            return deflate(candidate, part, cancel);
        }
    }
    deflate(zlib, part, cancel)
}

/// The length of `data` deflated alone by `encoder`, its stream left open. libdeflate's is
/// not opened for it ([`open`] inflates the whole to find its final block): it counts the
/// 5 bytes opening adds at most.
fn deflated_len(encoder: Encoder, data: &[u8]) -> io::Result<usize> {
    #[cfg(not(any(target_family = "wasm", miri)))]
    if let Encoder::Libdeflate(level) = encoder {
        return Ok(libdeflate_whole(&mut compressor(level)?, data)?.len() + 5);
    }
    Ok(deflate(encoder, data, &AtomicBool::new(false))?.len())
}

/// `part` deflated by `encoder`: an open stream (module docs).
/// Stops with [`io::ErrorKind::Interrupted`] once `cancel` is set.
pub(super) fn deflate(encoder: Encoder, part: &[u8], cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    match encoder {
        Encoder::Zlib(level) => zlib(level, part, cancel),
        #[cfg(not(any(target_family = "wasm", miri)))]
        Encoder::Libdeflate(level) => libdeflate(level, part, cancel),
        #[cfg(not(any(target_family = "wasm", miri)))]
        Encoder::Runs => zlib_rs(DeflateConfig { strategy: Strategy::Rle, ..config(6) }, part, cancel),
        #[cfg(not(any(target_family = "wasm", miri)))]
        Encoder::ZlibRs(level) => zlib_rs(config(level), part, cancel),
        // Not candidates there (and not built into the JavaScript package's module).
        #[cfg(any(target_family = "wasm", miri))]
        _ => Err(io::Error::other("only zlib deflates parts here")),
    }
}

fn interrupted(cancel: &AtomicBool) -> io::Result<()> {
    if cancel.load(Ordering::Relaxed) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "the archive was dropped"));
    }
    Ok(())
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// zlib-rs's raw deflate at `level`.
fn config(level: i32) -> DeflateConfig {
    DeflateConfig { window_bits: -15, ..DeflateConfig::new(level) }
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// `part` deflated by zlib-rs, ended by a sync flush.
fn zlib_rs(config: DeflateConfig, part: &[u8], cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    let mut z = Deflate::new_with_config(config);
    // zlib's bound for the whole (its stored blocks' worst case), and a sync flush's bytes
    // after each step.
    let mut out = vec![0; zlib_rs::compress_bound(part.len()) + 16 * (part.len() / STEP + 2)];
    let steps = part.chunks(STEP).map(|step| (step, DeflateFlush::NoFlush));
    for (input, flush) in steps.chain([(&[][..], DeflateFlush::SyncFlush)]) {
        interrupted(cancel)?;
        let before = z.total_in();
        let at = z.total_out() as usize;
        z.compress(input, &mut out[at..], flush).map_err(|e| io::Error::other(e.as_str()))?;
        if (z.total_in() - before) as usize != input.len() {
            return Err(io::Error::other("zlib-rs left input of a part within its bound"));
        }
    }
    out.truncate(z.total_out() as usize);
    Ok(out)
}

/// `part` deflated by zlib, ended by a sync flush.
fn zlib(level: u32, part: &[u8], cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    let mut z = Compress::new(Compression::new(level), false);
    let mut out = Vec::with_capacity(part.len() / 2 + 4096);
    for step in part.chunks(STEP) {
        interrupted(cancel)?;
        run(&mut z, step, &mut out, FlushCompress::None)?;
    }
    run(&mut z, &[], &mut out, FlushCompress::Sync)?;
    Ok(out)
}

/// Runs `z` over `input` with `flush` until it has taken all of it and, flushing, has
/// written everything (zlib's rule: done once a call leaves output space unused).
fn run(z: &mut Compress, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) -> io::Result<()> {
    loop {
        if out.capacity() - out.len() < 1024 {
            out.reserve(out.capacity().max(64 << 10));
        }
        let before = z.total_in();
        z.compress_vec(input, out, flush).map_err(io::Error::other)?;
        input = &input[(z.total_in() - before) as usize..];
        if input.is_empty() && (flush == FlushCompress::None || out.len() < out.capacity()) {
            return Ok(());
        }
    }
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// The longest input libdeflate is given at once: its output buffer is the worst case of
/// this, and a dropped archive stops between them.
const LIBDEFLATE_PIECE: usize = 4 << 20;

#[cfg(not(any(target_family = "wasm", miri)))]
/// `part` deflated by libdeflate at `level`, in pieces of [`LIBDEFLATE_PIECE`] each
/// deflated on its own and [`open`]ed.
fn libdeflate(level: i32, part: &[u8], cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    let mut c = compressor(level)?;
    let mut out = Vec::new();
    for piece in part.chunks(LIBDEFLATE_PIECE) {
        interrupted(cancel)?;
        let at = out.len();
        let stream = libdeflate_whole(&mut c, piece)?;
        // A part is one piece (`PART` is no longer): it keeps libdeflate's buffer.
        if out.is_empty() {
            out = stream;
        } else {
            out.extend_from_slice(&stream);
        }
        open(&mut out, at)?;
    }
    Ok(out)
}

#[cfg(not(any(target_family = "wasm", miri)))]
fn compressor(level: i32) -> io::Result<Compressor> {
    let level = CompressionLvl::new(level).map_err(|_| io::Error::other("not a libdeflate level"))?;
    Ok(Compressor::new(level))
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// `data` deflated by `c` as one whole stream, ended by its final block.
fn libdeflate_whole(c: &mut Compressor, data: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = vec![0; c.deflate_compress_bound(data.len())];
    let n =
        c.deflate_compress(data, &mut out).map_err(|_| io::Error::other("libdeflate's output passed its own bound"))?;
    out.truncate(n);
    Ok(out)
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// Opens the whole deflate stream at `stream[at..]`: its final block made not final, and an
/// empty stored block after it (as a sync flush ends a stream), so that more can follow.
/// Which block is the last, and where its end-of-block code ends, only inflating tells:
/// zlib's `inflate` with `Z_BLOCK` stops after every block and says how many bits of the
/// last byte it took were left (gzappend's way, in zlib's examples).
fn open(stream: &mut Vec<u8>, at: usize) -> io::Result<()> {
    let (last, unused) = blocks(&stream[at..])?;
    stream[at + (last / 8) as usize] &= !(1 << (last % 8));
    // The next header's 3 bits (0: not final, stored) are read from the final byte's
    // unused bits, or from a byte of zeros when fewer than 3 are left; then the empty
    // stored block's length and its complement, from the next byte boundary.
    if unused < 3 {
        stream.push(0);
    }
    stream.extend_from_slice(&[0, 0, 0xff, 0xff]);
    Ok(())
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// The bit where the final block of the whole deflate stream `stream` begins, and how many
/// bits of its last byte follow the final block's end.
fn blocks(stream: &[u8]) -> io::Result<(u64, u32)> {
    use libz_sys::{inflate, inflateEnd, inflateInit2_, z_stream, zlibVersion, Z_BLOCK, Z_OK, Z_STREAM_END};
    let bad = |why: &str| io::Error::other(format!("libdeflate's stream did not inflate ({why})"));
    let len = u32::try_from(stream.len()).map_err(|_| bad("over 4 GiB"))?;
    let mut scratch = vec![0u8; 64 << 10];
    let mut z = z_stream {
        next_in: stream.as_ptr().cast_mut(),
        avail_in: len,
        total_in: 0,
        next_out: scratch.as_mut_ptr(),
        avail_out: 0,
        total_out: 0,
        msg: std::ptr::null_mut(),
        state: std::ptr::null_mut(),
        zalloc,
        zfree,
        opaque: std::ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    };
    let size = std::mem::size_of::<z_stream>() as libc::c_int;
    // SAFETY: `zlibVersion` takes nothing and returns the linked library's static string.
    let version = unsafe { zlibVersion() };
    // SAFETY: `z` is a whole `z_stream` whose allocator functions are zlib's contract's
    // (`zalloc`, `zfree`); `version` is the linked library's, `size` the struct's.
    if unsafe { inflateInit2_(&mut z, -15, version, size) } != Z_OK {
        return Err(bad("zlib could not start"));
    }
    let (mut last, mut unused) = (0, None);
    let result = loop {
        z.next_out = scratch.as_mut_ptr();
        z.avail_out = scratch.len() as u32;
        // SAFETY: `z` was initialised by `inflateInit2_` and is ended below; `next_in` is
        // `avail_in` bytes of `stream` (zlib moves it on, never past them), `next_out`
        // `avail_out` bytes of `scratch`, both alive for the loop.
        let ret = unsafe { inflate(&mut z, Z_BLOCK) };
        if ret == Z_STREAM_END {
            break Ok(());
        }
        if ret != Z_OK {
            break Err(bad(&format!("zlib said {ret}")));
        }
        // After a block's end (128): the bits left of the last byte taken (`data_type`'s
        // low 3), and whether that block was the final one (64).
        if z.data_type & 128 != 0 {
            let bits = (z.data_type & 7) as u64;
            if z.data_type & 64 != 0 {
                unused = Some(bits as u32);
            } else {
                last = z.total_in as u64 * 8 - bits;
            }
        }
    };
    let total_in = z.total_in as usize;
    // SAFETY: `z` was initialised by `inflateInit2_` and is not used after.
    unsafe { inflateEnd(&mut z) };
    result?;
    match unused {
        Some(unused) if total_in == stream.len() => Ok((last, unused)),
        _ => Err(bad("bytes after its end")),
    }
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// zlib's allocator: zeroed memory from the C library's.
extern "C" fn zalloc(_opaque: *mut libc::c_void, items: libc::c_uint, size: libc::c_uint) -> *mut libc::c_void {
    // SAFETY: `calloc` takes any counts; it returns null when it cannot, as zlib expects.
    unsafe { libc::calloc(items as libc::size_t, size as libc::size_t) }
}

#[cfg(not(any(target_family = "wasm", miri)))]
/// zlib's deallocator, of what [`zalloc`] gave.
extern "C" fn zfree(_opaque: *mut libc::c_void, address: *mut libc::c_void) {
    // SAFETY: zlib frees only what `zalloc` allocated, once.
    unsafe { libc::free(address) }
}

#[cfg(all(test, not(any(target_family = "wasm", miri))))]
mod tests {
    use std::io::Read;

    use super::*;

    /// `stream` ended by the empty final block the zip writer adds, inflated.
    fn inflate(mut stream: Vec<u8>) -> Vec<u8> {
        stream.extend_from_slice(&[0x03, 0x00]);
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(&stream[..]).read_to_end(&mut out).unwrap();
        out
    }

    fn kinds(len: usize) -> Vec<(&'static str, Vec<u8>)> {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        vec![
            ("random floats", (0..len / 8).flat_map(|_| (random() as f64 / u64::MAX as f64).to_le_bytes()).collect()),
            ("zeros", vec![0; len]),
            ("a ramp", (0..len / 4).flat_map(|i| ((i % 4096) as f32 + (i % 64) as f32 / 64.0).to_le_bytes()).collect()),
            ("small ints", (0..len / 8).flat_map(|_| (random() % 100).to_le_bytes()).collect()),
            ("text", b"the quick brown fox ".iter().copied().cycle().take(len).collect()),
        ]
    }

    /// Every encoder's part, whatever the data, joins with the others into a stream that
    /// inflates to the data: libdeflate's opened whatever bits its final block left.
    #[test]
    fn parts_of_every_encoder_join_into_one_stream() {
        let encoders =
            [CANDIDATES.as_slice(), &[Encoder::Zlib(6), Encoder::ZlibRs(6), Encoder::Libdeflate(1)]].concat();
        let cancel = AtomicBool::new(false);
        for (what, data) in kinds(300 << 10) {
            // Lengths that leave each count of unused bits after libdeflate's final block.
            let mut unused = [false; 8];
            for len in (0..400).map(|i| 1 + i * 7).chain([SAMPLE * 3 + 5]) {
                let data = &data[..len.min(data.len())];
                let mut whole = Vec::new();
                let mut start = 0usize;
                for (i, encoder) in encoders.iter().enumerate() {
                    let end = if i + 1 == encoders.len() { data.len() } else { data.len() * (i + 1) / encoders.len() };
                    whole.extend(deflate(*encoder, &data[start..end], &cancel).unwrap());
                    start = end;
                }
                assert!(inflate(whole) == data, "{what}, {len} bytes");
                let mut c = Compressor::new(CompressionLvl::new(2).unwrap());
                let mut out = vec![0; c.deflate_compress_bound(data.len())];
                let n = c.deflate_compress(data, &mut out).unwrap();
                unused[blocks(&out[..n]).unwrap().1 as usize] = true;
            }
            assert!(unused.iter().filter(|&&u| u).count() >= 4, "{what}: unused bits seen {unused:?}");
        }
    }

    /// The sample chooses by size: random floats and zeros go to runs, small integers to
    /// zlib-rs at 4 or 5; each kind's part is within 2% of zlib's size, and a short part or
    /// level 9 is zlib's.
    #[test]
    fn the_sample_chooses_the_first_encoder_within_the_margin() {
        let cancel = AtomicBool::new(false);
        let ours = |data: &[u8], level| deflate_chosen(data, level, &cancel).unwrap();
        let by = |encoder, data: &[u8]| deflate(encoder, data, &cancel).unwrap();
        let kinds = kinds(1 << 20);
        assert!(ours(&kinds[0].1, 6) == by(Encoder::Runs, &kinds[0].1));
        assert!(ours(&kinds[1].1, 6) == by(Encoder::Runs, &kinds[1].1));
        let small_ints = ours(&kinds[3].1, 6);
        assert!(small_ints == by(Encoder::ZlibRs(4), &kinds[3].1) || small_ints == by(Encoder::ZlibRs(5), &kinds[3].1));
        let short = &kinds[0].1[..CHOICE_MIN - 1];
        assert!(ours(short, 6) == by(Encoder::Zlib(6), short));
        assert!(ours(&kinds[0].1, 9) == by(Encoder::Zlib(9), &kinds[0].1));
        for (what, data) in &kinds {
            let (ours, zlib) = (ours(data, 6).len(), by(Encoder::Zlib(6), data).len());
            assert!(ours as f64 <= zlib as f64 * 1.02, "{what}: {ours} against zlib's {zlib}");
        }
    }

    /// A ramp of floats, which libdeflate deflates to twice zlib's size: zlib's.
    #[test]
    fn a_part_no_candidate_deflates_near_zlibs_size_is_zlibs() {
        let ramp: Vec<u8> = (0..1 << 20).flat_map(|i| (i as f32 / 64.0).to_le_bytes()).collect();
        let cancel = AtomicBool::new(false);
        let by_libdeflate = deflate(Encoder::Libdeflate(2), &ramp, &cancel).unwrap();
        let zlib = deflate(Encoder::Zlib(4), &ramp, &cancel).unwrap();
        assert!(by_libdeflate.len() as f64 > zlib.len() as f64 * 1.1, "no longer flattered");
        assert!(deflate_chosen(&ramp, 4, &cancel).unwrap() == zlib);
    }

    /// Parts under a MiB: a counter of `<i4` (zlib leaves a third) goes to libdeflate 2;
    /// start times zlib shrinks to 1% stay zlib's; a short ramp of floats after a header,
    /// which libdeflate 2 deflates to 1.4 times zlib's size (and which a sample of the
    /// part's start sent to it), stays within the margin.
    #[test]
    fn small_parts_are_chosen_for_only_where_zlib_is_slow() {
        let cancel = AtomicBool::new(false);
        let ids: Vec<u8> = (0..100_000i32).flat_map(i32::to_le_bytes).collect();
        assert!(deflate_chosen(&ids, 6, &cancel).unwrap() == deflate(Encoder::Libdeflate(2), &ids, &cancel).unwrap());
        let t0: Vec<u8> = (0..100_000).flat_map(|i| ((i % 1000) as f64 * 0.001).to_le_bytes()).collect();
        assert!(deflate_chosen(&t0, 6, &cancel).unwrap() == deflate(Encoder::Zlib(6), &t0, &cancel).unwrap());
        // After a header, as in a member: its start is no sample of it (module docs).
        let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (70000,), }}{:54}\n", "");
        let ramp: Vec<u8> =
            header.bytes().chain((600_000..670_000).flat_map(|i| (i as f32 / 64.0).to_le_bytes())).collect();
        let (ours, zlib) = (
            deflate_chosen(&ramp, 6, &cancel).unwrap().len(),
            deflate(Encoder::Zlib(6), &ramp, &cancel).unwrap().len(),
        );
        assert!(ours as f64 <= zlib as f64 * 1.02, "a ramp: {ours} against zlib's {zlib}");
        let by_libdeflate = deflate(Encoder::Libdeflate(2), &ramp, &cancel).unwrap().len();
        assert!(by_libdeflate as f64 > zlib as f64 * 1.1, "no longer flattered: {by_libdeflate} against {zlib}");
    }

    /// Rounded sines, a smooth signal as measurements are once rounded, are where a short
    /// sample misjudges libdeflate most: its size against zlib's grows with the length it
    /// is given (libdeflate 2 on `<f4`: 0.97 on 32 KiB, 1.08 on 256 KiB, 1.24 on 4 MiB),
    /// and four slices of 32 KiB chose it for parts 1.06 to 1.24 times zlib's size.
    #[test]
    fn smooth_signals_are_deflated_near_zlibs_size() {
        let cancel = AtomicBool::new(false);
        // `np.round(np.sin(np.arange(n) / 1000), 3)`, as `<f8` and `<f4`.
        let sine = |i: usize| ((i as f64 / 1000.0).sin() * 1000.0).round() / 1000.0;
        // A whole part, as `parts` cuts members (4 MiB).
        let part = 4 << 20;
        let kinds: [(&str, Vec<u8>); 2] = [
            ("<f8", (0..part / 8).flat_map(|i| sine(i).to_le_bytes()).collect()),
            ("<f4", (0..part / 4).flat_map(|i| (sine(i) as f32).to_le_bytes()).collect()),
        ];
        for (what, data) in kinds {
            let (ours, zlib) = (
                deflate_chosen(&data, 6, &cancel).unwrap().len(),
                deflate(Encoder::Zlib(6), &data, &cancel).unwrap().len(),
            );
            assert!(ours as f64 <= zlib as f64 * 1.02, "{what}: {ours} against zlib's {zlib}");
        }
    }

    /// What `open` is given is libdeflate's own output; anything else is an error, not a
    /// panic or a wrong stream.
    #[test]
    fn blocks_refuses_what_is_not_one_whole_stream() {
        assert!(blocks(&[0x07, 0, 0]).is_err());
        let mut c = Compressor::new(CompressionLvl::new(6).unwrap());
        let mut out = vec![0; 1024];
        let n = c.deflate_compress(b"hello hello hello", &mut out).unwrap();
        assert!(blocks(&out[..n - 1]).is_err(), "cut short");
        assert!(blocks(&out[..n + 1]).is_err(), "a byte after its end");
        assert!(blocks(&out[..n]).is_ok());
    }

    #[test]
    fn a_cancelled_part_stops_with_interrupted() {
        let data = vec![1u8; 1 << 20];
        for encoder in CANDIDATES {
            let e = deflate(encoder, &data, &AtomicBool::new(true)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::Interrupted, "{encoder:?}");
        }
    }
}
