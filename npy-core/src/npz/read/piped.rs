//! A compressed member decompressed on a second thread, a few pieces ahead of its reader
//! ([`with_decompressor`]): while one thread decompresses, the other checks the CRC-32 of
//! the pieces before and converts them into the array (and faults in its pages), so a large
//! member reads at the speed of decompressing alone.
//!
//! The stream itself is decompressed by one thread, from its start: it cannot be split (see
//! `parallel`).

use std::io::{self, Read, Seek};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::{directory, located, member_data, CodecReader, MemberData, Members};
use crate::error::Result;
use crate::npz::Method;
use crate::read::NpyReader;

/// Compressed members of at least this size are decompressed on a second thread, when there is a
/// CPU for it: below it, starting the thread and copying the pieces is not won back.
pub(super) const PIPED_MIN_BYTES: u64 = 4 << 20;

/// Whether member `e` is a compressed one large enough to decompress on a second thread.
pub(super) fn worth_piping(e: &directory::Entry) -> bool {
    e.method != Method::Stored && e.size >= PIPED_MIN_BYTES
}

impl Members<'_> {
    /// Reads compressed member `i` with `read` from `source`, a handle on the archive, while a
    /// second thread decompresses it (see [`with_decompressor`]).
    pub(super) fn read_piped<S: Read + Seek + Send, V>(
        &self,
        i: usize,
        source: S,
        read: impl FnOnce(NpyReader<&mut dyn Read>) -> Result<V>,
    ) -> Result<V> {
        let e = &self.entries[i];
        let data = member_data(e, source).and_then(|data| Ok(CodecReader::new(e.method, data)?));
        let data = located(self.origin, &e.member, data)?;
        // One byte more than the member's size, to see a stream that runs past it.
        with_decompressor(data, e.size.saturating_add(1), |piped| {
            let mut reader = self.owned(i, MemberData::<io::Empty>::Piped(piped));
            let npy = self.open_npy(i, &mut reader as &mut dyn Read)?;
            located(self.origin, &e.member, read(npy))
        })
    }
}

/// Bytes decompressed into one piece (fewer under Miri, whose tests would take minutes).
const PIECE: usize = if cfg!(miri) { 4 << 10 } else { 1 << 20 };
/// Pieces decompressed ahead of the reader, at most.
const AHEAD: usize = 3;

/// Runs `read` over the bytes that the decompressing reader `data` gives, while a
/// scoped thread decompresses them (at most `limit` bytes: a member's size and one more, to
/// see a stream that runs past it). The thread stops when the stream ends or fails (its
/// error is the reader's next), or once `read` returns and drops the reader, and is joined
/// before this returns.
pub(super) fn with_decompressor<S: Read + Send, V>(data: S, limit: u64, read: impl FnOnce(Piped) -> V) -> V {
    let (pieces, decompressed) = sync_channel(AHEAD);
    let (spent, reuse) = sync_channel(AHEAD + 2);
    std::thread::scope(|scope| {
        // Each channel end lives in the scope: when either side ends, the other's next
        // send or receive fails and it stops.
        scope.spawn(move || decompress(data, limit, &pieces, &reuse));
        read(Piped { decompressed, spent, piece: Vec::new(), at: 0 })
    })
}

