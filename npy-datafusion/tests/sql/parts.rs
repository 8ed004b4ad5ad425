//! Parts of columns decoded in the scan: `samples[k]`, `samples[a:b]` and `receiver['x']`
//! in projections, filters, aggregates and top-k, each equal to DataFusion's own answer
//! (the same query with an index the scan cannot read alone: `samples[trace_id - trace_id
//! + k]`, which DataFusion evaluates over the whole decoded subarray) and to npy-core's
//! records, and shown in `EXPLAIN`.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

/// The result of `sql` as a table's text.
async fn text(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&query(ctx, sql).await).unwrap().to_string()
}

/// The physical plan of `sql`, as `EXPLAIN` shows it.
async fn plan(ctx: &SessionContext, sql: &str) -> String {
    let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    shown
}

/// `sql` with `{k}` as the literal `k` (read in the scan) and as an index DataFusion must
/// compute per row: both answer alike, and the first decodes `part` in the scan.
async fn same_as_datafusion(ctx: &SessionContext, sql: &str, k: &[i64], part: Option<&str>) {
    let mut constant = sql.to_string();
    let mut computed = sql.to_string();
    for (i, k) in k.iter().enumerate() {
        constant = constant.replace(&format!("{{{i}}}"), &k.to_string());
        computed = computed.replace(&format!("{{{i}}}"), &format!("(trace_id - trace_id + {k})"));
    }
    assert_eq!(text(ctx, &constant).await, text(ctx, &computed).await, "{constant}");
    // The parts the scan decodes, in any order.
    let shown = plan(ctx, &constant).await;
    let mut got: Vec<&str> = decoded(&shown).map_or(Vec::new(), |d| d.split(", ").collect());
    let mut want: Vec<&str> = part.map_or(Vec::new(), |p| p.split(", ").collect());
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{constant}: {shown}");
    // The computed index: the subarray decoded whole (struct fields may still be parts).
    let shown = plan(ctx, &computed).await;
    assert!(!decoded(&shown).unwrap_or_default().contains("samples"), "{computed}: {shown}");
}

/// The parts a plan's scan decodes, as `EXPLAIN` lists them (`samples[2], r['x']`).
fn decoded(plan: &str) -> Option<&str> {
    let line = plan.split("parts decoded=[").nth(1)?.lines().next()?;
    // The list closes the scan's line.
    line.strip_suffix(']')
}

