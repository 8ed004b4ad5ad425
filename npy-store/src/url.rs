//! The object store for a URL or a local path.

use std::sync::Arc;

use npy_core::{ErrorKind, Result};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::store_error;

/// Where a URL or path leads: the store, the URL it is known by, and the path in it.
#[derive(Debug, Clone)]
pub struct StoreLocation {
    /// The store: a [`LocalFileSystem`] for local paths and `file://` URLs, an S3, GCS,
    /// Azure or HTTP store for the others.
    pub store: Arc<dyn ObjectStore>,
    /// The store's URL, scheme and authority only (`s3://bucket/`, `file:///`): what
    /// DataFusion registers a store under (`RuntimeEnv::register_object_store`).
    pub base: Url,
    /// The object's (or directory's) path in the store.
    pub path: Path,
}

/// Whether `s` is a URL (`scheme://...`, the scheme a letter then letters, digits, `+`,
/// `.` or `-`), not a local path: the one test of every door (Python's `npy._source`
/// asks it too).
///
/// # Examples
/// ```
/// assert!(npy_store::is_url("s3://bucket/runs/"));
/// assert!(!npy_store::is_url("runs/2024://odd.npy"));
/// ```
pub fn is_url(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once("://") else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// Fails, in npy-core's words ([`npy_core::open_file`]: "is a FIFO, not a file"), for a
/// local path that names something neither a file nor a folder: object_store's
/// `LocalFileSystem` would open it, and opening a FIFO waits for a writer that may never
/// come. A missing path, a file or a folder passes.
fn no_special_file(path: &std::path::Path) -> Result<()> {
    if std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir()) {
        // Refused before it is opened (a file put there since is opened, and closed).
        npy_core::open_file(path)?;
    }
    Ok(())
}

/// The object store of `url_or_path` and the path in it.
///
/// - What is not a URL ([`is_url`]) is a local path (relative to the current directory),
///   and a `file://` URL a local absolute path: [`LocalFileSystem`].
/// - `s3://bucket/key` (feature `aws`): `AmazonS3Builder::from_env()`, so the usual `AWS_*`
///   variables apply (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_DEFAULT_REGION`,
///   `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, ...).
/// - `gs://bucket/key` (feature `gcp`, `GOOGLE_*` variables), `az://container/path`,
///   `abfs[s]://...` (feature `azure`, `AZURE_*` variables), `http[s]://host/path`
///   (feature `http`; an `http://` URL is fetched over plain HTTP, as written).
/// - `memory:///path`: a new, empty [`InMemory`] store (for tests).
///
/// # Errors
/// [`ErrorKind::Usage`] for a URL that does not parse, a scheme no store serves, or one
/// whose feature is off (saying which); the store builder's errors (e.g. an S3 URL
/// without a bucket); a local path that is a FIFO or a device ([`ErrorKind::Io`], at
/// once: its store would wait in opening it). All name the URL.
///
/// # Examples
/// ```
/// let here = npy_store::store_for("data/x.npy")?;
/// assert_eq!(here.base.as_str(), "file:///");
/// assert!(here.path.as_ref().ends_with("data/x.npy"));
///
/// // `..` is resolved in paths that exist.
/// let up = npy_store::store_for("../npy-store/src/url.rs")?;
/// assert!(up.path.as_ref().ends_with("npy-store/src/url.rs"));
///
/// let memory = npy_store::store_for("memory:///a/b.npz")?;
/// assert_eq!(memory.path.as_ref(), "a/b.npz");
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn store_for(url_or_path: &str) -> Result<StoreLocation> {
    let fail = |reason: String| npy_core::Error::from(ErrorKind::Usage { reason }).reading(url_or_path);
    if !is_url(url_or_path) {
        // Object store paths have no `..` segments: an existing path is resolved (links too),
        // a new one made absolute as given.
        let absolute = std::fs::canonicalize(url_or_path)
            .or_else(|_| std::path::absolute(url_or_path))
            .map_err(|e| npy_core::Error::from(e).reading(url_or_path))?;
        no_special_file(&absolute)?;
        let path = Path::from_absolute_path(&absolute).map_err(|e| fail(format!("not a usable path: {e}")))?;
        let base = Url::parse("file:///").map_err(|e| fail(e.to_string()))?;
        return Ok(StoreLocation { store: Arc::new(LocalFileSystem::new()), base, path });
    }
    let url = Url::parse(url_or_path).map_err(|e| fail(format!("not a URL: {e}")))?;
    let (scheme, path) = ObjectStoreScheme::parse(&url).map_err(|e| fail(format!("no object store for it: {e}")))?;
    let base = match url.host_str() {
        Some(host) => {
            let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
            let user = match url.username() {
                "" => String::new(),
                user => format!("{user}@"),
            };
            Url::parse(&format!("{}://{user}{host}{port}/", url.scheme())).map_err(|e| fail(e.to_string()))?
        }
        None => Url::parse(&format!("{}:///", url.scheme())).map_err(|e| fail(e.to_string()))?,
    };
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::Local => {
            let file = url.to_file_path().map_err(|()| fail("not a local file path".to_string()))?;
            no_special_file(&file)?;
            let path = Path::from_absolute_path(&file).map_err(|e| fail(format!("not a usable path: {e}")))?;
            return Ok(StoreLocation { store: Arc::new(LocalFileSystem::new()), base, path });
        }
        ObjectStoreScheme::Memory => Arc::new(InMemory::new()),
        ObjectStoreScheme::AmazonS3 => cloud(url_or_path, "aws", aws)?,
        ObjectStoreScheme::GoogleCloudStorage => cloud(url_or_path, "gcp", gcp)?,
        ObjectStoreScheme::MicrosoftAzure => cloud(url_or_path, "azure", azure)?,
        ObjectStoreScheme::Http => cloud(url_or_path, "http", http)?,
        other => return Err(fail(format!("no object store for {other:?} URLs"))),
    };
    Ok(StoreLocation { store, base, path })
}

