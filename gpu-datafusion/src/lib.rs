//! `#[vectorize]` functions as Apache DataFusion SQL functions.
//!
//! Every `#[vectorize]` function whose parameters and results are column types (`bool`,
//! the fixed-width integers, `f16`, `f32`, `f64`) has `name::COLUMNAR`, and one line makes
//! it a scalar UDF:
//!
//! ```ignore
//! ctx.register_udf(gpu_datafusion::scalar_udf(add_gpu::COLUMNAR));
//! let df = ctx.sql("SELECT add_gpu(x, y) FROM t").await?;
//! ```
//!
//! The integration is behind this crate's `datafusion` feature (DataFusion takes minutes to
//! build); without it the crate is empty. The `ballista` feature adds [`cluster`]: the same
//! functions on every side of an Apache Ballista cluster, and a cluster in this process.
//!
//! What it does with a batch:
//! - the function's types give the UDF's signature (one per type of `types(…)`); a tuple
//!   result is a `Struct` column with fields `"0"`, `"1"`, … as Rust names a tuple's fields;
//! - arguments are coerced as losslessly as SQL allows (an integer to a float, a narrower
//!   integer to a wider one, `f32` to `f64`); any other type is a planning error that names
//!   the function and the types it takes;
//! - a scalar argument (a literal) is broadcast as the function's scalars are, never
//!   expanded into an array;
//! - a null in any argument gives a null result for the row, and null rows never reach
//!   the function: without nulls the Arrow buffers are read in place (booleans, which
//!   Arrow packs into bits, are unpacked), with some the valid rows are gathered first
//!   (one copy) and the results scattered back;
//! - a fault (an integer division by zero) is an execution error with the function's
//!   message and the row's index within the batch;
//! - a column that a live [`DeviceMirror`] holds on the UDF's device is read there in
//!   place: the mirror copies a table's columns to a GPU once, and only results cross the
//!   link while it lives.
//!
//! A reduction (`fn(T, T) -> T`, which has `reduce`) is also an aggregate function:
//! `ctx.register_udaf(gpu_datafusion::aggregate_udf(total::COLUMNAR)?)`, then
//! `SELECT g, total(x) FROM t GROUP BY g`. Each batch's non-null values (per group) are
//! folded on the UDF's device by the function's `reduce`; the partial results of batches
//! and partitions are combined on the host by the function itself. An aggregate of no
//! non-null value is null, as SQL's `sum` is.

#[cfg(feature = "datafusion")]
mod aggregate;
#[cfg(feature = "ballista")]
pub mod cluster;
#[cfg(feature = "datafusion")]
mod mirror;
#[cfg(feature = "datafusion")]
mod pinned;
#[cfg(feature = "datafusion")]
mod scalar;
#[cfg(feature = "datafusion")]
mod types;

#[cfg(feature = "datafusion")]
pub use aggregate::{GpuAggregateUdf, aggregate_udf, aggregate_udf_on};
#[cfg(feature = "datafusion")]
pub use mirror::DeviceMirror;
#[cfg(feature = "datafusion")]
pub use scalar::{GpuScalarUdf, scalar_udf, scalar_udf_on};
#[cfg(feature = "datafusion")]
pub use types::{data_type, kind_of};
