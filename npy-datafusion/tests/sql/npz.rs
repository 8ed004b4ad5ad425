//! Tables of `.npz` archives: each member a column, stored and deflated members alike,
//! checked against npy-core's reads of the archives.

use npy_core::npz::{self, Compression};
use npy_core::Array;
use npy_datafusion::{Kind, NpyReadOptions, NpyTable, SessionContextNpyExt};

use crate::support::*;

/// What the archives hold, read back with npy-core, archive by archive.
struct Members {
    shots: Vec<Shot>,
    ids: Vec<i64>,
    /// Rows of 3.
    grid: Vec<f32>,
}

/// Writes `archives` archives into `dir` (archive `k` with `k % 7 + 1` rows; even ones
/// stored, odd ones deflated), each with a record member `shots`, a plain member `id` and
/// a 2-D member `grid`; returns what npy-core reads back from them.
fn write_archives(dir: &std::path::Path, archives: usize) -> Members {
    std::fs::create_dir_all(dir).unwrap();
    let mut next = 0;
    let mut all = Members { shots: Vec::new(), ids: Vec::new(), grid: Vec::new() };
    for k in 0..archives {
        let rows = k % 7 + 1;
        let shots: Vec<Shot> = (next..next + rows).map(shot).collect();
        let ids: Vec<i64> = (next..next + rows).map(|i| i as i64 * 3 - 7).collect();
        let grid: Vec<f32> = (0..rows * 3).map(|j| (next * 3 + j) as f32 * 0.25).collect();
        next += rows;
        let path = dir.join(format!("part_{k:03}.npz"));
        let mut w = npz::Writer::create(&path).unwrap();
        if k % 2 == 1 {
            w.compression(Compression::Deflated { level: 6 });
        }
        w.add("shots", &shots).unwrap();
        w.add("id", &ids).unwrap();
        w.add("grid", &Array::from_shape_vec(vec![rows, 3], grid).unwrap()).unwrap();
        w.finish().unwrap();
        let mut back = npz::Reader::from_path(&path).unwrap();
        all.shots.extend(back.read::<Vec<Shot>>("shots").unwrap());
        all.ids.extend(back.read::<Vec<i64>>("id").unwrap());
        all.grid.extend(back.read::<Array<f32>>("grid").unwrap().into_vec());
    }
    all
}

#[tokio::test]
async fn members_are_columns_of_stored_and_deflated_archives() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_archives(dir.path(), 40);
    let ctx = context();
    let path = format!("{}/", dir.path().display());
    ctx.register_npz("z", &path, &NpyReadOptions::new()).await.unwrap();
    query(&ctx, &format!("CREATE EXTERNAL TABLE y STORED AS NPZ LOCATION '{path}'")).await;
    for name in ["z", "y"] {
        let provider = ctx.table_provider(name).await.unwrap();
        assert_eq!(provider.downcast_ref::<NpyTable>().map(|t| t.kind()), Some(Kind::Npz), "{name}");
        let count = scalar_f64(&query(&ctx, &format!("SELECT count(*) FROM {name}")).await);
        assert_eq!(count as usize, all.ids.len());
        let t0 = scalar_f64(&query(&ctx, &format!("SELECT sum(shots.t0) FROM {name}")).await);
        assert_close(t0, all.shots.iter().map(|s| s.t0).sum());
        let x = scalar_f64(&query(&ctx, &format!("SELECT min(shots.receiver.x + id) FROM {name}")).await);
        let want = all.shots.iter().zip(&all.ids).map(|(s, id)| s.receiver.x + *id as f64).fold(f64::MAX, f64::min);
        assert_close(x, want);
        // SQL arrays count from 1: grid[3] is NumPy's grid[:, 2].
        let g = scalar_f64(&query(&ctx, &format!("SELECT max(grid[3]) FROM {name}")).await);
        assert_close(g, all.grid.chunks(3).map(|r| f64::from(r[2])).fold(f64::MIN, f64::max));
    }
    // One member alone, filtered by another, with a limit.
    let got = query(&ctx, "SELECT id FROM z WHERE shots.trace_id % 5 = 0 ORDER BY id LIMIT 6").await;
    let mut want: Vec<f64> =
        all.shots.iter().zip(&all.ids).filter(|(s, _)| s.trace_id % 5 == 0).map(|(_, id)| *id as f64).collect();
    want.sort_by(f64::total_cmp);
    want.truncate(6);
    assert_eq!(column_f64(&got, 0), want);
    let stations = column_str(&query(&ctx, "SELECT shots.station FROM z ORDER BY shots.trace_id LIMIT 3").await, 0);
    assert_eq!(stations, all.shots[..3].iter().map(|s| s.station.to_string()).collect::<Vec<_>>());
}

#[tokio::test]
async fn members_of_different_lengths_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.npz");
    let mut w = npz::Writer::create(&path).unwrap();
    w.add("a", &[1i32, 2, 3]).unwrap();
    w.add("b", &[1i32, 2]).unwrap();
    w.finish().unwrap();
    let ctx = context();
    let e = ctx.register_npz("z", path.to_str().unwrap(), &NpyReadOptions::new()).await.unwrap_err();
    let e = e.to_string();
    assert!(e.contains("bad.npz") && e.contains("'b.npy'") && e.contains("'a.npy'"), "{e}");
}
