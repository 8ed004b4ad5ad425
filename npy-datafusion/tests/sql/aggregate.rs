//! Aggregates over a directory of files of three layouts.

use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

#[tokio::test]
async fn aggregates_match_npy_core() {
    let dir = tempfile::tempdir().unwrap();
    write_shots(dir.path(), 300);
    let shots = read_shots(dir.path());
    assert!(shots.len() > 3000);
    let ctx = context();
    ctx.register_npy("shots", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let n = shots.len() as f64;
    let avg_t0 = shots.iter().map(|s| s.t0).sum::<f64>() / n;
    assert_close(scalar_f64(&query(&ctx, "SELECT avg(t0) FROM shots").await), avg_t0);
    let sum_id: i64 = shots.iter().map(|s| i64::from(s.trace_id)).sum();
    assert_eq!(scalar_f64(&query(&ctx, "SELECT sum(trace_id) FROM shots").await), sum_id as f64);
    // SQL arrays are 1-based: samples[2] is NumPy's samples[:, 1].
    let max_s1 = shots.iter().map(|s| s.samples[1]).fold(f32::MIN, f32::max);
    assert_eq!(scalar_f64(&query(&ctx, "SELECT max(samples[2]) FROM shots").await), f64::from(max_s1));
    let min_z = shots.iter().map(|s| s.receiver.z).fold(f32::MAX, f32::min);
    assert_eq!(scalar_f64(&query(&ctx, "SELECT min(receiver.z) FROM shots").await), f64::from(min_z));
    let sum_y: f64 = shots.iter().map(|s| s.receiver.y).sum();
    assert_close(scalar_f64(&query(&ctx, "SELECT sum(shots.receiver.y) FROM shots").await), sum_y);
}
