//! A member's bytes decoded as a caller pushes them in: for readers that fetch an archive's
//! bytes themselves (a ranged read, a browser's `Blob`, a stream) and want what [`Reader`]
//! checks of a member it reads.

use crate::error::{Error, ErrorKind, Result};

use super::codec::Codec;
#[cfg(doc)]
use super::Reader;
use super::{DeflateOption, MemberInfo, Method};

/// A member's bytes, as the archive holds them from its data's first byte, decoded as they
/// are pushed in: decompressed as its method says (stored bytes pass through), and checked
/// as [`Reader`] checks a member it reads. It never gives more than the size its directory
/// entry claims, and [`MemberDecoder::finish`] checks that size and the CRC-32 once the
/// caller has pushed the last byte.
///
/// Memory stays bounded: a decoder holds deflate's 32 KiB window or a Zstandard frame's
/// (at most 128 MiB, what libzstd allows by default), and writes only into the caller's
/// buffer.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::npz::{Compression, MemberDecoder, Reader, Writer};
///
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add_with("t", &[0.5f64; 1000], Compression::deflated())?;
/// let archive = w.finish()?.into_inner();
/// let info = Reader::from_reader(Cursor::new(&archive))?.members()[0].clone();
/// let start = info.data_start.unwrap() as usize;
/// let stored = &archive[start..start + info.compressed_size as usize];
///
/// // Pushed ten bytes at a time, into a buffer of the member's size.
/// let mut decoder = MemberDecoder::new(&info)?;
/// let mut out = vec![0u8; info.size as usize];
/// let mut made = 0;
/// for piece in stored.chunks(10) {
///     let mut used = 0;
///     while used < piece.len() {
///         let (u, m) = decoder.decode(&piece[used..], &mut out[made..])?;
///         used += u;
///         made += m;
///     }
/// }
/// decoder.finish()?;
/// assert_eq!(made, info.size as usize);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub struct MemberDecoder {
    member: String,
    size: u64,
    crc32: Option<u32>,
    /// `None` for a stored member.
    codec: Option<Codec>,
    /// Bytes given so far.
    out: u64,
    crc: crc32fast::Hasher,
    /// Whether the deflate stream, or the last Zstandard frame, has ended.
    ended: bool,
}

impl std::fmt::Debug for MemberDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberDecoder")
            .field("member", &self.member)
            .field("size", &self.size)
            .field("method", &self.codec.as_ref().map_or("stored", Codec::name))
            .field("out", &self.out)
            .finish_non_exhaustive()
    }
}

