//! The same SQL over an S3 bucket as over local files, same answers; writes to S3 (one
//! `put`, and a multipart upload) that read back as written; a header and 10 rows in at
//! most 2 requests. Against the local S3 server `cargo xtask ci` starts (moto), whose
//! bucket is `NPY_S3_BUCKET` and whose endpoint and credentials are in the `AWS_*`
//! variables: ignored otherwise.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::counting;
use crate::support::*;

/// `s3://<bucket>/npy-datafusion/<test>/`: the test's own prefix.
fn prefix(test: &str) -> String {
    let bucket =
        std::env::var("NPY_S3_BUCKET").expect("NPY_S3_BUCKET: run by `cargo xtask ci`, which starts a local S3 server");
    format!("s3://{bucket}/npy-datafusion/{test}/")
}

/// The bucket's store (npy-store's, from the URL and the `AWS_*` variables), registered
/// on `ctx`; and the path of `url` in it.
fn s3_store(ctx: &SessionContext, url: &str) -> (Arc<dyn ObjectStore>, ObjectPath) {
    let at = npy_store::store_for(url).unwrap();
    ctx.register_object_store(&at.base, Arc::clone(&at.store));
    (at.store, at.path)
}

/// Uploads every file of `dir` under `path`.
async fn upload_dir(store: &Arc<dyn ObjectStore>, dir: &Path, path: &ObjectPath) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let key = path.clone().join(entry.file_name().to_string_lossy().as_ref());
        store.put(&key, std::fs::read(entry.path()).unwrap().into()).await.unwrap();
    }
}

async fn table_text(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&query(ctx, sql).await).unwrap().to_string()
}

#[tokio::test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_tables_answer_as_local_ones() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_shots(dir.path(), 40);
    let ctx = context();
    let url = format!("{}shots/", prefix("tables"));
    let (store, path) = s3_store(&ctx, &url);
    upload_dir(&store, dir.path(), &path).await;
    ctx.register_npy("local", format!("{}/", dir.path().display()), &NpyReadOptions::new()).await.unwrap();
    ctx.register_npy("remote", &url, &NpyReadOptions::new()).await.unwrap();

    let shots = read_shots(dir.path());
    assert_eq!(shots.len(), rows);
    let count = scalar_f64(&query(&ctx, "SELECT count(*) FROM remote").await);
    assert_eq!(count as usize, rows);
    let sum = scalar_f64(&query(&ctx, "SELECT sum(t0) FROM remote").await);
    assert_close(sum, shots.iter().map(|s| s.t0).sum());
    for sql in [
        "SELECT station, count(*) AS n, min(t0) AS lo, max(receiver['x']) AS hi FROM {t} GROUP BY station ORDER BY station",
        "SELECT trace_id, t0, samples FROM {t} WHERE trace_id % 17 = 3 ORDER BY trace_id",
        "SELECT trace_id FROM {t} ORDER BY t0 DESC, trace_id LIMIT 5",
    ] {
        let local = table_text(&ctx, &sql.replace("{t}", "local")).await;
        let remote = table_text(&ctx, &sql.replace("{t}", "remote")).await;
        assert_eq!(remote, local, "{sql}");
    }
}

/// The doors' tree under a bucket prefix gives SQL the objects `find_files` gives (its
/// folders' too, other suffixes left out), in their order, as the same tree does locally
/// and as Python's doors read it (`test_doors.py`); registered and by `CREATE EXTERNAL
/// TABLE`.
#[tokio::test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_prefix_gives_the_files_find_gives_in_their_order() {
    let (_dir, top, want) = tree();
    let url = format!("{}runs/", prefix("doors"));
    let ctx = one_partition_context();
    let (store, path) = s3_store(&ctx, &url);
    let names = ORDER.map(|(name, _)| name);
    for name in names.iter().chain(&["notes.txt", "b/image.png"]) {
        let key = ObjectPath::from(format!("{path}/{name}"));
        store.put(&key, std::fs::read(top.join(name)).unwrap().into()).await.unwrap();
    }
    let found = npy_store::find_files(&url).await.unwrap();
    assert_eq!(found, names.map(|n| format!("{url}{n}")));
    ctx.register_npy("registered", &url, &NpyReadOptions::new()).await.unwrap();
    query(&ctx, &format!("CREATE EXTERNAL TABLE created STORED AS NPY LOCATION '{url}'")).await;
    for name in ["registered", "created"] {
        assert_eq!(values(&ctx, &format!("SELECT values FROM {name}")).await, want, "{name}");
    }
}

