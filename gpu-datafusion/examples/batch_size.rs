//! Where a GPU pays inside a query: `SELECT sum(heavy(x, y)) FROM t` over 2^24 f32 rows in
//! batches of each size, with our UDF on the GPU (reading the host's batches, then a
//! `DeviceMirror` of them), on the CPU device (all cores), and with DataFusion's own
//! expression (`exp(-x*x)*sin(y)+sqrt(abs(x))`), one partition per core. Prints a table of
//! milliseconds (median of 5 queries after a warm-up) and what making each mirror took.
//! Arguments: the rows (2^24 unless given), then the batch sizes (8,192 to 2^20 unless
//! given).
//!
//!     cargo run --release -p gpu-datafusion --features datafusion --example batch_size [rows [batch…]]

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{ArrayRef, Float32Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use gpu_runtime::{Device, vectorize};

#[vectorize]
fn heavy(x: f32, y: f32) -> f32 {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

#[vectorize]
fn add(x: f32, y: f32) -> f32 {
    x + y
}

fn table(rows: usize, batch: usize, partitions: usize) -> (Arc<Schema>, Vec<Vec<RecordBatch>>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float32, false),
        Field::new("y", DataType::Float32, false),
    ]));
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); partitions];
    for (i, start) in (0..rows).step_by(batch).enumerate() {
        let n = batch.min(rows - start);
        let x: Vec<f32> = (start..start + n).map(|i| ((i as f32) * 1e-4).sin() * 3.0).collect();
        let y: Vec<f32> = (start..start + n).map(|i| ((i as f32) * 3e-4).cos() * 2.0).collect();
        let cols: Vec<ArrayRef> = vec![Arc::new(Float32Array::from(x)), Arc::new(Float32Array::from(y))];
        parts[i % partitions].push(RecordBatch::try_new(schema.clone(), cols).unwrap());
    }
    (schema, parts)
}

async fn time(ctx: &SessionContext, sql: &str) -> f64 {
    let run = || async { ctx.sql(sql).await.unwrap().collect().await.unwrap() };
    run().await;
    let mut ms: Vec<f64> = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        run().await;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    ms[2]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a count of rows")).collect();
    let rows = args.first().copied().unwrap_or(1 << 24);
    let batches = if args.len() > 1 { args[1..].to_vec() } else { vec![8_192, 65_536, 262_144, 1 << 20] };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let gpu = Device::best().unwrap();
    println!("{rows} rows; {cores} partitions; GPU: {} (is_cuda: {})", gpu.name(), gpu.is_cuda());
    println!(
        "| batch rows | heavy GPU ms | heavy GPU, mirrored ms | heavy CPU device ms | DataFusion expression ms | add GPU ms | add GPU, mirrored ms | add CPU device ms | DataFusion x + y ms |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut mirrors = Vec::new();
    for batch in batches {
        let ctx =
            SessionContext::new_with_config(SessionConfig::new().with_batch_size(batch).with_target_partitions(cores));
        let (schema, parts) = table(rows, batch, cores);
        ctx.register_table("t", Arc::new(MemTable::try_new(schema, parts.clone()).unwrap())).unwrap();
        let mut on_gpu = gpu_datafusion::scalar_udf_on(heavy::COLUMNAR, &gpu);
        on_gpu = on_gpu.with_aliases(["heavy_gpu"]);
        ctx.register_udf(on_gpu);
        ctx.register_udf(gpu_datafusion::scalar_udf_on(heavy::COLUMNAR, &Device::cpu()).with_aliases(["heavy_cpu"]));
        ctx.register_udf(gpu_datafusion::scalar_udf_on(add::COLUMNAR, &gpu).with_aliases(["add_gpu"]));
        ctx.register_udf(gpu_datafusion::scalar_udf_on(add::COLUMNAR, &Device::cpu()).with_aliases(["add_cpu"]));
        let hg = time(&ctx, "SELECT sum(heavy_gpu(x, y)) FROM t").await;
        let hc = time(&ctx, "SELECT sum(heavy_cpu(x, y)) FROM t").await;
        let hd = time(&ctx, "SELECT sum(exp(-x*x)*sin(y)+sqrt(abs(x))) FROM t").await;
        let ag = time(&ctx, "SELECT sum(add_gpu(x, y)) FROM t").await;
        let ac = time(&ctx, "SELECT sum(add_cpu(x, y)) FROM t").await;
        let ad = time(&ctx, "SELECT sum(x + y) FROM t").await;
        let t = Instant::now();
        let mirror = gpu_datafusion::DeviceMirror::of(&gpu, parts.iter().flatten()).unwrap();
        let made = t.elapsed().as_secs_f64() * 1e3;
        let hm = time(&ctx, "SELECT sum(heavy_gpu(x, y)) FROM t").await;
        let am = time(&ctx, "SELECT sum(add_gpu(x, y)) FROM t").await;
        assert!(mirror.reads() > 0, "the queries read the mirror");
        mirrors.push(format!("{batch}: {:.1} MB in {made:.1} ms", mirror.bytes() as f64 / 1e6));
        drop(mirror);
        println!("| {batch} | {hg:.1} | {hm:.1} | {hc:.1} | {hd:.1} | {ag:.1} | {am:.1} | {ac:.1} | {ad:.1} |");
    }
    println!("mirrors made (batch rows: bytes in time): {}", mirrors.join("; "));
}
