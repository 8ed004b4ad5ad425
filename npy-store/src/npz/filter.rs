//! An archive's table under a [`Filter`] (over parts of its table's columns, each of a
//! member that is not a record): each block of rows has the members
//! the filter reads decoded first and judged, and the other members decoded only at the
//! rows it kept, as a filtered scan of a `.npy` file decodes its columns
//! ([`crate::filter`]). The members are separate streams of bytes (decompressed or fetched),
//! read in step block by block: each other member's scan takes the verdicts from a queue
//! that the judged members' blocks fill.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, Field, Schema};
use futures::stream::{self, BoxStream, StreamExt};
use npy_arrow::npz::MemberColumns;
use npy_arrow::{ConvertOptions, Part};
use npy_core::{Error, ErrorKind, Result};

use super::{Prepared, RemoteNpz};
use crate::error::npz_error;
use crate::filter::{Filter, Judged, Keep, Kept};
use crate::stream::BatchStream;

/// One member's read under a filter.
struct Read {
    member: String,
    /// A member read whole: its table columns; `None` for one read in parts.
    table: Option<MemberColumns>,
    /// Of a member read in parts, how many of its table's columns its batches begin with.
    out: usize,
    /// Of a judged member, the batch column of each filter column it holds.
    judged: Vec<(usize, usize)>,
    /// Of a member decoded at kept rows, the verdicts of the blocks it has not read yet.
    verdicts: Option<Arc<Mutex<VecDeque<Kept>>>>,
    batches: BoxStream<'static, Result<RecordBatch>>,
}