#[tokio::test]
async fn subarray_items_and_runs_answer_as_datafusion_does() {
    let dir = tempfile::tempdir().unwrap();
    write_shots(dir.path(), 40);
    let ctx = context();
    ctx.register_npy("shots", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let rows = "SELECT trace_id, samples[{0}] AS v FROM shots ORDER BY trace_id";
    for k in [1, 2, 8, -1, -8] {
        let part = if k > 0 { format!("samples[{k}]") } else { format!("samples[{}]", 9 + k) };
        same_as_datafusion(&ctx, rows, &[k], Some(&part)).await;
    }
    // Out of the list: null, as DataFusion gives it, and nothing read in the scan.
    for k in [0, 9, -9] {
        same_as_datafusion(&ctx, rows, &[k], None).await;
    }
    let runs = "SELECT trace_id, samples[{0}:{1}] AS v FROM shots ORDER BY trace_id";
    for (a, b) in [(1, 8), (2, 4), (8, 8)] {
        same_as_datafusion(&ctx, runs, &[a, b], Some(&format!("samples[{a}:{b}]"))).await;
    }
    let aggregate =
        "SELECT receiver['z'] AS z, max(samples[{0}]) AS m, sum(samples[{1}]) AS s, count(*) AS n FROM shots \
                     GROUP BY receiver['z'] ORDER BY z";
    same_as_datafusion(&ctx, aggregate, &[3, -2], Some("receiver['z'], samples[3], samples[7]")).await;
    let filter = "SELECT trace_id, t0 FROM shots WHERE samples[{0}] > 20 AND receiver['x'] < 200 ORDER BY trace_id";
    same_as_datafusion(&ctx, filter, &[5], Some("samples[5], receiver['x']")).await;
    let top = "SELECT trace_id, samples[{0}] AS v FROM shots ORDER BY samples[{0}] DESC, trace_id LIMIT 7";
    same_as_datafusion(&ctx, top, &[6], Some("samples[6]")).await;
}

#[tokio::test]
async fn parts_give_the_records_values() {
    let dir = tempfile::tempdir().unwrap();
    write_shots(dir.path(), 40);
    let shots = read_shots(dir.path());
    let ctx = context();
    ctx.register_npy("shots", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let got = query(&ctx, "SELECT samples[3], receiver['y'], samples[-1] FROM shots ORDER BY trace_id").await;
    let mut ordered = shots.clone();
    ordered.sort_by_key(|s| s.trace_id);
    assert_eq!(column_f64(&got, 0), ordered.iter().map(|s| f64::from(s.samples[2])).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 1), ordered.iter().map(|s| s.receiver.y).collect::<Vec<_>>());
    assert_eq!(column_f64(&got, 2), ordered.iter().map(|s| f64::from(s.samples[7])).collect::<Vec<_>>());
    let kept = query(&ctx, "SELECT count(*) FROM shots WHERE samples[1] >= 0").await;
    assert_eq!(scalar_f64(&kept) as usize, shots.iter().filter(|s| s.samples[0] >= 0.0).count());
}

#[tokio::test]
async fn items_of_n_d_rows_in_c_and_fortran_order() {
    // A (n, 2, 3) array, row i's items (C order) 6i..6i+6; written in both orders.
    let n = 50;
    let c: Vec<f64> = (0..n * 6).map(|v| v as f64).collect();
    let mut f = vec![0.0; n * 6];
    for i in 0..n {
        for a in 0..2 {
            for b in 0..3 {
                f[i + n * a + 2 * n * b] = (i * 6 + a * 3 + b) as f64;
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (cdir, fdir) = (dir.path().join("c"), dir.path().join("f"));
    std::fs::create_dir_all(&cdir).unwrap();
    std::fs::create_dir_all(&fdir).unwrap();
    Array::from_shape_vec(vec![n, 2, 3], c).unwrap().write_npy(cdir.join("a.npy")).unwrap();
    Array::from_shape_vec_fortran(vec![n, 2, 3], f).unwrap().write_npy(fdir.join("a.npy")).unwrap();
    let ctx = context();
    for (name, path) in [("c", &cdir), ("f", &fdir)] {
        ctx.register_npy(name, path.to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
        let items = query(&ctx, &format!("SELECT \"values\"[5] FROM {name}")).await;
        assert_eq!(column_f64(&items, 0), (0..n).map(|i| (i * 6 + 4) as f64).collect::<Vec<_>>(), "{name}");
        let filtered = query(&ctx, &format!("SELECT \"values\"[1] FROM {name} WHERE \"values\"[6] > 200")).await;
        let want: Vec<f64> = (0..n).filter(|i| i * 6 + 5 > 200).map(|i| (i * 6) as f64).collect();
        assert_eq!(column_f64(&filtered, 0), want, "{name}");
        assert!(plan(&ctx, &format!("SELECT \"values\"[5] FROM {name}")).await.contains("parts decoded=[values[5]]"));
    }
    assert_eq!(
        text(&ctx, "SELECT \"values\"[2:4] AS v FROM f").await,
        text(&ctx, "SELECT \"values\"[2:4] AS v FROM c").await
    );
}

/// Archives of one-member-per-column tables (as `np.savez(trace_id=..., samples=...)`
/// writes them), even ones stored and odd ones deflated: `trace_id`, a C-order `(n, 4)`
/// `samples`, a Fortran-order `(n, 2, 3)` `cube`, a `(n, 3)` bool `flags` (which has a
/// residue column) and a record member `shot`.
fn write_archives(dir: &std::path::Path) {
    use npy_core::npz::{Compression, Writer};
    std::fs::create_dir_all(dir).unwrap();
    let mut next = 0usize;
    for k in 0..6 {
        let rows = k * 3 + 2;
        let ids: Vec<i32> = (next..next + rows).map(|i| i as i32).collect();
        let samples: Vec<f32> = (0..rows * 4).map(|j| ((next * 4 + j) * 37 % 23) as f32 - 11.0).collect();
        let cube: Vec<f64> = (0..rows * 6).map(|j| ((next * 6 + j) * 13 % 29) as f64 * 0.5).collect();
        let flags: Vec<bool> = (0..rows * 3).map(|j| (next * 3 + j) % 4 == 1).collect();
        let shots: Vec<Shot> = (next..next + rows).map(shot).collect();
        next += rows;
        let mut w = Writer::create(dir.join(format!("a_{k}.npz"))).unwrap();
        if k % 2 == 1 {
            w.compression(Compression::Deflated { level: 6 });
        }
        w.add("trace_id", &ids).unwrap();
        w.add("samples", &Array::from_shape_vec(vec![rows, 4], samples).unwrap()).unwrap();
        w.add("cube", &Array::from_shape_vec_fortran(vec![rows, 2, 3], cube).unwrap()).unwrap();
        w.add("flags", &Array::from_shape_vec(vec![rows, 3], flags).unwrap()).unwrap();
        w.add("shot", &shots).unwrap();
        w.finish().unwrap();
    }
}

#[tokio::test]
async fn archive_members_in_parts_answer_as_datafusion_does() {
    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    for residue in [false, true] {
        let ctx = context();
        let mut options = NpyReadOptions::new();
        options.residue(residue);
        ctx.register_npz("a", dir.path().to_str().unwrap(), &options).await.unwrap();
        let rows = "SELECT trace_id, samples[{0}] AS s, cube[{1}] AS c, flags[{2}] AS f, shot['t0'] AS t FROM a \
                    ORDER BY trace_id";
        same_as_datafusion(&ctx, rows, &[2, 6, -1], Some("samples[2], cube[6], flags[3]")).await;
        let runs = "SELECT trace_id, samples[{0}:{1}] AS s, cube[{1}:{2}] AS c FROM a ORDER BY trace_id";
        same_as_datafusion(&ctx, runs, &[1, 3, 5], Some("samples[1:3], cube[3:5]")).await;
        let grouped = "SELECT flags[{0}] AS f, max(samples[{1}]) AS m, sum(cube[{1}]) AS c, count(*) AS n FROM a \
                       WHERE samples[{2}] > 0 GROUP BY flags[{0}] ORDER BY f";
        same_as_datafusion(&ctx, grouped, &[1, 4, 3], Some("flags[1], samples[4], cube[4], samples[3]")).await;
        // Filters in the scan: judged on some members, the others decoded at kept rows.
        let filtered = "SELECT trace_id, shot['t0'] AS t, flags[{0}] AS f FROM a WHERE samples[{1}] > 0 \
                        AND cube[{0}] < 9 ORDER BY trace_id";
        same_as_datafusion(&ctx, filtered, &[2, 1], Some("flags[2], samples[1], cube[2]")).await;
        // The same filter evaluated above the scan: a term on a record member (always
        // false: ids are not negative) keeps it there.
        let pushed = filtered.replace("{0}", "2").replace("{1}", "1");
        let above = pushed.replace(" ORDER BY", " OR shot['trace_id'] < 0 ORDER BY");
        assert!(plan(&ctx, &above).await.contains("FilterExec"), "{above}");
        assert!(!plan(&ctx, &pushed).await.contains("FilterExec"), "{pushed}");
        assert_eq!(text(&ctx, &pushed).await, text(&ctx, &above).await, "{pushed}");
        let rows = text(&ctx, &pushed).await.lines().count();
        assert!(rows > 8, "{pushed}: too few rows to tell: {rows}");
        let top = "SELECT trace_id, samples[{0}] AS s FROM a WHERE trace_id % 3 = 1 ORDER BY samples[{0}] DESC, \
                   trace_id LIMIT 4";
        same_as_datafusion(&ctx, top, &[4], Some("samples[4]")).await;
        let shown = plan(&ctx, "SELECT trace_id FROM a WHERE samples[2] > 0 AND trace_id > 3").await;
        assert!(shown.contains("predicate="), "{shown}");
        assert!(!shown.contains("FilterExec"), "{shown}");
        // A record member's filter stays above the scan.
        let shown = plan(&ctx, "SELECT trace_id FROM a WHERE shot['t0'] > 3").await;
        assert!(shown.contains("FilterExec") && !shown.contains("predicate="), "{shown}");
        // Every column with parts beside it: record members, residue columns, whole members.
        let all = "SELECT *, samples[{0}] AS s FROM a ORDER BY trace_id";
        same_as_datafusion(&ctx, all, &[4], Some("samples[4]")).await;
    }
}
