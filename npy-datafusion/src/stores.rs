//! Object stores made on first use, from a table's URL and the environment.

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use object_store::ObjectStore;
use url::Url;

use crate::error::npy_error;

/// A DataFusion [`ObjectStoreRegistry`] that makes the store of a bucket (or host) the first
/// time a query names it, as [`npy_store::store_for`] makes it from the URL and the
/// environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`; the schemes npy-store's features enable), and
/// keeps it for later queries. Stores registered explicitly
/// ([`SessionContext::register_object_store`](datafusion::prelude::SessionContext::register_object_store))
/// win; local files are always there.
///
/// A cluster's processes need one: the client's registered stores stay in the client,
/// while the scheduler lists a table's files and the executors read them through their
/// own runtimes (`npy_ballista::scheduler_config` and `executor_config` use it).
///
/// # Examples
/// ```
/// use std::sync::Arc;
///
/// use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
/// use datafusion::execution::runtime_env::RuntimeEnvBuilder;
/// use npy_datafusion::StoreRegistry;
///
/// let registry = Arc::new(StoreRegistry::new());
/// let runtime = RuntimeEnvBuilder::new().with_object_store_registry(registry.clone()).build()?;
/// // `memory://` makes an empty in-memory store (npy-store's, for tests), kept once made.
/// let url = ObjectStoreUrl::parse("memory://")?;
/// let store = runtime.object_store(&url)?;
/// assert!(Arc::ptr_eq(&store, &registry.get_store(url.as_ref())?));
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Default)]
pub struct StoreRegistry {
    /// The stores made or registered so far, by scheme, host and port.
    known: DefaultObjectStoreRegistry,
}

impl StoreRegistry {
    /// A registry that knows local files and makes every other store when first asked.
    pub fn new() -> StoreRegistry {
        StoreRegistry::default()
    }
}

impl ObjectStoreRegistry for StoreRegistry {
    fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.known.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.known.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.known.get_store(url) {
            return Ok(store);
        }
        let made = npy_store::store_for(url.as_str()).map_err(npy_error)?;
        // Two queries may make the same store at once: both are good, the last one stays.
        self.known.register_store(&made.base, Arc::clone(&made.store));
        Ok(made.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_are_made_once_and_registered_ones_win() -> Result<()> {
        let registry = StoreRegistry::new();
        let a = Url::parse("memory:///a/x.npy").map_err(|e| datafusion::error::DataFusionError::External(e.into()))?;
        let b = Url::parse("memory:///b/").map_err(|e| datafusion::error::DataFusionError::External(e.into()))?;
        let first = registry.get_store(&a)?;
        assert!(Arc::ptr_eq(&first, &registry.get_store(&b)?), "one store per scheme and host");

        let mine: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        registry.register_store(&a, Arc::clone(&mine));
        assert!(Arc::ptr_eq(&mine, &registry.get_store(&b)?));
        assert!(registry.get_store(&Url::parse("file:///tmp/").expect("a URL")).is_ok());
        Ok(())
    }

    #[test]
    fn unknown_schemes_are_errors_naming_the_url() {
        let url = Url::parse("hdfs://namenode:8020/data/").expect("a URL");
        let err = StoreRegistry::new().get_store(&url).expect_err("no hdfs store").to_string();
        assert!(err.contains("hdfs://namenode:8020/data/"), "{err}");
    }
}
