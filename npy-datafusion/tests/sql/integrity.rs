//! Corrupt and empty files: every query fails naming the file (and member), as `npy check`
//! and NumPy refuse them; intact files of the same shape answer.

use std::io::Cursor;
use std::path::Path;

use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use npy_core::npz::{Compression, MemberInfo, Reader, Writer};
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

/// Rows of each member: several batches of [`BATCH_ROWS`].
const ROWS: usize = 3000;
const BATCH_ROWS: usize = 7;

/// The queries a corrupt table must fail: from the row count alone, one column, all of
/// them, a limit pushed to the scan and one above a filter (which the scan evaluates), a
/// filter that keeps no row, one judged on the other member, and a count of the rows a
/// filter keeps (no column read but the filter's).
const QUERIES: [&str; 8] = [
    "SELECT count(*) FROM t",
    "SELECT sum(x) FROM t",
    "SELECT * FROM t",
    "SELECT * FROM t LIMIT 2",
    "SELECT x FROM t WHERE x >= 0 LIMIT 2",
    "SELECT n FROM t WHERE x < 0",
    "SELECT x FROM t WHERE n = 5",
    "SELECT count(*) FROM t WHERE x < 1.5",
];

/// An archive of members `x` (f64, stored or deflated as `compression`) and `n` (i32,
/// stored), [`ROWS`] each.
fn archive(compression: Compression) -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    let x: Vec<f64> = (0..ROWS).map(|i| i as f64 * 0.5).collect();
    let n: Vec<i32> = (0..ROWS as i32).collect();
    w.add_with("x", &x, compression).unwrap();
    w.add("n", &n).unwrap();
    w.finish().unwrap().into_inner()
}

fn member(bytes: &[u8], name: &str) -> MemberInfo {
    let reader = Reader::from_reader(Cursor::new(bytes)).unwrap();
    reader.members().iter().find(|m| m.name == name).unwrap().clone()
}

async fn table(dir: &Path, name: &str, bytes: &[u8]) -> SessionContext {
    table_of(dir, name, bytes, Some(BATCH_ROWS)).await
}

async fn table_of(dir: &Path, name: &str, bytes: &[u8], batch_rows: Option<usize>) -> SessionContext {
    std::fs::write(dir.join(name), bytes).unwrap();
    let ctx = context();
    let options = {
        let mut o = NpyReadOptions::new();
        if let Some(rows) = batch_rows {
            o.batch_rows(rows);
        }
        o
    };
    ctx.register_npz("t", dir.join(name).to_str().unwrap(), &options).await.unwrap();
    ctx
}

/// Every query of [`QUERIES`] on `ctx`'s table fails with an error holding each of `want`.
async fn every_query_fails(ctx: &SessionContext, want: &[&str]) {
    for sql in QUERIES {
        let got = match ctx.sql(sql).await {
            Ok(df) => df.collect().await,
            Err(e) => Err(e),
        };
        let e = got.map(|b| format!("{b:?}")).expect_err(sql).to_string();
        for w in want {
            assert!(e.contains(w), "{sql}: {e}");
        }
    }
}

#[tokio::test]
async fn intact_archives_answer_every_query() {
    let dir = tempfile::tempdir().unwrap();
    for (i, compression) in [Compression::Stored, Compression::deflated()].into_iter().enumerate() {
        let ctx = table(dir.path(), &format!("ok{i}.npz"), &archive(compression)).await;
        assert_eq!(scalar_f64(&query(&ctx, QUERIES[0]).await), ROWS as f64);
        assert_eq!(scalar_f64(&query(&ctx, QUERIES[1]).await), (0..ROWS).map(|i| i as f64 * 0.5).sum::<f64>());
        let rows = |b: Vec<datafusion::arrow::record_batch::RecordBatch>| b.iter().map(|b| b.num_rows()).sum::<usize>();
        assert_eq!(rows(query(&ctx, QUERIES[2]).await), ROWS);
        assert_eq!(rows(query(&ctx, QUERIES[3]).await), 2);
        assert_eq!(rows(query(&ctx, QUERIES[4]).await), 2);
        assert_eq!(rows(query(&ctx, QUERIES[5]).await), 0);
        assert_eq!(column_f64(&query(&ctx, QUERIES[6]).await, 0), [2.5]);
        assert_eq!(scalar_f64(&query(&ctx, QUERIES[7]).await), 3.0);
    }
}

