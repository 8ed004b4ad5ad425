//! npy tables on a standalone Ballista cluster (scheduler + executor in this process, on
//! loopback): the same SQL as a plain DataFusion context over the same files, with the same
//! answers, both equal to what npy-core reads from the files; the codecs' round trips; a
//! scan of a corrupt file failing with an error that names it. Tables of `.npy` files and
//! of `.npz` archives (stored and deflated members).
//!
//! Each `#[tokio::test]` has its own runtime, and a cluster's tasks end with it: one cluster
//! per test.

use std::sync::Arc;
use std::time::Duration;

use datafusion::error::Result;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::SessionContext;
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use npy_ballista::{physical_codec, NpyLogicalCodec};
use npy_core::prelude::*;
use npy_datafusion::{Kind, NpyFormatFactory, NpyReadOptions};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Start-up takes well under a second; a minute leaves room for a loaded machine.
const START: Duration = Duration::from_secs(60);

use crate::support::*;

/// A context on a fresh standalone cluster.
async fn cluster_context() -> Result<SessionContext> {
    let state = npy_ballista::ballista_state(config())?;
    npy_ballista::standalone(state, START).await
}

// ---- tests --------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_answers_as_datafusion_and_npy_core() -> TestResult {
    let data = generate()?;
    let truth = read(&data)?;
    assert!(truth.traces.len() > 3400 && truth.traces.iter().any(|t| t.station == STATIONS));

    let local = local_context()?;
    register(&local, &data).await?;
    let cluster = cluster_context().await?;
    register(&cluster, &data).await?;

    for (sql, expected) in queries(&truth) {
        let plan = cluster.sql(sql).await?.create_physical_plan().await?;
        let plan = displayable(plan.as_ref()).indent(true).to_string();
        assert!(plan.contains("DistributedQueryExec"), "{sql}: not sent to the cluster:\n{plan}");
        assert_eq!(answer(&local, sql).await?, expected, "{sql}: datafusion vs npy-core");
        assert_eq!(answer(&cluster, sql).await?, expected, "{sql}: ballista vs npy-core");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_survive_the_codecs() -> TestResult {
    let data = generate()?;
    let ctx = local_context()?;
    register(&ctx, &data).await?;
    let logical = NpyLogicalCodec::default();
    let physical = physical_codec();
    let task = ctx.task_ctx();
    let truth = read(&data)?;

    for (sql, expected) in queries(&truth) {
        // Client → scheduler: the logical plan, npy tables as `NpyTable` blobs.
        let plan = ctx.sql(sql).await?.into_unoptimized_plan();
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &logical)?;
        let back = logical_plan_from_bytes_with_extension_codec(&bytes, &task, &logical)?;
        assert_eq!(back.display_indent().to_string(), plan.display_indent().to_string(), "{sql}");
        let batches = ctx.execute_logical_plan(back).await?.collect().await?;
        assert_eq!(rows_of(&batches), expected, "{sql}: logical round trip");

        // Scheduler → executors: the physical plan, npy scans as `NpySource` blobs.
        let plan = ctx.sql(sql).await?.create_physical_plan().await?;
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &physical)?;
        let back = physical_plan_from_bytes_with_extension_codec(&bytes, &task, &physical)?;
        let show = |p: &Arc<dyn ExecutionPlan>| displayable(p.as_ref()).indent(true).to_string();
        assert_eq!(show(&back), show(&plan), "{sql}");
        // The executors decode the subarray items in the scan, as this process would.
        if sql.contains("samples[") {
            assert!(show(&back).contains("parts decoded=[samples[1], samples[3], samples[2]]"), "{}", show(&back));
        }
        assert_eq!(rows_of(&collect(back, ctx.task_ctx()).await?), expected, "{sql}: physical round trip");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_files_fail_naming_them_on_the_cluster() -> TestResult {
    corrupt_files_fail_naming_them(&cluster_context().await?).await
}

#[test]
fn file_format_blobs_round_trip_and_foreign_blobs_are_refused() -> TestResult {
    let codec = NpyLogicalCodec::default();
    let ctx = SessionContext::new();
    let task = ctx.task_ctx();
    let decode_table = |buf: &[u8]| {
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::empty());
        codec.try_decode_table_provider(buf, &"t".into(), schema, &task).map(|_| ()).expect_err("not a table blob")
    };
    let mut options = NpyReadOptions::new();
    options.batch_rows(77).days_as_int64(true);
    for kind in [Kind::Npy, Kind::Npz] {
        let mut buf = Vec::new();
        codec.try_encode_file_format(&mut buf, Arc::new(NpyFormatFactory::new_with(kind, &options)))?;
        let back = codec.try_decode_file_format(&buf, &ctx.task_ctx())?;
        let back = back.downcast_ref::<NpyFormatFactory>().expect("an npy format factory");
        assert_eq!((back.kind(), back.options()), (kind, &options));

        let err = decode_table(&buf).to_string();
        assert!(err.contains("holds a file format, not a table"), "{err}");
        // The byte after the magic prefix is the wire version.
        let magic = b"\x93npy-ballista".len();
        let err = decode_table(&buf[..magic]).to_string();
        assert!(err.contains("ends after its magic bytes"), "{err}");
        buf[magic] += 1;
        let err = codec.try_decode_file_format(&buf, &task).expect_err("a newer wire version").to_string();
        assert!(err.contains("wire version 3"), "{err}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_to_writes_on_the_cluster() -> TestResult {
    let data = generate()?;
    let truth = read(&data)?;
    let cluster = cluster_context().await?;
    register(&cluster, &data).await?;
    let out = data.traces.parent().expect("a temporary directory").join("station-1.npy");
    // Every column: the file gets the table's dtype (big-endian, nested, padded) back.
    let sql = format!("COPY (SELECT * FROM big WHERE station = 1 ORDER BY trace_id) TO '{}'", out.display());
    let plan = cluster.sql(&sql).await?.create_physical_plan().await?;
    assert!(displayable(plan.as_ref()).indent(true).to_string().contains("DistributedQueryExec"));
    let expected: Vec<Trace> = truth.big.iter().filter(|t| t.station == 1).copied().collect();
    assert_eq!(answer(&cluster, &sql).await?, [[Cell::Int(expected.len() as i128)]]);
    assert_eq!(Vec::<Trace>::read_npy(&out)?, expected);
    Ok(())
}
