//! A directory of `.npy` files of trace records as one table, with npy-store's engine:
//! the rows whose `samples[3]` is above 0.5, and of them only `t0` and `receiver.x`, each
//! decoded from its own bytes.
//!
//! `cargo run -p npy-store --example table [DIR]` (a directory of files it writes, when
//! none is given).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::BooleanArray;
use npy_core::header::Header;
use npy_store::filter::{Filter, Kept};
use npy_store::{Table, TableOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let written;
    let dir = match std::env::args().nth(1) {
        Some(dir) => dir,
        None => {
            written = tempfile::tempdir()?;
            write_runs(written.path())?;
            written.path().to_string_lossy().into_owned()
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let table = runtime.block_on(Table::open_with(&dir, &TableOptions::new()))?;
    println!("{} rows in {} files: {}", table.rows(), table.files().len(), table.title());

    let mut scan = table.scan();
    let judged = vec![table.part("samples[3]")?];
    scan.columns(&["t0", "receiver.x"])?.filter(Filter::new(judged, |batch| {
        let values = batch.column(0).as_primitive::<Float32Type>();
        Ok(Kept::of(&values.iter().map(|v| v.map(|v| v > 0.5)).collect::<BooleanArray>()))
    }));
    let mut kept = 0;
    for batch in scan.batches()? {
        let batch = batch?;
        let (t0, x) = (batch.column(0).as_primitive::<Float64Type>(), batch.column(1).as_primitive::<Float64Type>());
        if kept == 0 && batch.num_rows() > 0 {
            println!("first kept: t0 = {}, receiver.x = {}", t0.value(0), x.value(0));
        }
        kept += batch.num_rows();
    }
    println!("{kept} rows kept");
    Ok(())
}

/// Three files of 1,000 records: `t0`, `receiver` (`x`, `y`) and 16 `samples`.
fn write_runs(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let descr = "[('t0', '<f8'), ('receiver', [('x', '<f8'), ('y', '<f8')]), ('samples', '<f4', (16,))]";
    for k in 0..3 {
        let (_, mut bytes) = Header::new(descr.parse()?, vec![1000]).encode(None)?;
        for i in k * 1000..(k + 1) * 1000 {
            let t = i as f64;
            for v in [t, 2.0 * t, -t] {
                bytes.extend(v.to_le_bytes());
            }
            for s in 0..16 {
                bytes.extend(((t + s as f64).sin() as f32).to_le_bytes());
            }
        }
        std::fs::write(dir.join(format!("run{k}.npy")), bytes)?;
    }
    Ok(())
}