#[tokio::test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_npz_tables_answer_as_local_ones() {
    // Archives of a record member and a plain one, stored and deflated: the members are
    // read from the bucket by ranged GETs (stored) and inflated as they arrive (deflated).
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    for a in 0..6usize {
        let shots: Vec<Shot> = (a * 50..a * 50 + 7 * a + 1).map(shot).collect();
        let ids: Vec<i64> = shots.iter().map(|s| i64::from(s.trace_id) * 2).collect();
        let mut w = npy_core::npz::Writer::create(dir.path().join(format!("z{a}.npz"))).unwrap();
        if a % 2 == 1 {
            w.compression(npy_core::npz::Compression::Deflated { level: 6 });
        }
        w.add("shots", &shots).unwrap();
        w.add("id", &ids).unwrap();
        w.finish().unwrap();
        all.extend(shots.into_iter().zip(ids));
    }
    let ctx = context();
    let url = format!("{}archives/", prefix("npz"));
    let (store, path) = s3_store(&ctx, &url);
    upload_dir(&store, dir.path(), &path).await;
    ctx.register_npz("local", format!("{}/", dir.path().display()), &NpyReadOptions::new()).await.unwrap();
    ctx.register_npz("remote", &url, &NpyReadOptions::new()).await.unwrap();
    let sum = scalar_f64(&query(&ctx, "SELECT sum(shots['t0'] + id) FROM remote").await);
    assert_close(sum, all.iter().map(|(s, id)| s.t0 + *id as f64).sum());
    for sql in [
        "SELECT shots['station'] AS station, count(*) AS n, max(id) AS hi FROM {t} GROUP BY 1 ORDER BY 1",
        "SELECT id, shots['samples'] AS samples FROM {t} WHERE id % 7 = 2 ORDER BY id",
    ] {
        let local = table_text(&ctx, &sql.replace("{t}", "local")).await;
        let remote = table_text(&ctx, &sql.replace("{t}", "remote")).await;
        assert_eq!(remote, local, "{sql}");
    }
}

#[tokio::test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_copy_to_writes_objects_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context();
    let base = prefix("copy");
    let (store, path) = s3_store(&ctx, &base);

    // Small: one put. 1.5M rows of 16 bytes: a multipart upload of two parts.
    for (name, n) in [("small.npy", 1000usize), ("big.npy", 1_500_000)] {
        let sql =
            format!("COPY (SELECT value AS i, CAST(value AS DOUBLE) * 0.5 AS x FROM range(0, {n})) TO '{base}{name}'");
        assert_eq!(scalar_f64(&query(&ctx, &sql).await) as usize, n);
        let bytes = store.get(&path.clone().join(name)).await.unwrap().bytes().await.unwrap();
        let local = dir.path().join(name);
        std::fs::write(&local, &bytes).unwrap();
        #[derive(NpyRecord, Debug, PartialEq)]
        struct Row {
            i: i64,
            x: f64,
        }
        let rows: Vec<Row> = Vec::read_npy(&local).unwrap();
        assert_eq!(rows.len(), n);
        assert!(rows.iter().enumerate().all(|(k, r)| r.i == k as i64 && r.x == k as f64 * 0.5));
    }

    // A failed COPY leaves no object.
    let sql =
        format!("COPY (SELECT CASE WHEN value = 5 THEN NULL ELSE value END AS i FROM range(0, 10)) TO '{base}bad.npy'");
    assert!(ctx.sql(&sql).await.unwrap().collect().await.is_err());
    let e = store.head(&path.clone().join("bad.npy")).await.unwrap_err();
    assert!(matches!(e, object_store::Error::NotFound { .. }), "{e}");
}

#[tokio::test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_header_and_ten_rows_cost_at_most_two_requests() {
    let ctx = SessionContext::new();
    let url = format!("{}rows.npy", prefix("requests"));
    let (store, path) = s3_store(&ctx, &url);
    let values: Vec<i32> = (0..100_000).map(|i| i * 7 - 11).collect();
    store.put(&path, values.write_npy_to(Vec::new()).unwrap().into()).await.unwrap();
    let counted = counting::Counting::new(store);
    for rows in [0..10, 50_000..50_010, 99_990..100_000] {
        counted.reset();
        let npy = npy_store::RemoteNpy::from_store(counted.clone(), &path).await.unwrap();
        assert_eq!(npy.read_rows::<Vec<i32>>(rows.clone()).await.unwrap(), values[rows.clone()]);
        assert!(counted.requests() <= 2, "{rows:?}: {} requests", counted.requests());
    }
}