/// A store builder for one scheme: `None` when its feature is off.
type Build = fn(&str) -> Option<object_store::Result<Arc<dyn ObjectStore>>>;

/// The store `build` makes for `url` (`None` when `feature` is off).
fn cloud(url: &str, feature: &str, build: Build) -> Result<Arc<dyn ObjectStore>> {
    match build(url) {
        Some(store) => store.map_err(|e| store_error(e, url)),
        None => {
            let reason = format!("{feature} URLs need npy-store's feature `{feature}`, which this build does not have");
            Err(npy_core::Error::from(ErrorKind::Usage { reason }).reading(url))
        }
    }
}

#[cfg(feature = "aws")]
fn aws(url: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    let builder = object_store::aws::AmazonS3Builder::from_env().with_url(url);
    Some(builder.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>))
}

#[cfg(not(feature = "aws"))]
fn aws(_: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    None
}

#[cfg(feature = "gcp")]
fn gcp(url: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    let builder = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url);
    Some(builder.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>))
}

#[cfg(not(feature = "gcp"))]
fn gcp(_: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    None
}

#[cfg(feature = "azure")]
fn azure(url: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    let builder = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url);
    Some(builder.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>))
}

#[cfg(not(feature = "azure"))]
fn azure(_: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    None
}

#[cfg(feature = "http")]
fn http(url: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    // The store serves the host; objects are paths on it.
    let parsed = Url::parse(url).ok()?;
    let root = format!("{}://{}", parsed.scheme(), &parsed[url::Position::BeforeHost..url::Position::AfterPort]);
    // An `http://` URL asks for plain HTTP (object_store refuses it unless allowed).
    let client = object_store::ClientOptions::new().with_allow_http(parsed.scheme() == "http");
    let builder = object_store::http::HttpBuilder::new().with_url(root).with_client_options(client);
    Some(builder.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>))
}

#[cfg(not(feature = "http"))]
fn http(_: &str) -> Option<object_store::Result<Arc<dyn ObjectStore>>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_and_file_urls() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a b.npy");
        let by_path = store_for(file.to_str().unwrap()).unwrap();
        let url = Url::from_file_path(&file).unwrap();
        let by_url = store_for(url.as_str()).unwrap();
        assert_eq!(by_path.path, by_url.path);
        assert_eq!(by_path.path, Path::from_absolute_path(&file).unwrap());
        assert_eq!((by_path.base.as_str(), by_url.base.as_str()), ("file:///", "file:///"));
    }

    #[test]
    fn bad_urls_name_themselves() {
        for bad in ["nosuch://x/y.npy", "s3://"] {
            let e = store_for(bad).unwrap_err();
            assert!(e.to_string().starts_with(&format!("reading '{bad}'")), "{e}");
        }
    }

    #[cfg(feature = "aws")]
    #[test]
    fn s3_urls() {
        let s3 = store_for("s3://bucket/dir/x%20y.npy").unwrap();
        assert_eq!(s3.base.as_str(), "s3://bucket/");
        assert_eq!(s3.path.as_ref(), "dir/x y.npy");
    }

    #[cfg(feature = "http")]
    #[test]
    fn http_urls() {
        let http = store_for("http://127.0.0.1:8080/data/x.npy").unwrap();
        assert_eq!(http.base.as_str(), "http://127.0.0.1:8080/");
        assert_eq!(http.path.as_ref(), "data/x.npy");
    }
}
