//! Filters, projections, GROUP BY and a join, each checked against npy-core's reads.

use std::collections::BTreeMap;

use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

async fn shots_table(files: usize) -> (tempfile::TempDir, datafusion::prelude::SessionContext, Vec<Shot>) {
    let dir = tempfile::tempdir().unwrap();
    write_shots(&dir.path().join("shots"), files);
    let shots = read_shots(&dir.path().join("shots"));
    let ctx = context();
    // Small batches: files end mid-batch and batches end mid-file.
    let mut options = NpyReadOptions::new();
    options.batch_rows(5);
    ctx.register_npy("shots", dir.path().join("shots").to_str().unwrap(), &options).await.unwrap();
    (dir, ctx, shots)
}

#[tokio::test]
async fn filter_and_nested_projection() {
    let (_dir, ctx, shots) = shots_table(120).await;
    let sql = "SELECT trace_id, receiver.x, receiver.z, samples[8], station FROM shots \
               WHERE t0 > 100 AND station <> 'BB' ORDER BY trace_id";
    let got = query(&ctx, sql).await;
    let want: Vec<&Shot> = shots.iter().filter(|s| s.t0 > 100.0 && s.station.to_string() != "BB").collect();
    assert!(!want.is_empty() && want.len() < shots.len());
    assert_eq!(column_f64(&got, 0), want.iter().map(|s| f64::from(s.trace_id)).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 1), want.iter().map(|s| s.receiver.x).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 2), want.iter().map(|s| f64::from(s.receiver.z)).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 3), want.iter().map(|s| f64::from(s.samples[7])).collect::<Vec<_>>());
    assert_eq!(column_str(&got, 4), want.iter().map(|s| s.station.to_string()).collect::<Vec<_>>());
}

#[tokio::test]
async fn group_by_station() {
    let (_dir, ctx, shots) = shots_table(90).await;
    let got =
        query(&ctx, "SELECT station, count(*), sum(t0), max(receiver.y) FROM shots GROUP BY station ORDER BY station")
            .await;
    let mut want: BTreeMap<String, (usize, f64, f64)> = BTreeMap::new();
    for s in &shots {
        let e = want.entry(s.station.to_string()).or_insert((0, 0.0, f64::MIN));
        *e = (e.0 + 1, e.1 + s.t0, e.2.max(s.receiver.y));
    }
    assert_eq!(column_str(&got, 0), want.keys().cloned().collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 1), want.values().map(|v| v.0 as f64).collect::<Vec<_>>());
    for (got, want) in column_f64(&got, 2).into_iter().zip(want.values().map(|v| v.1)) {
        assert_close(got, want);
    }
    assert_eq!(column_f64(&got, 3), want.values().map(|v| v.2).collect::<Vec<_>>());
}

#[tokio::test]
async fn join_two_tables() {
    let (dir, ctx, shots) = shots_table(60).await;
    let picks = write_picks(&dir.path().join("picks"), 400);
    ctx.register_npy("picks", dir.path().join("picks").to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let sql =
        "SELECT s.trace_id, p.pick + s.t0 FROM shots s JOIN picks p ON s.trace_id = p.trace_id ORDER BY s.trace_id";
    let got = query(&ctx, sql).await;
    let by_id: BTreeMap<i32, f32> = picks.iter().map(|p| (p.trace_id, p.pick)).collect();
    let mut want: Vec<(i32, f64)> =
        shots.iter().filter_map(|s| by_id.get(&s.trace_id).map(|&p| (s.trace_id, f64::from(p) + s.t0))).collect();
    want.sort_by_key(|w| w.0);
    assert!(!want.is_empty());
    assert_eq!(column_f64(&got, 0), want.iter().map(|w| f64::from(w.0)).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 1), want.iter().map(|w| w.1).collect::<Vec<_>>());
}

#[tokio::test]
async fn read_npy_gives_a_data_frame() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_shots(dir.path(), 20);
    let ctx = context();
    let df = ctx.read_npy(dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    assert_eq!(df.count().await.unwrap(), rows);
}

/// A table whose local files are mapped answers as the same table read: filters, nested
/// projections, GROUP BY, over files split into row ranges; its plan says it maps.
#[tokio::test]
async fn mapped_tables_answer_as_read_tables() {
    use npy_core::mmap::MapContract;
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("shots");
    write_shots(&table, 40);
    let shots = read_shots(&table);
    let config = datafusion::prelude::SessionConfig::new().with_target_partitions(3).with_repartition_file_min_size(1);
    let ctx = context_with(config);
    let mut read = NpyReadOptions::new();
    read.batch_rows(6);
    // SAFETY: the files of this test's temporary directory are not changed once written.
    let contract = unsafe { MapContract::accept() };
    let mut mapped = read.clone();
    mapped.map_local_files(contract);
    ctx.register_npy("shots", table.to_str().unwrap(), &read).await.unwrap();
    ctx.register_npy("mapped", table.to_str().unwrap(), &mapped).await.unwrap();
    for sql in [
        "SELECT trace_id, receiver.x, samples[8], station FROM {} WHERE t0 > 40 ORDER BY trace_id",
        "SELECT station, count(*), sum(t0), max(receiver.y) FROM {} GROUP BY station ORDER BY station",
        "SELECT * FROM {} ORDER BY trace_id",
    ] {
        let got = query(&ctx, &sql.replace("{}", "mapped")).await;
        let want = query(&ctx, &sql.replace("{}", "shots")).await;
        let (got, want) = (concat(&got), concat(&want));
        // The same values; column names differ by the table's name.
        assert_eq!(got.columns(), want.columns(), "{sql}");
        assert!(got.num_rows() > 0, "{sql}");
    }
    let ids = column_f64(&query(&ctx, "SELECT trace_id FROM mapped ORDER BY trace_id").await, 0);
    let mut want: Vec<f64> = shots.iter().map(|s| f64::from(s.trace_id)).collect();
    want.sort_by(f64::total_cmp);
    assert_eq!(ids, want);
    let plan = query(&ctx, "EXPLAIN SELECT t0 FROM mapped").await;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan).unwrap().to_string();
    assert!(text.contains("local files mapped"), "{text}");
}

fn concat(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> datafusion::arrow::record_batch::RecordBatch {
    datafusion::arrow::compute::concat_batches(&batches[0].schema(), batches).unwrap()
}