#[tokio::test]
async fn a_bit_flipped_in_a_stored_member_fails_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = archive(Compression::Stored);
    let x = member(&bytes, "x");
    let data = (x.data_start.unwrap() + x.size) as usize - ROWS * 8;
    // In the first row (given out first), in the middle and in the last byte of the last.
    for at in [data, data + ROWS * 4, data + ROWS * 8 - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 1;
        let ctx = table(dir.path(), &format!("flip{at}.npz"), &bad).await;
        every_query_fails(&ctx, &[&format!("flip{at}.npz"), "member 'x.npy'", "bad CRC-32"]).await;
        // The intact member alone answers: only the bytes a query reads are checked.
        assert_eq!(scalar_f64(&query(&ctx, "SELECT sum(n) FROM t").await), (0..ROWS).sum::<usize>() as f64);
    }
}

#[tokio::test]
async fn a_deflated_member_with_a_wrong_crc_fails_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = archive(Compression::deflated());
    let x = member(&bytes, "x");
    // The CRC in the member's local header and in the central directory.
    let (crc, wrong) = (x.crc32.unwrap().to_le_bytes(), (x.crc32.unwrap() ^ 0x10).to_le_bytes());
    let mut bad = bytes.clone();
    let mut replaced = 0;
    for at in 0..bad.len() - 4 {
        if bad[at..at + 4] == crc {
            bad[at..at + 4].copy_from_slice(&wrong);
            replaced += 1;
        }
    }
    assert_eq!(replaced, 2);
    let ctx = table(dir.path(), "crc.npz", &bad).await;
    every_query_fails(&ctx, &["crc.npz", "member 'x.npy'", "bad CRC-32"]).await;
}

#[tokio::test]
async fn a_truncated_member_fails_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<f64> = (0..ROWS).map(|i| i as f64).collect();
    let npy = x.write_npy_to(Vec::new()).unwrap();
    for (i, compression) in [Compression::Stored, Compression::deflated()].into_iter().enumerate() {
        // A member whose .npy ends 4 bytes before its header's data does (the zip is whole).
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_raw_with("x.npy", &npy[..npy.len() - 4], compression).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let name = format!("short{i}.npz");
        std::fs::write(dir.path().join(&name), &bytes).unwrap();
        let ctx = context();
        let e = ctx.register_npz("t", dir.path().join(&name).to_str().unwrap(), &NpyReadOptions::new()).await;
        let e = e.unwrap_err().to_string();
        assert!(e.contains(&name) && e.contains("member 'x.npy'") && e.contains("truncated"), "{e}");

        // Cut after the table was made: every query fails.
        let good = archive(compression);
        let ctx = table(dir.path(), &name, &good).await;
        let mut cut = Writer::new(Cursor::new(Vec::new()));
        let npy = x_npy();
        cut.add_raw_with("x.npy", &npy[..npy.len() - 8], compression).unwrap();
        cut.add("n", &(0..ROWS as i32).collect::<Vec<_>>()).unwrap();
        std::fs::write(dir.path().join(&name), cut.finish().unwrap().into_inner()).unwrap();
        every_query_fails(&ctx, &[&name, "member 'x.npy'"]).await;
    }
}

/// Member `x` of [`archive`] as a `.npy`.
fn x_npy() -> Vec<u8> {
    (0..ROWS).map(|i| i as f64 * 0.5).collect::<Vec<f64>>().write_npy_to(Vec::new()).unwrap()
}