impl RemoteNpz {
    /// The batches of a selection's table (as [`RemoteNpz::selection_batches`]) of the rows
    /// `filter` keeps.
    pub(crate) async fn filtered_batches(
        &self,
        selection: &[(String, Option<Vec<Part>>)],
        filter: &Filter,
        window: Range<usize>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let location = self.location().to_string();
        let columns = self.filter_members(filter, options).await?;
        // Each member's parts: those of the table, then the judged ones it lacks; `None` for
        // a member read whole.
        let mut wanted: Vec<(String, Option<Vec<Part>>)> = selection.to_vec();
        for (member, part) in &columns {
            match wanted.iter_mut().find(|(m, _)| m == member) {
                Some((_, None)) => {
                    let reason = format!("a filter reads member '{member}', which is read whole");
                    return Err(Error::from(ErrorKind::Usage { reason }).reading(&location));
                }
                Some((_, Some(parts))) if !parts.contains(part) => parts.push(part.clone()),
                Some(_) => {}
                None => wanted.push((member.clone(), Some(vec![part.clone()]))),
            }
        }
        let mut pending = Vec::with_capacity(wanted.len());
        let mut fields = Vec::new();
        let mut rows: Option<(usize, String)> = None;
        let mut row_bytes = 0usize;
        let mut judged_fields: Vec<Option<Field>> = vec![None; columns.len()];
        for (k, (name, parts)) in wanted.iter().enumerate() {
            let (layout, scan) = self.member_scan(name, options, parts.as_deref()).await?;
            let info = self.info(name)?;
            self.check_rows(&mut rows, &info.member, layout.rows())?;
            row_bytes = row_bytes.saturating_add(layout.row_bytes());
            let table = parts.is_none().then(|| MemberColumns::new(&info.name, &layout, info.compression));
            // The table's parts of the member, the first of those it reads.
            let out = match selection.get(k) {
                Some((_, Some(parts))) => parts.len(),
                _ => 0,
            };
            let judged: Vec<(usize, usize)> = match parts {
                Some(parts) => (columns.iter().enumerate())
                    .filter(|(_, (m, _))| m == name)
                    .filter_map(|(f, (_, p))| Some((f, parts.iter().position(|q| q == p)?)))
                    .collect(),
                None => Vec::new(),
            };
            for (f, _) in &judged {
                judged_fields[*f] =
                    self.selected_fields(name, &layout, Some(std::slice::from_ref(&columns[*f].1)))?.pop();
            }
            let table_parts = parts.as_ref().map(|parts| &parts[..out]);
            fields.extend(self.selected_fields(name, &layout, table_parts)?);
            let verdicts = judged.is_empty().then(|| Arc::new(Mutex::new(VecDeque::new())));
            let row_filter = verdicts.as_ref().map(|queue| {
                let (queue, member) = (Arc::clone(queue), info.member.clone());
                let nothing = Arc::new(layout.select(&[]).expect("no columns"));
                let keep: Arc<Keep> = Arc::new(move |_: &RecordBatch| {
                    let verdict = queue.lock().map_err(|_| "a filter's verdicts were poisoned")?.pop_front();
                    verdict.ok_or_else(|| format!("member '{member}' read a block before its filter judged it").into())
                });
                Judged::new(nothing, keep)
            });
            pending.push((info.member.clone(), table, out, judged, verdicts, scan, row_filter));
        }
        let batch_rows = options.batch_rows_for(row_bytes);
        let (pending, scans): (Vec<_>, Vec<Prepared>) =
            pending.into_iter().map(|(m, t, o, j, v, scan, f)| ((m, t, o, j, v, f), scan)).unzip();
        let together = Prepared::together(&scans, batch_rows);
        let reads: Vec<Read> = (pending.into_iter().zip(scans).zip(together))
            .map(|(((member, table, out, judged, verdicts, row_filter), scan), together)| Read {
                member,
                table,
                out,
                judged,
                verdicts,
                batches: scan.start_filtered(batch_rows, row_filter, together),
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        // Rows past the window are not judged (the members are still read to their ends).
        let total = rows.map_or(0, |(n, _)| n).min(window.end);
        let keep = Arc::clone(filter.keep());
        let judged_schema: Arc<Schema> = Arc::new(Schema::new(
            judged_fields.into_iter().collect::<Option<Vec<Field>>>().ok_or_else(|| usage("a filter's part unread"))?,
        ));
        let table = schema.clone();
        let state = Some((reads, 0usize));
        let batches = stream::unfold(state, move |state| {
            let (schema, location, keep, window, judged_schema) =
                (schema.clone(), location.clone(), Arc::clone(&keep), window.clone(), judged_schema.clone());
            async move {
                let (mut reads, mut done) = state?;
                loop {
                    if done >= total {
                        // Each member's stream to its end, where it makes its checks (those
                        // decoded at kept rows take the verdicts of the blocks they skipped).
                        for read in &mut reads {
                            while let Some(batch) = read.batches.next().await {
                                if let Err(e) = batch {
                                    return Some((Err(e), None));
                                }
                            }
                        }
                        return None;
                    }
                    match block(&mut reads, &judged_schema, keep.as_ref(), &schema, &location, done, &window).await {
                        Ok((n, Some(batch))) => return Some((Ok(batch), Some((reads, done + n)))),
                        Ok((n, None)) => done += n,
                        Err(e) => return Some((Err(e), None)),
                    }
                }
            }
        });
        Ok(BatchStream::new(table, batches.boxed()))
    }
}

impl RemoteNpz {
    /// The member and the part of its layout (its column first) of each part `filter` reads
    /// of the archive's table, in order.
    pub(super) async fn filter_members(
        &self,
        filter: &Filter,
        options: &ConvertOptions,
    ) -> Result<Vec<(String, Part)>> {
        let (table, _) = self.table_schema_with(None, options).await?;
        let location = self.location().to_string();
        (filter.parts().iter())
            .map(|p| {
                // A record's column is not its member's first (its layout's are its fields).
                let own =
                    |f: &&Arc<Field>| self.info(f.name()).is_ok() && !matches!(f.data_type(), DataType::Struct(_));
                let field = table.fields().get(p.column).filter(own).ok_or_else(|| {
                    let reason = format!("a filter reads column {} of the table, not a member's own", p.column);
                    Error::from(ErrorKind::Usage { reason }).reading(&location)
                })?;
                Ok((field.name().clone(), Part::new(0, p.steps.clone())))
            })
            .collect()
    }
}

/// The next block of rows, whose first is row `first` of the table: the judged members'
/// blocks, the verdict (on the rows in `window` only), then the others' kept rows. Gives
/// the block's rows and its batch of kept rows (`None` when none is kept).
async fn block(
    reads: &mut [Read],
    judged_schema: &Arc<Schema>,
    keep: &Keep,
    schema: &Arc<Schema>,
    location: &str,
    first: usize,
    window: &Range<usize>,
) -> Result<(usize, Option<RecordBatch>)> {
    let mut judged_blocks: Vec<Option<RecordBatch>> = vec![None; reads.len()];
    let mut judged: Vec<Option<ArrayRef>> = vec![None; judged_schema.fields().len()];
    let mut n = None;
    for (k, read) in reads.iter_mut().enumerate().filter(|(_, r)| r.verdicts.is_none()) {
        let batch = next(read, location).await?;
        n = Some(batch.num_rows());
        for &(f, c) in &read.judged {
            judged[f] = Some(batch.column(c).clone());
        }
        judged_blocks[k] = Some(batch);
    }
    let n = n.ok_or_else(|| Error::from(ErrorKind::Usage { reason: "a filter that reads no member".into() }))?;
    let judged: Vec<ArrayRef> = judged.into_iter().collect::<Option<_>>().expect("every filter column is read");
    let options = RecordBatchOptions::new().with_row_count(Some(n));
    let judged = RecordBatch::try_new_with_options(Arc::clone(judged_schema), judged, &options)
        .map_err(|e| Error::from(std::io::Error::other(e)).reading(location))?;
    // The block's rows in the window: those judged.
    let (lo, hi) = (window.start.saturating_sub(first).min(n), window.end.saturating_sub(first).min(n));
    let kept = if lo < hi {
        keep(&judged).map_err(|e| Error::from(ErrorKind::Usage { reason: e.to_string() }).reading(location))?
    } else {
        Kept::None
    };
    if let Kept::Rows(mask) = &kept {
        if mask.len() != n {
            let reason = format!("a filter judged {} rows of a block of {n}", mask.len());
            return Err(Error::from(ErrorKind::Usage { reason }).reading(location));
        }
    }
    let kept = within(kept, n, lo..hi);
    let (rows, mask) = match &kept {
        Kept::None => (0, None),
        Kept::All => (n, None),
        Kept::Rows(mask) => {
            let rows = mask.count_set_bits();
            (rows, (rows < n).then(|| BooleanArray::new(mask.clone(), None)))
        }
    };
    for read in reads.iter() {
        if let Some(queue) = &read.verdicts {
            queue.lock().map_err(|_| usage("a filter's verdicts were poisoned"))?.push_back(kept.clone());
        }
    }
    if rows == 0 {
        return Ok((n, None));
    }
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (k, read) in reads.iter_mut().enumerate() {
        // A judged member (read in parts): its table's columns cut to the kept rows.
        if let Some(batch) = judged_blocks[k].take() {
            for column in &batch.columns()[..read.out] {
                columns.push(match &mask {
                    Some(mask) => arrow_select::filter::filter(column, mask)
                        .map_err(|e| Error::from(std::io::Error::other(e)).reading(location))?,
                    None => column.clone(),
                });
            }
            continue;
        }
        let batch = next(read, location).await?;
        if batch.num_rows() != rows {
            let reason = format!("{} rows of a block where the filter kept {rows}", batch.num_rows());
            return Err(npz_error(&read.member, &reason).reading(location));
        }
        match &read.table {
            Some(table) => columns.extend(table.columns(&batch).map_err(|e| e.in_member(&read.member))?),
            None => columns.extend(batch.columns()[..read.out].iter().cloned()),
        }
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let batch = RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options)
        .map_err(|e| Error::from(std::io::Error::other(e)).reading(location))?;
    Ok((n, Some(batch)))
}

/// `kept` (of a block of `n` rows) of the rows `inside` only.
fn within(kept: Kept, n: usize, inside: Range<usize>) -> Kept {
    if inside == (0..n) || matches!(kept, Kept::None) {
        return kept;
    }
    if inside.is_empty() {
        return Kept::None;
    }
    let window = BooleanBuffer::collect_bool(n, |i| inside.contains(&i));
    match kept {
        Kept::Rows(mask) => Kept::Rows(&mask & &window),
        _ => Kept::Rows(window),
    }
}

/// The next batch of a member's read; its end is an error (the table has more rows).
async fn next(read: &mut Read, location: &str) -> Result<RecordBatch> {
    match read.batches.next().await {
        Some(batch) => batch,
        None => Err(npz_error(&read.member, "the member ended before its rows").reading(location)),
    }
}

fn usage(reason: &str) -> Error {
    ErrorKind::Usage { reason: reason.to_string() }.into()
}
