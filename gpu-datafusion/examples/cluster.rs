//! SQL with GPU functions on a Ballista cluster: a scheduler and two executors started in
//! this process (on loopback ports the system chooses), every side with the same functions
//! registered, over a Parquet table this example writes (10^7 rows unless a count is
//! given). A scalar UDF in a projection and in a filter, and an aggregate UDF with
//! `GROUP BY`; each answer is checked against single-node DataFusion and against the
//! functions computed on the host.
//!
//!     cargo run --release -p gpu-datafusion --features ballista --example cluster [rows]
//!
//! The executors run the functions on `Device::best()`: the GPU where there is one, else
//! the CPU device (with one `tracing` line saying so).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float32Array, Int32Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Int32Type, Int64Type, Schema};
use datafusion::common::{DataFusionError, Result};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use gpu_datafusion::cluster::{Functions, LocalCluster};
use gpu_runtime::vectorize;

#[vectorize]
pub fn heavy(x: f32, y: f32) -> f32 {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

#[vectorize]
pub fn add(x: f32, y: f32) -> f32 {
    x + y
}

#[vectorize(identity = 0)]
pub fn total(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Faults (a division by zero) on the rows of group 0.
#[vectorize]
pub fn per_group(v: i64, g: i32) -> i64 {
    v / g as i64
}

/// The groups of the `GROUP BY`.
pub const GROUPS: i32 = 16;

/// The table's columns, as the host holds them.
pub struct Columns {
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    pub g: Vec<i32>,
    pub v: Vec<i64>,
}

pub fn columns(rows: usize) -> Columns {
    Columns {
        x: (0..rows).map(|i| ((i as f32) * 1e-4).sin() * 3.0).collect(),
        y: (0..rows).map(|i| ((i as f32) * 3e-4).cos() * 2.0).collect(),
        g: (0..rows).map(|i| ((i * 7) % GROUPS as usize) as i32).collect(),
        v: (0..rows).map(|i| (i as i64).wrapping_mul(2_654_435_761) % 1_000_003).collect(),
    }
}

/// Writes the columns as `files` Parquet files in `dir` (created if missing).
pub fn write_parquet(dir: &Path, c: &Columns, files: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float32, false),
        Field::new("y", DataType::Float32, false),
        Field::new("g", DataType::Int32, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let rows = c.x.len();
    let per_file = rows.div_ceil(files.max(1)).max(1);
    for (k, start) in (0..rows).step_by(per_file).enumerate() {
        let r = start..(start + per_file).min(rows);
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Float32Array::from(c.x[r.clone()].to_vec())),
            Arc::new(Float32Array::from(c.y[r.clone()].to_vec())),
            Arc::new(Int32Array::from(c.g[r.clone()].to_vec())),
            Arc::new(Int64Array::from(c.v[r].to_vec())),
        ];
        let batch = RecordBatch::try_new(schema.clone(), cols)?;
        let file = std::fs::File::create(dir.join(format!("part-{k}.parquet")))?;
        let mut writer = ArrowWriter::try_new(file, schema.clone(), None)?;
        writer.write(&batch)?;
        writer.close()?;
    }
    Ok(())
}

/// The scalar functions in a projection and a filter: how many rows pass, and the least
/// and greatest `heavy` among them.
pub const FILTERED: &str =
    "SELECT count(*) AS n, min(heavy(x, y)) AS lo, max(heavy(x, y)) AS hi FROM t WHERE add(x, y) > 0.5";
/// The aggregate function with `GROUP BY`.
pub const GROUPED: &str = "SELECT g, total(v) AS s, count(*) AS n FROM t GROUP BY g ORDER BY g";

/// One engine's answers.
#[derive(Debug, PartialEq)]
pub struct Answers {
    /// Rows with `add(x, y) > 0.5`, and the least and greatest `heavy(x, y)` of them.
    pub filtered: (i64, f32, f32),
    /// Per group: the group, `total(v)` and the count.
    pub grouped: Vec<(i32, i64, i64)>,
}

/// What a run found, with each engine's time in milliseconds (both queries).
#[derive(Debug)]
pub struct Report {
    pub cluster: Answers,
    pub single_node: Answers,
    pub host: Answers,
    pub cluster_ms: f64,
    pub single_node_ms: f64,
}

impl Report {
    /// The cluster's and the single node's answers against the host's: the counts and the
    /// totals exactly; `heavy`'s least and greatest within 4 ulps of the host's (on a GPU
    /// it is computed with libdevice's `exp` and `sin`, whose bounds the README states).
    pub fn check(&self) -> std::result::Result<(), String> {
        for (engine, a) in [("the cluster", &self.cluster), ("single-node DataFusion", &self.single_node)] {
            let (n, lo, hi) = a.filtered;
            let (hn, hlo, hhi) = self.host.filtered;
            let close = |a: f32, b: f32| (a - b).abs() <= 4.0 * f32::EPSILON * b.abs().max(f32::MIN_POSITIVE);
            if n != hn || !close(lo, hlo) || !close(hi, hhi) {
                return Err(format!("{engine}: {:?} against the host's {:?}", a.filtered, self.host.filtered));
            }
            if a.grouped != self.host.grouped {
                return Err(format!("{engine}: the groups {:?} against the host's {:?}", a.grouped, self.host.grouped));
            }
        }
        Ok(())
    }
}