impl MemberDecoder {
    /// A decoder of member `info` (as [`Reader::members`] lists it).
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] when libzstd cannot make its decoder.
    pub fn new(info: &MemberInfo) -> Result<MemberDecoder> {
        // A member of no method known is taken as deflated, the zip default.
        let method = info.compression.unwrap_or(Method::Deflated(DeflateOption::Normal));
        let codec =
            Codec::of(method).map_err(|e| Error::npz_from(Some(&info.member), "cannot make a Zstandard decoder", e))?;
        Ok(MemberDecoder {
            member: info.member.clone(),
            size: info.size,
            crc32: info.crc32,
            codec,
            out: 0,
            crc: crc32fast::Hasher::new(),
            ended: false,
        })
    }

    /// Decodes from `input`, the member's next stored bytes, into `out`: returns the bytes
    /// of `input` used and of `out` made. It stops when `input` is used up, `out` is full,
    /// or the member's data ends; call it again with the rest of `input` (and room in
    /// `out`) until all of `input` is used, then push the next bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] naming the member for data the method cannot decode, bytes after
    /// the end of a deflate stream, or more bytes than the directory entry claims.
    pub fn decode(&mut self, input: &[u8], out: &mut [u8]) -> Result<(usize, usize)> {
        // One byte past the claimed size is room enough to see a member that runs past it.
        let room = usize::try_from(self.size.saturating_sub(self.out).saturating_add(1)).unwrap_or(usize::MAX);
        let len = out.len().min(room);
        let out = &mut out[..len];
        let (used, made) = match &mut self.codec {
            None => {
                let n = input.len().min(out.len());
                out[..n].copy_from_slice(&input[..n]);
                (n, n)
            }
            Some(codec) => {
                let name = codec.name();
                let deflate = codec.one_stream();
                let follows = || Error::npz(Some(&self.member), format!("bytes follow the end of the {name} stream"));
                if self.ended && deflate && !input.is_empty() {
                    return Err(follows());
                }
                let (mut used, mut made) = (0, 0);
                loop {
                    let (u, m, ended) = codec.step(&input[used..], &mut out[made..]).map_err(|e| {
                        Error::from(ErrorKind::Npz {
                            member: Some(self.member.clone()),
                            reason: format!("bad {name} data"),
                            source: Some(Box::new(e)),
                        })
                    })?;
                    used += u;
                    made += m;
                    // A Zstandard member may hold more frames after one ends; deflate has
                    // one. A step that moved nothing says nothing new (libzstd then hints
                    // at the next frame's header).
                    if u > 0 || m > 0 || deflate {
                        self.ended = ended;
                    }
                    if ended && deflate {
                        if used < input.len() {
                            return Err(follows());
                        }
                        break;
                    }
                    if (u == 0 && m == 0) || made == out.len() {
                        break;
                    }
                }
                (used, made)
            }
        };
        self.out += made as u64;
        if self.out > self.size {
            let why = format!("the member decodes past the {} bytes its directory entry claims", self.size);
            return Err(Error::npz(Some(&self.member), why));
        }
        self.crc.update(&out[..made]);
        Ok((used, made))
    }

    /// Counts and hashes `stored`, the next bytes of a stored member, which are its bytes as
    /// they are: what [`MemberDecoder::decode`] gives for them, without copying them.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] naming the member for more bytes than its directory entry
    /// claims; [`ErrorKind::Usage`] for a compressed member.
    pub fn pass(&mut self, stored: &[u8]) -> Result<()> {
        if let Some(codec) = &self.codec {
            return Err(Error::usage(format!("member '{}' is compressed ({}): decode it", self.member, codec.name())));
        }
        self.out += stored.len() as u64;
        if self.out > self.size {
            let why = format!("the member decodes past the {} bytes its directory entry claims", self.size);
            return Err(Error::npz(Some(&self.member), why));
        }
        self.crc.update(stored);
        Ok(())
    }

    /// The bytes given so far.
    pub fn decoded(&self) -> u64 {
        self.out
    }

    /// Checks the member once its last stored byte was pushed: a compressed stream that
    /// ended, the size and the CRC-32 its directory entry claims.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] naming the member for a stream that ends early, another size, or
    /// another CRC-32.
    pub fn finish(&self) -> Result<()> {
        if let Some(codec) = self.codec.as_ref().filter(|_| !self.ended && self.size > 0) {
            return Err(Error::npz(Some(&self.member), format!("the {} stream ends early", codec.name())));
        }
        if self.out != self.size {
            let why = format!("the member holds {} bytes, not the {} its directory entry claims", self.out, self.size);
            return Err(Error::npz(Some(&self.member), why));
        }
        match self.crc32 {
            Some(want) if self.crc.clone().finalize() != want => {
                let got = self.crc.clone().finalize();
                Err(Error::npz(Some(&self.member), format!("bad CRC-32: {got:#010x}, the directory says {want:#010x}")))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::npz::{Compression, Reader, Writer};

    /// An archive of one member `x` of 20,000 bytes, compressed as asked; its info and stored bytes.
    fn member(compression: Compression) -> (MemberInfo, Vec<u8>) {
        let mut w = Writer::new(Cursor::new(Vec::new()));
        let data: Vec<u16> = (0..10_000u16).map(|i| i % 251).collect();
        w.add_with("x", &data, compression).unwrap();
        let archive = w.finish().unwrap().into_inner();
        let info = Reader::from_reader(Cursor::new(&archive)).unwrap().members()[0].clone();
        let start = info.data_start.unwrap() as usize;
        (info.clone(), archive[start..start + info.compressed_size as usize].to_vec())
    }

    /// Pushes `stored` in pieces of `piece` bytes into an output buffer of `out_len` bytes
    /// per call; the bytes made, or the first error.
    fn run(info: &MemberInfo, stored: &[u8], piece: usize, out_len: usize) -> Result<Vec<u8>> {
        let mut d = MemberDecoder::new(info)?;
        let mut all = Vec::new();
        let mut buf = vec![0u8; out_len];
        for chunk in stored.chunks(piece.max(1)) {
            let mut used = 0;
            while used < chunk.len() {
                let (u, m) = d.decode(&chunk[used..], &mut buf)?;
                assert!(u > 0 || m > 0, "no progress");
                used += u;
                all.extend_from_slice(&buf[..m]);
            }
        }
        // A compressed stream may still hold bytes once all its input is in.
        loop {
            let (_, m) = d.decode(&[], &mut buf)?;
            if m == 0 {
                break;
            }
            all.extend_from_slice(&buf[..m]);
        }
        d.finish()?;
        assert_eq!(d.decoded(), all.len() as u64);
        Ok(all)
    }

    #[test]
    fn every_method_decodes_in_any_pieces() {
        let (info, stored) = member(Compression::Stored);
        let whole = run(&info, &stored, stored.len(), stored.len()).unwrap();
        for compression in [Compression::Stored, Compression::deflated(), Compression::zstd()] {
            let (info, stored) = member(compression);
            for (piece, out) in [(1, 7), (10, 4096), (stored.len(), 1), (4096, 1 << 20)] {
                assert_eq!(run(&info, &stored, piece, out).unwrap(), whole, "{compression:?} {piece} {out}");
            }
        }
    }

    #[test]
    fn stored_bytes_pass_uncopied_and_are_checked_alike() {
        let (info, stored) = member(Compression::Stored);
        let mut d = MemberDecoder::new(&info).unwrap();
        for piece in stored.chunks(777) {
            d.pass(piece).unwrap();
        }
        d.finish().unwrap();
        let mut d = MemberDecoder::new(&MemberInfo { crc32: info.crc32.map(|c| !c), ..info.clone() }).unwrap();
        d.pass(&stored).unwrap();
        assert!(d.finish().unwrap_err().to_string().contains("bad CRC-32"));
        let mut d = MemberDecoder::new(&info).unwrap();
        assert!(d.pass(&[stored.as_slice(), &[0]].concat()).unwrap_err().to_string().contains("decodes past"));
        let (info, stored) = member(Compression::deflated());
        let e = MemberDecoder::new(&info).unwrap().pass(&stored).unwrap_err().to_string();
        assert!(e.contains("is compressed (deflate)"), "{e}");
    }

    #[test]
    fn bad_data_sizes_and_crcs_are_errors_naming_the_member() {
        for compression in [Compression::Stored, Compression::deflated(), Compression::zstd()] {
            let (info, stored) = member(compression);
            let error = |info: &MemberInfo, stored: &[u8]| run(info, stored, 100, 1000).unwrap_err().to_string();
            // Cut short: a compressed stream ends early, a stored member is short.
            let e = error(&info, &stored[..stored.len() / 2]);
            assert!(e.contains("member 'x.npy'"), "{e}");
            assert!(e.contains("ends early") || e.contains("not the 20128"), "{compression:?}: {e}");
            // A claimed size one byte short: the data runs past it.
            let short = MemberInfo { size: info.size - 1, ..info.clone() };
            assert!(error(&short, &stored).contains("decodes past the 20127 bytes"), "{compression:?}");
            // A claimed size one byte long.
            let long = MemberInfo { size: info.size + 1, ..info.clone() };
            let e = error(&long, &stored);
            assert!(e.contains("holds 20128 bytes, not the 20129") || e.contains("ends early"), "{e}");
            // Another CRC.
            let crc = MemberInfo { crc32: info.crc32.map(|c| c ^ 1), ..info.clone() };
            assert!(error(&crc, &stored).contains("bad CRC-32"), "{compression:?}");
        }
        // Bytes after a deflate stream's end, and bytes that are not deflate data.
        let (info, mut stored) = member(Compression::deflated());
        stored.push(0);
        let e = run(&info, &stored, stored.len(), 1 << 20).unwrap_err().to_string();
        assert!(e.contains("bytes follow the end of the deflate stream"), "{e}");
        let e = run(&info, &[0xff; 64], 64, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("bad deflate data"), "{e}");
        let (info, _) = member(Compression::zstd());
        let e = run(&info, &[0xff; 64], 64, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("bad Zstandard data"), "{e}");
    }
}