#[tokio::test]
async fn empty_files_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("a.npy");
    [1.5f64, 2.5][..].write_npy(&ok).unwrap();
    std::fs::write(dir.path().join("b.npy"), b"").unwrap();
    // An archive beside them would make the directory two kinds, which no door reads.
    let archives = tempfile::tempdir().unwrap();
    std::fs::write(archives.path().join("e.npz"), b"").unwrap();
    let ctx = context();
    for (path, npz) in
        [(dir.path().join("b.npy"), false), (dir.path().to_path_buf(), false), (archives.path().join("e.npz"), true)]
    {
        let path = path.to_str().unwrap();
        let e = match npz {
            false => ctx.register_npy("t", path, &NpyReadOptions::new()).await,
            true => ctx.register_npz("t", path, &NpyReadOptions::new()).await,
        };
        let e = e.unwrap_err().to_string();
        let name = if npz { "e.npz" } else { "b.npy" };
        assert!(e.contains(name) && e.contains("0 bytes"), "{e}");
    }
    let sql = format!("CREATE EXTERNAL TABLE c STORED AS NPY LOCATION '{}/'", dir.path().display());
    let e = ctx.sql(&sql).await.unwrap_err().to_string();
    assert!(e.contains("b.npy") && e.contains("0 bytes"), "{e}");

    // An empty file that appears after the table was made, in a session that lists the
    // table's files at each scan (the default one keeps its first listing).
    let runtime = RuntimeEnvBuilder::new()
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
        .build_arc()
        .unwrap();
    let mut state = SessionStateBuilder::new().with_default_features().with_runtime_env(runtime).build();
    npy_datafusion::register(&mut state).unwrap();
    let ctx = SessionContext::new_with_state(state);
    let later = tempfile::tempdir().unwrap();
    [1.5f64, 2.5][..].write_npy(later.path().join("a.npy")).unwrap();
    ctx.register_npy("l", later.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    assert_eq!(scalar_f64(&query(&ctx, "SELECT count(*) FROM l").await), 2.0);
    std::fs::write(later.path().join("z.npy"), b"").unwrap();
    for sql in ["SELECT count(*) FROM l", "SELECT values FROM l", "SELECT * FROM l", "SELECT * FROM l LIMIT 1"] {
        let e = ctx.sql(sql).await.unwrap().collect().await.unwrap_err().to_string();
        assert!(e.contains("z.npy") && e.contains("0 bytes"), "{sql}: {e}");
    }
}

#[tokio::test]
async fn a_short_npy_fails_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.npy");
    let x: Vec<f64> = (0..ROWS).map(|i| i as f64).collect();
    let npy = x.write_npy_to(Vec::new()).unwrap();
    std::fs::write(&path, &npy[..npy.len() - 4]).unwrap();
    let ctx = context();
    let e = ctx.register_npy("t", path.to_str().unwrap(), &NpyReadOptions::new()).await.unwrap_err().to_string();
    assert!(e.contains("s.npy") && e.contains("truncated"), "{e}");

    // Cut after the table was made.
    std::fs::write(&path, &npy).unwrap();
    ctx.register_npy("t", path.to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    std::fs::write(&path, &npy[..npy.len() - 4]).unwrap();
    for sql in ["SELECT count(*) FROM t", "SELECT sum(values) FROM t", "SELECT * FROM t", "SELECT * FROM t LIMIT 2"] {
        let e = match ctx.sql(sql).await {
            Ok(df) => df.collect().await.map(|b| format!("{b:?}")).expect_err(sql).to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("s.npy"), "{sql}: {e}");
    }
}

#[tokio::test]
async fn a_large_member_is_checked_before_its_first_rows() {
    // Over the 64 MiB an archive's scan holds: checked by a read of its own first, so a
    // LIMIT above a filter, which stops reading early, never answers from it.
    let dir = tempfile::tempdir().unwrap();
    let rows = (64 << 20) / 8 + 1000;
    let x: Vec<f64> = (0..rows).map(|i| i as f64).collect();
    let mut w = Writer::new(Cursor::new(Vec::new()));
    w.add("x", &x).unwrap();
    drop(x);
    let mut bytes = w.finish().unwrap().into_inner();
    let ctx = table_of(dir.path(), "big.npz", &bytes, None).await;
    assert_eq!(scalar_f64(&query(&ctx, "SELECT count(*) FROM (SELECT x FROM t WHERE x >= 0 LIMIT 2)").await), 2.0);
    let info = member(&bytes, "x");
    // The first row's value: the row a LIMIT gives.
    let first = (info.data_start.unwrap() + info.size) as usize - rows * 8;
    bytes[first + 7] ^= 0x40;
    std::fs::write(dir.path().join("big.npz"), &bytes).unwrap();
    let e = ctx.sql("SELECT x FROM t WHERE x >= 0 LIMIT 2").await.unwrap().collect().await.unwrap_err().to_string();
    assert!(e.contains("big.npz") && e.contains("member 'x.npy'") && e.contains("bad CRC-32"), "{e}");
}