/// Decompresses `data` (at most `limit` bytes) into pieces sent to `pieces`, in order, then its
/// error if it fails; reuses the pieces that come back on `reuse`. Returns at the end of
/// the stream, at an error, or when the reader is gone.
fn decompress<S: Read>(data: S, limit: u64, pieces: &SyncSender<io::Result<Vec<u8>>>, reuse: &Receiver<Vec<u8>>) {
    let mut stream = data.take(limit);
    loop {
        let mut piece = reuse.try_recv().unwrap_or_default();
        piece.resize(PIECE, 0);
        let mut filled = 0;
        let mut failed = None;
        while filled < PIECE {
            match stream.read(&mut piece[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        piece.truncate(filled);
        // The bytes before an error are the reader's, so it says where the data failed.
        if filled > 0 && pieces.send(Ok(piece)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = pieces.send(Err(e));
            return;
        }
        if filled < PIECE {
            return;
        }
    }
}

/// The reading end of [`with_decompressor`]: the decompressed bytes in order, then the end (0),
/// or the error that stopped the decompressing once the bytes before it are read.
#[derive(Debug)]
pub(super) struct Piped {
    decompressed: Receiver<io::Result<Vec<u8>>>,
    spent: SyncSender<Vec<u8>>,
    /// The piece being read, and how far.
    piece: Vec<u8>,
    at: usize,
}

impl Read for Piped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.piece.len() {
            let spent = std::mem::take(&mut self.piece);
            if spent.capacity() > 0 {
                // Back for reuse, unless enough are waiting there.
                let _ = self.spent.try_send(spent);
            }
            match self.decompressed.recv() {
                Ok(Ok(piece)) => (self.piece, self.at) = (piece, 0),
                Ok(Err(e)) => return Err(e),
                // The decompressor is done: the stream ended.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.piece.len() - self.at);
        buf[..n].copy_from_slice(&self.piece[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::*;
    use crate::npz::read::tests::set_crc;
    use crate::npz::{Compression, Reader, ReaderOptions, Writer};
    use crate::{ErrorKind, WriteNpy};

    /// A reader inflating the raw deflate stream `stream`.
    fn inflater(stream: &[u8]) -> flate2::read::DeflateDecoder<&[u8]> {
        flate2::read::DeflateDecoder::new(stream)
    }

    /// `data` as a raw deflate stream of stored blocks (which Miri runs through zlib-rs's
    /// inflate, unlike its deflate).
    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut blocks = data.chunks(65_535).peekable();
        if blocks.peek().is_none() {
            out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
        }
        while let Some(block) = blocks.next() {
            out.push(u8::from(blocks.peek().is_none())); // BFINAL, BTYPE 00
            let len = block.len() as u16;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(block);
        }
        out
    }

    /// Bytes that deflate to something (a repeating ramp), `n` of them.
    fn ramp(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8 ^ (i / 4093) as u8).collect()
    }

    #[test]
    fn pieces_arrive_in_order_up_to_the_limit() {
        for n in [0, 1, PIECE - 1, PIECE, PIECE + 1, 3 * PIECE + 17] {
            let data = ramp(n);
            let stream = deflate(&data);
            let got = with_decompressor(inflater(&stream), n as u64 + 1, |mut r| {
                let mut out = Vec::new();
                // Odd-sized reads, across pieces.
                let mut buf = vec![0; 77_777];
                loop {
                    let k = r.read(&mut buf).unwrap();
                    if k == 0 {
                        break out;
                    }
                    out.extend_from_slice(&buf[..k]);
                }
            });
            assert!(got == data, "{n} bytes");
            // A limit cuts the stream there.
            let got = with_decompressor(inflater(&stream), n as u64 / 2, |mut r| {
                let mut out = Vec::new();
                r.read_to_end(&mut out).unwrap();
                out
            });
            assert!(got == data[..n / 2], "{n} bytes, cut");
        }
    }

    #[test]
    fn an_error_comes_after_the_bytes_before_it() {
        let data = ramp(3 * PIECE);
        let mut stream = deflate(&data);
        stream.truncate(stream.len() / 2);
        let (got, e) = with_decompressor(inflater(&stream), u64::MAX, |mut r| {
            let mut out = Vec::new();
            let e = r.read_to_end(&mut out).unwrap_err();
            (out, e)
        });
        assert!(!got.is_empty() && data.starts_with(&got), "{} bytes", got.len());
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
        // A corrupt stream: a reserved block type.
        let e = with_decompressor(inflater(&[0x07u8; 40]), u64::MAX, |mut r| r.read(&mut [0; 8]).unwrap_err());
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }

    #[test]
    fn a_reader_that_stops_early_stops_the_decompressor() {
        let data = ramp(16 * PIECE);
        let stream = deflate(&data);
        // The reader takes one byte and leaves: the decompressor, blocked with its pieces
        // ahead, sees the reader gone and ends, so the scope returns.
        let first = with_decompressor(inflater(&stream), u64::MAX, |mut r| {
            let mut one = [0];
            r.read_exact(&mut one).unwrap();
            one[0]
        });
        assert_eq!(first, data[0]);
    }

    /// A `.npy` file of `n` `u8`s (values from [`ramp`]).
    fn npy(n: usize) -> Vec<u8> {
        ramp(n).write_npy_to(Vec::new()).unwrap()
    }

    /// Reads member `x` of `bytes` through [`Members::read_piped`], the directory's entry
    /// for it changed by `entry` (its size or CRC-32 claimed otherwise).
    fn read_piped(bytes: &[u8], entry: impl FnOnce(&mut directory::Entry)) -> Result<Vec<u8>> {
        let r = Reader::from_reader(Cursor::new(bytes)).unwrap();
        let mut entries = r.entries.clone();
        entry(&mut entries[0]);
        let members = Members { entries: &entries, options: &r.options, origin: None };
        members.read_piped(0, Cursor::new(bytes), |npy| npy.read::<Vec<u8>>())
    }

    /// Asserts an [`ErrorKind::Npz`] about member `x.npy` that says `says`.
    #[track_caller]
    fn npz_error<V: std::fmt::Debug>(result: Result<V>, says: &str) {
        let e = result.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e:?}");
        assert_eq!(e.member(), Some("x.npy"), "{e}");
        assert!(e.to_string().contains(says), "'{e}' does not say '{says}'");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn a_piped_member_is_held_to_its_size_and_crc() {
        let n = 5 * PIECE / 2;
        let content = npy(n);
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_raw_with("x.npy", &content, Compression::Deflated { level: 1 }).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        assert_eq!(read_piped(&bytes, |_| {}).unwrap(), ramp(n));
        npz_error(read_piped(&bytes, |e| e.crc32 ^= 1), "bad crc-32");
        // The stream ends 10 bytes before the size claimed.
        npz_error(read_piped(&bytes, |e| e.size += 10), &format!("the data ends after {} of", content.len()));
        // A source that ends in the middle of the stream.
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let e = &r.entries[0];
        let cut = &bytes[..(e.data_start + e.compressed_size / 2) as usize];
        let members = r.members_at();
        npz_error(
            members.read_piped(0, Cursor::new(cut), |npy| npy.read::<Vec<u8>>()),
            "the deflate data is corrupt after",
        );
        // A corrupt stream: a reserved block type after the first byte.
        let mut corrupt = bytes.clone();
        corrupt[e.data_start as usize] = 0x07;
        npz_error(read_piped(&corrupt, |_| {}), "the deflate data is corrupt after 0 of");

        // A stream with 100 bytes more than the member claims (CRC and size of the rest).
        let mut longer = content.clone();
        longer.extend_from_slice(&[0xaa; 100]);
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_raw_with("x.npy", &longer, Compression::Deflated { level: 1 }).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let claim = |e: &mut directory::Entry| {
            e.size = content.len() as u64;
            e.crc32 = crc32fast::hash(&content);
        };
        npz_error(read_piped(&bytes, claim), "inflates past the member's size");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn large_deflated_members_of_a_path_read_piped_from_the_threshold() {
        // `x` is just large enough to be piped, `y` one byte short of it.
        let header = npy(0).len() as u64;
        let big = (PIPED_MIN_BYTES - header) as usize;
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_with("x", &ramp(big), Compression::Deflated { level: 1 }).unwrap();
        w.add_with("y", &ramp(big - 1), Compression::Deflated { level: 1 }).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        let mut r = Reader::from_path(file.path()).unwrap();
        assert_eq!(r.entries.iter().map(worth_piping).collect::<Vec<_>>(), [true, false]);
        assert_eq!(r.entries[0].size, PIPED_MIN_BYTES);
        assert_eq!(r.read::<Vec<u8>>("x").unwrap(), ramp(big));
        assert_eq!(r.read::<Vec<u8>>("y").unwrap(), ramp(big - 1));
        assert_eq!(r.read::<crate::array::DynArray>("x").unwrap().data(), ramp(big));
        assert_eq!(r.read_many::<Vec<u8>>(&["x"]).unwrap(), [ramp(big)]);
        assert_eq!(r.read_all::<Vec<u8>>().unwrap(), [ramp(big), ramp(big - 1)]);
        // A bad CRC read through the pipe, through the zip reader's cursor, and without a
        // second CPU.
        let mut bad = bytes.clone();
        set_crc(&mut bad, &r, 0, r.entries[0].crc32 ^ 1);
        std::fs::write(file.path(), &bad).unwrap();
        for options in [ReaderOptions::new(), ReaderOptions::new().threads(1).clone()] {
            let mut r = crate::npz::Reader::from_path_with(file.path(), &options).unwrap();
            npz_error(r.read::<Vec<u8>>("x"), "bad crc-32");
            npz_error(r.read_many::<Vec<u8>>(&["x"]), "bad crc-32");
            npz_error(r.read_all::<Vec<u8>>(), "bad crc-32");
            assert_eq!(r.read::<Vec<u8>>("y").unwrap(), ramp(big - 1));
        }
        npz_error(Reader::from_reader(Cursor::new(&bad)).unwrap().read::<Vec<u8>>("x"), "bad crc-32");
    }

    /// A Zstandard member just large enough to be piped: read whole, and failing cleanly
    /// (the thread joined, the error naming the member) when its reader fails at once, when
    /// its CRC-32 is wrong, when its frame is corrupt midway and when its source ends early.
    #[test]
    #[cfg_attr(miri, ignore = "libzstd is C, which Miri does not run")]
    fn zstd_members_piped_from_the_threshold_fail_cleanly() {
        let big = (PIPED_MIN_BYTES - npy(0).len() as u64) as usize;
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_with("x", &ramp(big), Compression::Zstd { level: 1 }).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let e = r.entries[0].clone();
        assert!(worth_piping(&e) && e.size == PIPED_MIN_BYTES);
        assert_eq!(read_piped(&bytes, |_| {}).unwrap(), ramp(big));

        // The reader fails before reading a byte: the decompressor, its channel full, stops.
        let members = r.members_at();
        let stop = || -> Result<Vec<u8>> { Err(ErrorKind::Usage { reason: "the reader stops".into() }.into()) };
        let failed = members.read_piped(0, Cursor::new(&bytes), |_| stop()).unwrap_err();
        assert!(failed.to_string().contains("the reader stops"), "{failed}");

        npz_error(read_piped(&bytes, |e| e.crc32 ^= 1), "bad crc-32");
        let (start, len) = (e.data_start as usize, e.compressed_size as usize);
        let mut corrupt = bytes.clone();
        for b in &mut corrupt[start + len / 2..start + len / 2 + 8] {
            *b ^= 0xa5;
        }
        let said = read_piped(&corrupt, |_| {}).unwrap_err().to_string();
        assert!(said.contains("x.npy") && (said.contains("corrupt") || said.contains("bad crc-32")), "{said}");
        let cut = &bytes[..start + len / 2];
        npz_error(members.read_piped(0, Cursor::new(cut), |npy| npy.read::<Vec<u8>>()), "x.npy");
    }
}
