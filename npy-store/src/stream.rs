//! [`BatchStream`]: record batches of an object, as they arrive.

use std::io::{self, Read, Seek, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use futures::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
use npy_core::{Error, Result};
use object_store::{GetResult, GetResultPayload};

use crate::error::store_error;

/// Record batches read from object storage, as an async [`Stream`] of npy's `Result`s:
/// rows of a `.npy` object ([`RowScan`](crate::RowScan),
/// [`RemoteNpy::batches`](crate::RemoteNpy::batches)), of an npz member
/// ([`RemoteNpz::member_batches`](crate::RemoteNpz::member_batches)) or of an archive as a
/// table ([`RemoteNpz::table_batches`](crate::RemoteNpz::table_batches)), with their
/// schema up front.
///
/// A stream, not a `…BatchReader`: its batches wait on network reads, which an async
/// runtime polls; arrow's `RecordBatchReader` is a blocking iterator. The name follows
/// DataFusion's async `RecordBatchStream`. Must be polled inside a tokio runtime. After an
/// error the stream ends.
pub struct BatchStream {
    schema: SchemaRef,
    inner: BoxStream<'static, Result<RecordBatch>>,
}

impl BatchStream {
    /// A stream of `inner`'s batches, all of `schema`.
    pub(crate) fn new(schema: SchemaRef, inner: BoxStream<'static, Result<RecordBatch>>) -> BatchStream {
        BatchStream { schema, inner }
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The batches as a boxed stream (for adapters that take one).
    pub fn into_inner(self) -> BoxStream<'static, Result<RecordBatch>> {
        self.inner
    }
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream").field("schema", &self.schema).finish_non_exhaustive()
    }
}

impl Stream for BatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().inner.poll_next_unpin(cx)
    }
}

/// Bytes read per block of a local file: 1 MiB.
const FILE_BLOCK: u64 = 1 << 20;

/// The bytes of a store's answer as they come: a local file's range read in blocks of
/// [`FILE_BLOCK`] on tokio's blocking pool (object_store's own stream of a file is one
/// blocking task per 8 KiB, several times slower), a remote object's as they arrive. A
/// file that ends early ends the stream early (a member's size check then says so).
pub(crate) fn payload_stream(got: GetResult, name: String) -> BoxStream<'static, Result<Bytes>> {
    let range = got.range.clone();
    match got.payload {
        GetResultPayload::File(file, _) => {
            let state = Some((file, range.start, range.end));
            stream::unfold(state, |state| async move {
                let (mut file, pos, end) = state?;
                if pos >= end {
                    return None;
                }
                let n = (end - pos).min(FILE_BLOCK);
                let read = tokio::task::spawn_blocking(move || {
                    let mut buf = Vec::with_capacity(n as usize);
                    let done = file.seek(SeekFrom::Start(pos)).and_then(|_| (&mut file).take(n).read_to_end(&mut buf));
                    (file, buf, done)
                });
                match read.await {
                    Ok((file, buf, Ok(got))) => {
                        let next = (got as u64 == n).then_some((file, pos + n, end));
                        Some((Ok(Bytes::from(buf)), next))
                    }
                    Ok((_, _, Err(e))) => Some((Err(Error::from(e)), None)),
                    Err(e) => Some((Err(Error::from(io::Error::other(format!("a read failed: {e}")))), None)),
                }
            })
            .boxed()
        }
        GetResultPayload::Stream(s) => s.map_err(move |e| store_error(e, &name)).boxed(),
    }
}
