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
    let options = NpyReadOptions { batch_rows: Some(5), ..Default::default() };
    ctx.register_npy("shots", dir.path().join("shots").to_str().unwrap(), options).await.unwrap();
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
    ctx.register_npy("picks", dir.path().join("picks").to_str().unwrap(), NpyReadOptions::default()).await.unwrap();
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
    let df = ctx.read_npy(dir.path().to_str().unwrap(), NpyReadOptions::default()).await.unwrap();
    assert_eq!(df.count().await.unwrap(), rows);
}
