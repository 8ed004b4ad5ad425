//! A local file put into a store whole ([`upload`]): what writers that spool locally (SQL's
//! `COPY TO` a bucket, Python's `npy.save` to a URL) send their file with.

use std::io::Read;
use std::sync::Arc;

use bytes::Bytes;
use npy_core::{Error, Result};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

use crate::error::store_io;

/// Bytes per part of a multipart upload (and the size up to which one `put` sends a file).
pub const PART_BYTES: usize = 16 << 20;

/// Parts of a multipart upload in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

/// Uploads the rest of `file` (`size` bytes) to `location`: one `put` when it is at most
/// [`PART_BYTES`], else a multipart upload of such parts, aborted when a part fails. The
/// object appears only once complete (object stores make a `put` and a completed multipart
/// upload visible whole). The file is read on tokio's blocking pool.
///
/// # Errors
/// The file's read errors; the store's (naming `location`).
///
/// # Examples
/// ```
/// use std::{io::{Seek, Write}, sync::Arc};
/// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let mut spool = tempfile::tempfile()?;
/// spool.write_all(b"\x93NUMPY")?;
/// spool.rewind()?; // the rest of the file is sent
/// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
/// npy_store::upload(store.clone(), &Path::from("a.npy"), spool, 6).await?;
/// assert_eq!(&store.get(&Path::from("a.npy")).await?.bytes().await?[..], b"\x93NUMPY");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn upload(store: Arc<dyn ObjectStore>, location: &Path, file: std::fs::File, size: u64) -> Result<()> {
    let name = location.to_string();
    let size =
        usize::try_from(size).map_err(|_| Error::from(std::io::Error::other("file too large")).writing(&name))?;
    if size <= PART_BYTES {
        let (_, bytes) = read_part(file, size).await.map_err(|e| e.writing(&name))?;
        store.put(location, bytes.into()).await.map_err(|e| Error::from(store_io(e)).writing(&name))?;
        return Ok(());
    }
    let upload = store.put_multipart(location).await.map_err(|e| Error::from(store_io(e)).writing(&name))?;
    let mut parts = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
    let mut left = size;
    let mut file = file;
    let sent = async {
        while left > 0 {
            let len = left.min(PART_BYTES);
            let (rest, bytes) = read_part(file, len).await?;
            file = rest;
            left -= len;
            parts.wait_for_capacity(PARTS_IN_FLIGHT).await.map_err(|e| Error::from(store_io(e)).writing(&name))?;
            parts.put(bytes);
        }
        Ok::<(), Error>(())
    }
    .await;
    match sent {
        Ok(()) => parts.finish().await.map(drop).map_err(|e| Error::from(store_io(e)).writing(&name)),
        Err(e) => {
            // Best effort: the part's error is the one to report.
            let _ = parts.abort().await;
            Err(e.writing(&name))
        }
    }
}

/// The next `len` bytes of `file`, read on a blocking thread.
async fn read_part(mut file: std::fs::File, len: usize) -> Result<(std::fs::File, Bytes)> {
    let read = tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; len];
        file.read_exact(&mut buf).map(|()| (file, Bytes::from(buf)))
    });
    match read.await {
        Ok(Ok(part)) => Ok(part),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => Err(std::io::Error::other(format!("a read of the file failed: {e}")).into()),
    }
}
