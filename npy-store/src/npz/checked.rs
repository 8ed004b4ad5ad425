//! An archive's table read so that no row comes out before its member passed its checks
//! ([`RemoteNpz::checked_table_batches`]): what SQL scans and Python's `npy.scan` answer
//! from.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::Schema;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use npy_arrow::{ConvertOptions, Part};
use npy_core::{Error, Result};

use super::RemoteNpz;
use crate::filter::Filter;
use crate::stream::BatchStream;

/// Bytes of the members a table reads (their sizes in the directory) up to which their
/// batches are held until the members are checked; members holding more are checked by a
/// read of their own before they are scanned (a second read of their bytes, hashed or
/// decompressed only).
pub const HOLD_BYTES: u64 = 64 << 20;

impl RemoteNpz {
    /// Rows `rows` of [`RemoteNpz::table_batches`]'s table of members `names` (`None`:
    /// all), with default [`ConvertOptions`], each batch cut to them, given out only once
    /// every member read passed its size and CRC-32 checks: members of more than
    /// [`HOLD_BYTES`] in all are verified by a read of their own first; smaller ones are
    /// read once, to their ends whatever `rows` asks, and their batches held until the
    /// checks there passed. A table of no members gives one batch of no columns and the
    /// rows asked, once every member of the archive passed.
    ///
    /// # Errors
    /// As [`RemoteNpz::table_batches`] and [`RemoteNpz::verify_member`]; rows past the
    /// table's end are not an error (the batches stop there).
    pub async fn checked_table_batches(&self, names: Option<&[&str]>, rows: Range<usize>) -> Result<BatchStream> {
        self.checked_table_batches_with(names, rows, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpz::checked_table_batches`], with options (as
    /// [`RemoteNpz::table_batches_with`] takes them).
    ///
    /// # Errors
    /// As [`RemoteNpz::checked_table_batches`].
    pub async fn checked_table_batches_with(
        &self,
        names: Option<&[&str]>,
        rows: Range<usize>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        self.checked_selection(&self.whole(names), None, rows, options).await
    }

    /// As [`RemoteNpz::checked_table_batches_with`], of parts of members: for each member
    /// named, its table columns (`None`) or the parts of its layout given
    /// ([`npy_arrow::Layout::select`]: `samples[k]` of an N-d member decodes one value a
    /// row), the columns of the members in the order given. Fields read in parts are named
    /// after their member ([`Part::name`]). With `filter`, only the rows it keeps: the
    /// members it reads are decoded first, the others at the kept rows only ([`Filter`]:
    /// its parts are of the archive's table, each of a member that is not a record).
    ///
    /// # Errors
    /// As [`RemoteNpz::checked_table_batches`]; a part a member's layout has not.
    pub async fn checked_part_batches_with(
        &self,
        columns: &[(&str, Option<&[Part]>)],
        filter: Option<&Filter>,
        rows: Range<usize>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let selection: Vec<_> = columns.iter().map(|(n, p)| (n.to_string(), p.map(<[Part]>::to_vec))).collect();
        self.checked_selection(&selection, filter, rows, options).await
    }

    async fn checked_selection(
        &self,
        selection: &[(String, Option<Vec<Part>>)],
        filter: Option<&Filter>,
        rows: Range<usize>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let (schema, mut total) = self.selection_schema(selection, options).await?;
        if rows.is_empty() {
            // Nothing asked: nothing read.
            return Ok(BatchStream::new(schema, stream::empty().boxed()));
        }
        if schema.fields().is_empty() {
            // The rows of the archive, whichever members hold them.
            total = self.table_schema_with(None, options).await?.1;
        }
        let rows = rows.start.min(total)..rows.end.min(total);
        if schema.fields().is_empty() && filter.is_none() {
            let empty = Arc::new(Schema::empty());
            for member in self.names() {
                self.verify_member(member).await?;
            }
            let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
            let batch = RecordBatch::try_new_with_options(empty.clone(), Vec::new(), &options)
                .map_err(|e| Error::from(std::io::Error::other(e)).reading(self.location().as_ref()))?;
            return Ok(BatchStream::new(empty, stream::iter([Ok(batch)]).boxed()));
        }
        let mut wanted: Vec<String> = selection.iter().map(|(n, _)| n.clone()).collect();
        // A filter's members are read (and checked) too.
        if let Some(filter) = filter {
            for (member, _) in self.filter_members(filter, options).await? {
                if !wanted.contains(&member) {
                    wanted.push(member);
                }
            }
        }
        let size: u64 = (self.members().iter()).filter(|m| wanted.contains(&m.name)).map(|m| m.size).sum();
        let checked_first = size > HOLD_BYTES;
        if checked_first {
            for member in &wanted {
                self.verify_member(member).await?;
            }
        }
        // A filter's window is of the table's rows, so it is cut before the verdicts.
        let batches = match filter {
            Some(filter) => self.filtered_batches(selection, filter, rows, options).await?.into_inner(),
            None => window(self.selection_batches(selection, options).await?.into_inner(), rows, !checked_first),
        };
        Ok(BatchStream::new(schema, if checked_first { batches } else { held(batches) }))
    }
}

/// The rows `rows` of `batches`, each batch cut to them. With `drain`, the members are
/// read to their ends all the same (their rows past the window decoded and dropped): each
/// member's size and CRC-32 are checked at its end, and the batch holding the window's last
/// row is given out only once they passed. Without, the stream stops at the window's end
/// (for members checked before).
fn window(
    batches: BoxStream<'static, Result<RecordBatch>>,
    rows: Range<usize>,
    drain: bool,
) -> BoxStream<'static, Result<RecordBatch>> {
    // The state: the batches, and the row number of the next batch's first row.
    stream::unfold(Some((batches, 0usize)), move |state| {
        let rows = rows.clone();
        async move {
            let (mut batches, mut at) = state?;
            loop {
                let batch = match batches.next().await? {
                    Ok(batch) => batch,
                    Err(e) => return Some((Err(e), None)),
                };
                let (first, end) = (at, at + batch.num_rows());
                at = end;
                let (from, to) = (first.max(rows.start), end.min(rows.end));
                if from >= to && end < rows.end {
                    continue;
                }
                let out = batch.slice(from.min(to) - first, to.saturating_sub(from));
                if end < rows.end {
                    return Some((Ok(out), Some((batches, at))));
                }
                if drain {
                    while let Some(rest) = batches.next().await {
                        if let Err(e) = rest {
                            return Some((Err(e), None));
                        }
                    }
                }
                return (out.num_rows() > 0).then_some((Ok(out), None));
            }
        }
    })
    .boxed()
}

/// `batches` given out once all were read, or only the first error: a consumer that stops
/// early (a `LIMIT` above a filter, which the scan is not told of) never had rows of a
/// member whose check at its end fails.
fn held(batches: BoxStream<'static, Result<RecordBatch>>) -> BoxStream<'static, Result<RecordBatch>> {
    stream::once(batches.try_collect::<Vec<_>>())
        .flat_map(|all| {
            let all: Vec<Result<RecordBatch>> = match all {
                Ok(all) => all.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            };
            stream::iter(all)
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use npy_core::npz::{Compression, Writer};
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{ObjectStore, ObjectStoreExt};

    use super::*;

    async fn archive(bytes: Vec<u8>) -> RemoteNpz {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let location = Path::from("t.npz");
        store.put(&location, bytes.into()).await.unwrap();
        RemoteNpz::from_store(store, &location).await.unwrap()
    }

    fn table() -> Vec<u8> {
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add("a", &(0..100i64).collect::<Vec<_>>()).unwrap();
        w.add_with("b", &(0..100i64).map(|i| -i).collect::<Vec<_>>(), Compression::deflated()).unwrap();
        w.finish().unwrap().into_inner()
    }

    async fn rows_of(npz: &RemoteNpz, rows: Range<usize>, batch: usize) -> Result<Vec<i64>> {
        let mut options = ConvertOptions::new();
        options.batch_rows(batch);
        let batches: Vec<RecordBatch> =
            npz.checked_table_batches_with(None, rows, &options).await?.into_inner().try_collect().await?;
        Ok(batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect())
    }

    #[tokio::test]
    async fn windows_cut_the_rows_asked() {
        let npz = archive(table()).await;
        for (rows, batch) in [(0..100, 7), (5..6, 7), (7..14, 7), (13..99, 10), (90..200, 16), (100..120, 3)] {
            let want: Vec<i64> = (rows.start.min(100) as i64..rows.end.min(100) as i64).collect();
            assert_eq!(rows_of(&npz, rows.clone(), batch).await.unwrap(), want, "{rows:?} by {batch}");
        }
    }

    #[tokio::test]
    async fn no_row_before_a_corrupt_member_is_found() {
        let mut bytes = table();
        // The deflated member's data is the archive's second; flip a byte near the end of
        // its compressed stream (before the directory).
        let directory = bytes.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
        let end = bytes[..directory].windows(4).rposition(|w| w == b"PK\x01\x02").unwrap_or(directory);
        bytes[end - 3] ^= 0x40;
        let npz = archive(bytes).await;
        assert!(rows_of(&npz, 0..1, 4).await.is_err());
    }
}
