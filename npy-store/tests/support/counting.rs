//! An object store that counts the requests made of the store it wraps.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, Result,
};

/// Requests made through a [`Counting`] store, by kind.
#[derive(Debug, Default)]
pub struct Counts {
    pub gets: AtomicUsize,
    pub heads: AtomicUsize,
    pub lists: AtomicUsize,
    pub puts: AtomicUsize,
    pub copies: AtomicUsize,
}

/// A store counting every request it forwards. `get_ranges` is not overridden: the default
/// sends each coalesced range through `get_opts`, so each is counted.
#[derive(Debug)]
pub struct Counting {
    inner: Arc<dyn ObjectStore>,
    pub counts: Counts,
}

#[allow(dead_code)] // not every test uses every count
impl Counting {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Arc<Counting> {
        Arc::new(Counting { inner, counts: Counts::default() })
    }

    /// GETs (ranged or whole) since the last reset.
    pub fn gets(&self) -> usize {
        self.counts.gets.load(Ordering::SeqCst)
    }

    /// Every request since the last reset.
    pub fn requests(&self) -> usize {
        let c = &self.counts;
        [&c.gets, &c.heads, &c.lists, &c.puts, &c.copies].iter().map(|n| n.load(Ordering::SeqCst)).sum()
    }

    pub fn reset(&self) {
        let c = &self.counts;
        for n in [&c.gets, &c.heads, &c.lists, &c.puts, &c.copies] {
            n.store(0, Ordering::SeqCst);
        }
    }
}

impl fmt::Display for Counting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

fn bump(n: &AtomicUsize) {
    n.fetch_add(1, Ordering::SeqCst);
}

#[async_trait::async_trait]
impl ObjectStore for Counting {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        bump(&self.counts.puts);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        bump(&self.counts.puts);
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        bump(if options.head { &self.counts.heads } else { &self.counts.gets });
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        bump(&self.counts.lists);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        bump(&self.counts.lists);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        bump(&self.counts.copies);
        self.inner.copy_opts(from, to, options).await
    }
}