/// Runs both queries on `ctx`.
async fn answers(ctx: &SessionContext) -> Result<Answers> {
    let batches = ctx.sql(FILTERED).await?.collect().await?;
    let b = batches.first().ok_or_else(|| DataFusionError::Execution("no rows".into()))?;
    let n = b.column(0).as_primitive::<Int64Type>().value(0);
    let float = |k: usize| -> Result<f32> {
        let c = b.column(k);
        Ok(match c.data_type() {
            DataType::Float32 => c.as_primitive::<Float32Type>().value(0),
            DataType::Float64 => c.as_primitive::<Float64Type>().value(0) as f32,
            t => return Err(DataFusionError::Execution(format!("a column of {t}"))),
        })
    };
    let filtered = (n, float(1)?, float(2)?);
    let mut grouped = Vec::new();
    for b in ctx.sql(GROUPED).await?.collect().await? {
        let (g, s, n) = (b.column(0), b.column(1), b.column(2));
        for r in 0..b.num_rows() {
            let (g, s, n) = (
                g.as_primitive::<Int32Type>().value(r),
                s.as_primitive::<Int64Type>().value(r),
                n.as_primitive::<Int64Type>().value(r),
            );
            if b.column(1).is_null(r) {
                return Err(DataFusionError::Execution(format!("group {g}: a null total")));
            }
            grouped.push((g, s, n));
        }
    }
    Ok(Answers { filtered, grouped })
}

/// The same answers from the functions on the host (`name::cpu`).
fn host_answers(c: &Columns) -> Result<Answers> {
    let err = |e: gpu_runtime::Error| DataFusionError::External(Box::new(e));
    let sums = add::cpu(&c.x, &c.y).map_err(err)?;
    let heavies = heavy::cpu(&c.x, &c.y).map_err(err)?;
    let passing: Vec<f32> = sums.iter().zip(&heavies).filter(|(s, _)| **s > 0.5).map(|(_, h)| *h).collect();
    let lo = passing.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = passing.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut grouped = Vec::new();
    for g in 0..GROUPS {
        let vs: Vec<i64> = c.g.iter().zip(&c.v).filter(|(k, _)| **k == g).map(|(_, v)| *v).collect();
        if !vs.is_empty() {
            grouped.push((g, total::reduce_on(&gpu_runtime::Device::cpu(), &vs).map_err(err)?, vs.len() as i64));
        }
    }
    Ok(Answers { filtered: (passing.len() as i64, lo, hi), grouped })
}

/// A cluster of two executors with the functions, its client and a single-node context,
/// each with the table `t` of `rows` rows written as `files` Parquet files in `dir`.
pub struct Setup {
    pub cluster: LocalCluster,
    pub remote: SessionContext,
    pub local: SessionContext,
    pub columns: Columns,
}

pub async fn setup(rows: usize, files: usize, dir: &Path) -> Result<Setup> {
    let columns = columns(rows);
    write_parquet(dir, &columns, files)?;
    let path = dir.to_str().ok_or_else(|| DataFusionError::Execution(format!("{dir:?} is not UTF-8")))?;
    let functions = Functions::new()
        .scalar(heavy::COLUMNAR)
        .scalar(add::COLUMNAR)
        .scalar(per_group::COLUMNAR)
        .aggregate(total::COLUMNAR)?;
    let cluster = LocalCluster::start(&functions, 2, 4)?;
    let remote = cluster.context().await?;
    remote.register_parquet("t", path, ParquetReadOptions::default()).await?;
    let local = SessionContext::new_with_state(functions.session_state(Some(SessionConfig::new()))?);
    local.register_parquet("t", path, ParquetReadOptions::default()).await?;
    Ok(Setup { cluster, remote, local, columns })
}

/// Runs the queries on the cluster, on one node and on the host.
pub async fn run(rows: usize, files: usize, dir: &Path) -> Result<Report> {
    let s = setup(rows, files, dir).await?;
    let t = Instant::now();
    let on_cluster = answers(&s.remote).await?;
    let cluster_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let single_node = answers(&s.local).await?;
    let single_node_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(Report { cluster: on_cluster, single_node, host: host_answers(&s.columns)?, cluster_ms, single_node_ms })
}

/// A directory of this process's own under the system's temporary directory, removed when
/// dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        Scratch(std::env::temp_dir().join(format!("{name}-{}", std::process::id())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let rows = match std::env::args().nth(1) {
        Some(a) => a.parse().map_err(|e| DataFusionError::Execution(format!("rows: {a:?}: {e}")))?,
        None => 10_000_000,
    };
    let device = gpu_runtime::Device::best().map_err(|e| DataFusionError::External(Box::new(e)))?;
    println!("{rows} rows in 8 Parquet files; 2 executors; functions on {}", device.name());
    let scratch = Scratch::new("gpu-datafusion-cluster");
    let report = run(rows, 8, &scratch.0).await?;
    println!(
        "{FILTERED}\n  cluster {:?}\n  single node {:?}\n  host {:?}",
        report.cluster.filtered, report.single_node.filtered, report.host.filtered
    );
    println!("{GROUPED}\n  {} groups, first {:?}", report.cluster.grouped.len(), report.cluster.grouped.first());
    println!("cluster {:.1} ms, single node {:.1} ms (both queries)", report.cluster_ms, report.single_node_ms);
    report.check().map_err(DataFusionError::Execution)?;
    println!("the cluster's answers equal single-node DataFusion's and the host's");
    Ok(())
}
