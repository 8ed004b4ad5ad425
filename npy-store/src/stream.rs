//! [`BatchStream`]: record batches of an object, as they arrive.

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::{BoxStream, Stream, StreamExt};
use npy_core::Result;

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
