//! Vectorized functions as SQL functions in DataFusion, on the CPU device (`on_the_gpu`
//! runs the same on a GPU): types, nulls, scalars, tuples, faults and planning errors, each
//! against the function's own `cpu`.
#![cfg(feature = "datafusion")]

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float16Array, Float32Array, Float64Array, Int8Array, Int32Array,
    RecordBatch, StringArray, UInt16Array, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Int32Type, Int64Type, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use datafusion::prelude::SessionContext;
use gpu_runtime::{Device, f16, vectorize};

#[vectorize]
fn add_gpu(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(types(f32, f64))]
fn scaled<T: gpu_runtime::Float>(x: T, k: T) -> T {
    x * k + T::from_f64(0.5)
}

#[vectorize]
fn divmod(a: i32, b: i32) -> (i32, i32) {
    (a / b, a % b)
}

/// Every column type at once.
#[vectorize]
fn mix(a: i8, b: u16, c: u64, d: bool, h: f16, x: f64) -> (i64, bool, f16, f64) {
    let s = a as i64 + b as i64 + (c % 1000) as i64;
    (if d { s } else { -s }, h.to_f32() > 1.0, h * h, x.sqrt())
}

#[vectorize(identity = 0)]
fn total(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

#[vectorize(types(f32, f64))]
fn biggest<T: gpu_runtime::Float>(a: T, b: T) -> T {
    a.max(b)
}

fn udf(c: gpu_runtime::columnar::Columnar, device: &Device) -> ScalarUDF {
    gpu_datafusion::scalar_udf_on(c, device)
}

fn context(batch: RecordBatch, device: &Device) -> SessionContext {
    let ctx = SessionContext::new();
    ctx.register_batch("t", batch).unwrap();
    for f in [add_gpu::COLUMNAR, scaled::COLUMNAR, divmod::COLUMNAR, mix::COLUMNAR] {
        ctx.register_udf(udf(f, device));
    }
    for f in [total::COLUMNAR, biggest::COLUMNAR] {
        ctx.register_udaf(gpu_datafusion::aggregate_udf_on(f, device).unwrap());
    }
    ctx
}

/// Runs an async check to its end.
fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
}

async fn query(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<ArrayRef>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches)?;
    Ok(batch.columns().to_vec())
}

fn floats(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37 + seed).sin() * 100.0).collect()
}

async fn a_function_in_a_projection_and_a_filter_on(device: &Device) {
    let (a, b) = (floats(5000, 0.0), floats(5000, 1.0));
    let batch = RecordBatch::try_from_iter([
        ("a", Arc::new(Float32Array::from(a.clone())) as ArrayRef),
        ("b", Arc::new(Float32Array::from(b.clone())) as ArrayRef),
    ])
    .unwrap();
    let ctx = context(batch, device);
    let want = add_gpu::cpu(&a, &b).unwrap();
    let got = query(&ctx, "SELECT add_gpu(a, b) FROM t").await.unwrap();
    assert_eq!(got[0].as_primitive::<Float32Type>().values().to_vec(), want);
    // In a filter.
    let got = query(&ctx, "SELECT a FROM t WHERE add_gpu(a, b) > 50").await.unwrap();
    let kept: Vec<f32> = a.iter().zip(&want).filter(|(_, s)| **s > 50.0).map(|(a, _)| *a).collect();
    assert_eq!(got[0].as_primitive::<Float32Type>().values().to_vec(), kept);
    // A literal is broadcast: `scaled(a, 2.5)` coerces `a` to f64 and computes there.
    let got = query(&ctx, "SELECT scaled(a, 2.5) FROM t").await.unwrap();
    let a64: Vec<f64> = a.iter().map(|&x| x as f64).collect();
    assert_eq!(got[0].as_primitive::<Float64Type>().values().to_vec(), scaled::cpu(&a64, 2.5f64).unwrap());
    // Both instances: f32 where the arguments are f32.
    let got = query(&ctx, "SELECT scaled(a, b) FROM t").await.unwrap();
    assert_eq!(got[0].as_primitive::<Float32Type>().values().to_vec(), scaled::cpu(&a, &b).unwrap());
    // Every argument a literal: one value.
    let got = query(&ctx, "SELECT add_gpu(CAST(1.5 AS FLOAT), CAST(2 AS FLOAT))").await.unwrap();
    assert_eq!(got[0].as_primitive::<Float32Type>().values().to_vec(), vec![3.5f32]);
}

async fn every_column_type_and_a_tuple_as_a_struct_on(device: &Device) {
    let n = 1000;
    let a: Vec<i8> = (0..n).map(|i| (i % 256) as u8 as i8).collect();
    let b: Vec<u16> = (0..n).map(|i| (i * 61) as u16).collect();
    let c: Vec<u64> = (0..n).map(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let d: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let h: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 * 0.01)).collect();
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 1.5).collect();
    let batch = RecordBatch::try_from_iter([
        ("a", Arc::new(Int8Array::from(a.clone())) as ArrayRef),
        ("b", Arc::new(UInt16Array::from(b.clone())) as ArrayRef),
        ("c", Arc::new(UInt64Array::from(c.clone())) as ArrayRef),
        ("d", Arc::new(BooleanArray::from(d.clone())) as ArrayRef),
        ("h", Arc::new(Float16Array::from(h.clone())) as ArrayRef),
        ("x", Arc::new(Float64Array::from(x.clone())) as ArrayRef),
    ])
    .unwrap();
    let ctx = context(batch, device);
    let got = query(&ctx, "SELECT mix(a, b, c, d, h, x) AS m FROM t").await.unwrap();
    let s = got[0].as_struct();
    let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["0", "1", "2", "3"]);
    let types: Vec<DataType> = s.fields().iter().map(|f| f.data_type().clone()).collect();
    assert_eq!(types, [DataType::Int64, DataType::Boolean, DataType::Float16, DataType::Float64]);
    let (w0, w1, w2, w3) = mix::cpu(&a, &b, &c, &d, &h, &x).unwrap();
    assert_eq!(s.column(0).as_primitive::<Int64Type>().values().to_vec(), w0);
    assert_eq!(s.column(1).as_boolean().iter().map(Option::unwrap).collect::<Vec<_>>(), w1);
    let halves: Vec<u16> = s
        .column(2)
        .as_primitive::<datafusion::arrow::datatypes::Float16Type>()
        .values()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(halves, w2.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    assert_eq!(s.column(3).as_primitive::<Float64Type>().values().to_vec(), w3);
    // A field of the struct by name.
    let got = query(&ctx, "SELECT get_field(mix(a, b, c, d, h, x), '0') FROM t").await.unwrap();
    assert_eq!(got[0].as_primitive::<Int64Type>().values().to_vec(), w0);
}

async fn an_aggregate_with_group_by_on(device: &Device) {
    // Several batches (partial results combined), nulls, and one group all null.
    let n = 30_000i64;
    let g: Vec<i64> = (0..n).map(|i| (i * 7919) % 13).collect();
    let x: Vec<Option<i64>> =
        (0..n).map(|i| if i % 11 == 0 || g[i as usize] == 12 { None } else { Some(i * 3 - 7) }).collect();
    let y: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37).sin()).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("g", DataType::Int64, false),
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Float64, false),
    ]));
    let batches: Vec<RecordBatch> = (0..3)
        .map(|b| {
            let r = (b * 10_000) as usize..((b + 1) * 10_000) as usize;
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(datafusion::arrow::array::Int64Array::from(g[r.clone()].to_vec())),
                    Arc::new(datafusion::arrow::array::Int64Array::from(x[r.clone()].to_vec())),
                    Arc::new(Float64Array::from(y[r].to_vec())),
                ],
            )
            .unwrap()
        })
        .collect();
    let ctx = context(batches[0].clone(), device);
    let table =
        datafusion::datasource::MemTable::try_new(schema, vec![batches[..2].to_vec(), batches[2..].to_vec()]).unwrap();
    ctx.register_table("big", Arc::new(table)).unwrap();
    let got = query(&ctx, "SELECT g, total(x), biggest(y) FROM big GROUP BY g ORDER BY g").await.unwrap();
    let groups = got[0].as_primitive::<Int64Type>();
    let totals = got[1].as_primitive::<Int64Type>();
    let maxes = got[2].as_primitive::<Float64Type>();
    assert_eq!(groups.len(), 13);
    for (row, group) in groups.values().iter().enumerate() {
        let rows = || (0..n as usize).filter(|&i| g[i] == *group);
        let want: Option<i64> = rows().filter_map(|i| x[i]).reduce(i64::wrapping_add);
        assert_eq!(totals.is_valid(row).then(|| totals.value(row)), want, "group {group}");
        let max = rows().map(|i| y[i]).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(maxes.value(row), max, "group {group}");
    }
    // Without GROUP BY, and a function that is no reduction.
    let got = query(&ctx, "SELECT total(x) FROM big").await.unwrap();
    assert_eq!(got[0].as_primitive::<Int64Type>().value(0), x.iter().flatten().fold(0i64, |a, b| a.wrapping_add(*b)));
    let e = gpu_datafusion::aggregate_udf_on(divmod::COLUMNAR, device).unwrap_err().to_string();
    assert!(e.contains("`divmod` is no reduction"), "{e}");
    let e = query(&ctx, "SELECT total(y) FROM big").await.unwrap_err().to_string();
    assert!(e.contains("`total` aggregates one column of i64, not (Float64)"), "{e}");
}

/// The UDF called directly on arrays, as DataFusion calls it.
fn invoke(f: &ScalarUDF, args: Vec<ColumnarValue>, rows: usize) -> datafusion::common::Result<ColumnarValue> {
    let types: Vec<DataType> = args.iter().map(|a| a.data_type()).collect();
    let ret = f.return_type(&types)?;
    let arg_fields =
        types.iter().enumerate().map(|(i, t)| Arc::new(Field::new(format!("a{i}"), t.clone(), true))).collect();
    f.invoke_with_args(ScalarFunctionArgs {
        args,
        arg_fields,
        number_rows: rows,
        return_field: Arc::new(Field::new("r", ret, true)),
        config_options: Arc::new(ConfigOptions::default()),
    })
}

fn array_of(v: ColumnarValue) -> ArrayRef {
    match v {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(s) => panic!("a scalar {s:?} where an array was due"),
    }
}

fn nulls_follow_sql_on(device: &Device) {
    let f = udf(add_gpu::COLUMNAR, device);
    let a = Float32Array::from(vec![Some(1.0), None, Some(3.0), Some(4.0), None, Some(6.0)]);
    let b = Float32Array::from(vec![Some(10.0), Some(20.0), None, Some(40.0), None, Some(60.0)]);
    let got =
        array_of(invoke(&f, vec![ColumnarValue::Array(Arc::new(a)), ColumnarValue::Array(Arc::new(b))], 6).unwrap());
    let got = got.as_primitive::<Float32Type>();
    let want = [Some(11.0), None, None, Some(44.0), None, Some(66.0)];
    assert_eq!(got.iter().collect::<Vec<_>>(), want);
    // None at all, and all null.
    let a = Float32Array::from(vec![1.0f32, 2.0]);
    let got = array_of(
        invoke(&f, vec![ColumnarValue::Array(Arc::new(a.clone())), ColumnarValue::Array(Arc::new(a))], 2).unwrap(),
    );
    assert_eq!(got.null_count(), 0);
    let n = Float32Array::from(vec![None::<f32>, None, None]);
    let got = array_of(
        invoke(&f, vec![ColumnarValue::Array(Arc::new(n.clone())), ColumnarValue::Array(Arc::new(n))], 3).unwrap(),
    );
    assert_eq!((got.len(), got.null_count()), (3, 3));
    // A null scalar makes every row null; a scalar beside an array is broadcast.
    let a: ArrayRef = Arc::new(Float32Array::from(vec![1.0f32, 2.0, 3.0]));
    let null = ColumnarValue::Scalar(datafusion::common::ScalarValue::Float32(None));
    let got = array_of(invoke(&f, vec![ColumnarValue::Array(a.clone()), null], 3).unwrap());
    assert_eq!(got.null_count(), 3);
    let two = ColumnarValue::Scalar(datafusion::common::ScalarValue::Float32(Some(2.0)));
    let got = array_of(invoke(&f, vec![ColumnarValue::Array(a), two], 3).unwrap());
    assert_eq!(got.as_primitive::<Float32Type>().values().to_vec(), [3.0, 4.0, 5.0]);
}

fn sliced_arrays_are_read_from_their_offset_on(device: &Device) {
    let f = udf(add_gpu::COLUMNAR, device);
    let whole =
        Float32Array::from((0..100).map(|i| if i % 7 == 0 { None } else { Some(i as f32) }).collect::<Vec<_>>());
    let a = whole.slice(10, 50);
    let b = whole.slice(30, 50);
    let got = array_of(
        invoke(&f, vec![ColumnarValue::Array(Arc::new(a.clone())), ColumnarValue::Array(Arc::new(b.clone()))], 50)
            .unwrap(),
    );
    let got = got.as_primitive::<Float32Type>();
    for i in 0..50 {
        let want = match (a.is_valid(i), b.is_valid(i)) {
            (true, true) => Some(a.value(i) + b.value(i)),
            _ => None,
        };
        assert_eq!(got.is_valid(i).then(|| got.value(i)), want, "row {i}");
    }
    // Without nulls: in place from the offset.
    let whole = Float32Array::from((0..100).map(|i| i as f32).collect::<Vec<_>>());
    let got = array_of(
        invoke(
            &f,
            vec![
                ColumnarValue::Array(Arc::new(whole.slice(5, 10))),
                ColumnarValue::Array(Arc::new(whole.slice(50, 10))),
            ],
            10,
        )
        .unwrap(),
    );
    let want: Vec<f32> = (0..10).map(|i| (5 + i) as f32 + (50 + i) as f32).collect();
    assert_eq!(got.as_primitive::<Float32Type>().values().to_vec(), want);
}

fn a_fault_names_its_row_in_the_batch_on(device: &Device) {
    let f = udf(divmod::COLUMNAR, device);
    // Row 5's divisor is 0; rows 1 and 2 are null, so the call sees it as its fourth element.
    let a = Int32Array::from(vec![Some(7), None, Some(1), Some(9), Some(4), Some(3), Some(2)]);
    let b = Int32Array::from(vec![Some(2), Some(1), None, Some(4), Some(3), Some(0), Some(1)]);
    let e = invoke(&f, vec![ColumnarValue::Array(Arc::new(a)), ColumnarValue::Array(Arc::new(b))], 7)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`divmod` failed at row 5 of the batch"), "{e}");
    assert!(e.contains("attempt to divide by zero"), "{e}");
    // A null divisor of 0 never reaches the function.
    let a = Int32Array::from(vec![Some(7), None]);
    let b = Int32Array::from(vec![Some(2), Some(0)]);
    let got =
        array_of(invoke(&f, vec![ColumnarValue::Array(Arc::new(a)), ColumnarValue::Array(Arc::new(b))], 2).unwrap());
    let s = got.as_struct();
    assert_eq!(s.column(0).as_primitive::<Int32Type>().iter().collect::<Vec<_>>(), [Some(3), None]);
    assert_eq!(s.null_count(), 1);
}

async fn an_unsupported_column_is_a_planning_error_that_names_the_types_on(device: &Device) {
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false), Field::new("a", DataType::Float32, false)])),
        vec![Arc::new(StringArray::from(vec!["x"])), Arc::new(Float32Array::from(vec![1.0f32]))],
    )
    .unwrap();
    let ctx = context(batch, device);
    let e = query(&ctx, "SELECT add_gpu(s, a) FROM t").await.unwrap_err().to_string();
    assert!(e.contains("`add_gpu` takes (f32, f32), not (Utf8, Float32)"), "{e}");
    let e = query(&ctx, "SELECT scaled(s, a) FROM t").await.unwrap_err().to_string();
    assert!(e.contains("`scaled` takes (f32, f32) or (f64, f64)"), "{e}");
    // A lossy conversion is no coercion either: f64 to f32.
    let e = query(&ctx, "SELECT add_gpu(a, CAST(1 AS DOUBLE)) FROM t").await.unwrap_err().to_string();
    assert!(e.contains("`add_gpu` takes (f32, f32), not (Float32, Float64)"), "{e}");
}

fn the_signature_comes_from_the_rust_types_on(device: &Device) {
    let f = udf(scaled::COLUMNAR, device);
    assert_eq!(f.name(), "scaled");
    assert_eq!(f.return_type(&[DataType::Float64, DataType::Float64]).unwrap(), DataType::Float64);
    assert_eq!(f.return_type(&[DataType::Float32, DataType::Float32]).unwrap(), DataType::Float32);
    assert!(f.return_type(&[DataType::Int32, DataType::Float32]).is_err());
    let c = scaled::COLUMNAR;
    assert_eq!(c.functions().len(), 2);
    assert_eq!(gpu_datafusion::kind_of(&DataType::UInt16), Some(gpu_runtime::columnar::Kind::U16));
    assert_eq!(gpu_datafusion::kind_of(&DataType::Utf8), None);
}

fn mirror_batches() -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float32, true),
        Field::new("y", DataType::Float32, true),
        Field::new("d", DataType::Int32, false),
        Field::new("flag", DataType::Boolean, false),
    ]));
    (0..3)
        .map(|b| {
            let n = 3000 + 500 * b;
            let x = floats(n, b as f32);
            // The last batch's `y` has nulls.
            let y: Float32Array = floats(n, 7.0 + b as f32)
                .into_iter()
                .enumerate()
                .map(|(i, v)| (b != 2 || i % 5 != 0).then_some(v))
                .collect();
            let d = Int32Array::from((0..n as i32).map(|i| 1 + i % 9).collect::<Vec<_>>());
            let flag = BooleanArray::from((0..n).map(|i| i % 2 == 0).collect::<Vec<_>>());
            let cols: Vec<ArrayRef> = vec![Arc::new(Float32Array::from(x)), Arc::new(y), Arc::new(d), Arc::new(flag)];
            RecordBatch::try_new(schema.clone(), cols).unwrap()
        })
        .collect()
}

async fn a_mirrored_table_is_read_on_the_device_on(device: &Device) {
    let batches = mirror_batches();
    let mirror = gpu_datafusion::DeviceMirror::of(device, &batches).unwrap();
    // x, y and d of each batch; the booleans stay on the host.
    assert_eq!(mirror.columns(), 9);
    assert_eq!(mirror.bytes(), 3 * (3000 + 3500 + 4000) * 4);
    assert_eq!(mirror.reads(), 0);
    let f = udf(add_gpu::COLUMNAR, device);
    let (x, y) = (batches[0].column(0).clone(), batches[0].column(1).clone());
    let host = |a: &ArrayRef| a.as_primitive::<Float32Type>().values().to_vec();
    // Whole columns, and slices of them, are read from the mirror.
    let got =
        array_of(invoke(&f, vec![ColumnarValue::Array(x.clone()), ColumnarValue::Array(y.clone())], 3000).unwrap());
    assert_eq!(host(&got), add_gpu::cpu(&host(&x), &host(&y)).unwrap());
    assert_eq!(mirror.reads(), 2);
    let (xs, ys) = (x.slice(100, 777), y.slice(2000, 777));
    let got =
        array_of(invoke(&f, vec![ColumnarValue::Array(xs.clone()), ColumnarValue::Array(ys.clone())], 777).unwrap());
    assert_eq!(host(&got), add_gpu::cpu(&host(&xs), &host(&ys)).unwrap());
    assert_eq!(mirror.reads(), 4);
    // A scalar beside a mirrored column.
    let two = ColumnarValue::Scalar(datafusion::common::ScalarValue::Float32(Some(2.0)));
    let got = array_of(invoke(&f, vec![two, ColumnarValue::Array(x.clone())], 3000).unwrap());
    assert_eq!(host(&got), add_gpu::cpu(2.0, &host(&x)).unwrap());
    assert_eq!(mirror.reads(), 5);
    // Equal values elsewhere in memory are not the mirror's; rows with a null are gathered
    // on the host.
    let copy: ArrayRef = Arc::new(Float32Array::from(host(&x)));
    invoke(&f, vec![ColumnarValue::Array(copy.clone()), ColumnarValue::Array(copy)], 3000).unwrap();
    let (x2, y2) = (batches[2].column(0).clone(), batches[2].column(1).clone());
    let got =
        array_of(invoke(&f, vec![ColumnarValue::Array(x2.clone()), ColumnarValue::Array(y2.clone())], 4000).unwrap());
    assert_eq!(mirror.reads(), 5);
    assert_eq!(got.null_count(), 800);
    let y2 = y2.as_primitive::<Float32Type>();
    for i in (0..4000).filter(|i| i % 5 != 0) {
        assert_eq!(got.as_primitive::<Float32Type>().value(i), x2.as_primitive::<Float32Type>().value(i) + y2.value(i));
    }
    // A fault in a mirrored column names its row.
    let d = batches[1].column(2).clone();
    let zero = ColumnarValue::Scalar(datafusion::common::ScalarValue::Int32(Some(0)));
    let e = invoke(&udf(divmod::COLUMNAR, device), vec![ColumnarValue::Array(d), zero], 3500).unwrap_err().to_string();
    assert!(e.contains("`divmod` failed at row 0 of the batch"), "{e}");
    assert_eq!(mirror.reads(), 6);
    // SQL over the same batches: the same results as without the mirror, bit for bit (one
    // partition, so the rows keep their order).
    let sql = "SELECT add_gpu(x, y), scaled(x, CAST(3.0 AS FLOAT)), divmod(d, CAST(4 AS INT)) FROM t";
    let ctx = SessionContext::new_with_config(datafusion::prelude::SessionConfig::new().with_target_partitions(1));
    let schema = batches[0].schema();
    let table = datafusion::datasource::MemTable::try_new(schema, vec![batches.clone()]).unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    for c in [add_gpu::COLUMNAR, scaled::COLUMNAR, divmod::COLUMNAR] {
        ctx.register_udf(udf(c, device));
    }
    let with = query(&ctx, sql).await.unwrap();
    let read = mirror.reads();
    assert!(read >= 6 + 3 * 3, "{read}");
    drop(mirror);
    let without = query(&ctx, sql).await.unwrap();
    assert_eq!(with, without);
    let x: Vec<f32> = batches.iter().flat_map(|b| host(b.column(0))).collect();
    assert_eq!(host(&with[1]), scaled::cpu(&x, 3.0f32).unwrap());
}

#[test]
fn a_mirrored_table_is_read_on_the_device() {
    block_on(a_mirrored_table_is_read_on_the_device_on(&Device::cpu()));
}

/// Batches of at least 65,536 rows: on a GPU the results come back in page-locked buffers
/// that Arrow reads in place (reused once an array lets go of them).
fn large_batches_on(device: &Device) {
    let n = 300_000;
    let f = udf(add_gpu::COLUMNAR, device);
    let arr = |v: Vec<f32>| -> ArrayRef { Arc::new(Float32Array::from(v)) };
    let (x, y) = (floats(n, 1.0), floats(n, 2.0));
    let first = array_of(
        invoke(&f, vec![ColumnarValue::Array(arr(x.clone())), ColumnarValue::Array(arr(y.clone()))], n).unwrap(),
    );
    let want = add_gpu::cpu(&x, &y).unwrap();
    assert_eq!(first.as_primitive::<Float32Type>().values().to_vec(), want);
    // Another batch while the first's results are alive: they stay as they were.
    let (u, v) = (floats(n, 3.0), floats(n, 4.0));
    let second = array_of(
        invoke(&f, vec![ColumnarValue::Array(arr(u.clone())), ColumnarValue::Array(arr(v.clone()))], n).unwrap(),
    );
    assert_eq!(second.as_primitive::<Float32Type>().values().to_vec(), add_gpu::cpu(&u, &v).unwrap());
    assert_eq!(first.as_primitive::<Float32Type>().values().to_vec(), want);
    drop((first, second));
    // A tuple of results, and a fault deep in the batch.
    let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    let mut b: Vec<i32> = (0..n as i32).map(|i| 1 + i % 11).collect();
    let g = udf(divmod::COLUMNAR, device);
    let ints = |v: &[i32]| -> ColumnarValue { ColumnarValue::Array(Arc::new(Int32Array::from(v.to_vec()))) };
    let got = array_of(invoke(&g, vec![ints(&a), ints(&b)], n).unwrap());
    let got = got.as_struct();
    let (q, r) = divmod::cpu(&a, &b).unwrap();
    assert_eq!(got.column(0).as_primitive::<Int32Type>().values().to_vec(), q);
    assert_eq!(got.column(1).as_primitive::<Int32Type>().values().to_vec(), r);
    b[250_001] = 0;
    let e = invoke(&g, vec![ints(&a), ints(&b)], n).unwrap_err().to_string();
    assert!(e.contains("`divmod` failed at row 250001 of the batch"), "{e}");
}

#[test]
fn large_batches() {
    large_batches_on(&Device::cpu());
}

/// Out of GPU memory in the middle of a query: an error that says so, and the session
/// answers again once memory is free.
async fn out_of_gpu_memory_is_an_error_on(device: &Device) {
    let n = 16 << 20;
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float32, false),
        Field::new("y", DataType::Float32, false),
    ]));
    let (x, y) = (floats(n, 0.5), floats(n, 1.5));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(Float32Array::from(x.clone())), Arc::new(Float32Array::from(y.clone()))],
    )
    .unwrap();
    // One partition: the rows come back in their order.
    let ctx = SessionContext::new_with_config(datafusion::prelude::SessionConfig::new().with_target_partitions(1));
    ctx.register_batch("t", batch).unwrap();
    ctx.register_udf(udf(add_gpu::COLUMNAR, device));
    let sql = "SELECT add_gpu(x, y) FROM t";
    let want = add_gpu::cpu(&x, &y).unwrap();
    let host = |cols: Vec<ArrayRef>| cols[0].as_primitive::<Float32Type>().values().to_vec();
    // The module loaded, then the GPU filled up to within 1 MiB.
    assert_eq!(host(query(&ctx, sql).await.unwrap()), want);
    let mut hog: Vec<gpu_runtime::DeviceVec<u8>> = Vec::new();
    for chunk in [1usize << 30, 64 << 20, 1 << 20] {
        while let Ok(v) = gpu_runtime::DeviceVec::<u8>::zeros_on(device, chunk) {
            hog.push(v);
        }
    }
    let e = query(&ctx, sql).await.unwrap_err().to_string();
    assert!(e.contains("out of GPU memory"), "{e}");
    drop(hog);
    assert_eq!(host(query(&ctx, sql).await.unwrap()), want);
}

#[test]
fn a_function_in_a_projection_and_a_filter() {
    block_on(a_function_in_a_projection_and_a_filter_on(&Device::cpu()));
}

#[test]
fn every_column_type_and_a_tuple_as_a_struct() {
    block_on(every_column_type_and_a_tuple_as_a_struct_on(&Device::cpu()));
}

#[test]
fn an_unsupported_column_is_a_planning_error_that_names_the_types() {
    block_on(an_unsupported_column_is_a_planning_error_that_names_the_types_on(&Device::cpu()));
}

#[test]
fn an_aggregate_with_group_by() {
    block_on(an_aggregate_with_group_by_on(&Device::cpu()));
}

#[test]
fn nulls_follow_sql() {
    nulls_follow_sql_on(&Device::cpu());
}

#[test]
fn sliced_arrays_are_read_from_their_offset() {
    sliced_arrays_are_read_from_their_offset_on(&Device::cpu());
}

#[test]
fn a_fault_names_its_row_in_the_batch() {
    a_fault_names_its_row_in_the_batch_on(&Device::cpu());
}

#[test]
fn the_signature_comes_from_the_rust_types() {
    the_signature_comes_from_the_rust_types_on(&Device::cpu());
}

/// The same on the GPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn on_the_gpu() {
    let device = Device::cuda(0).expect("a CUDA GPU");
    block_on(an_aggregate_with_group_by_on(&device));
    block_on(a_function_in_a_projection_and_a_filter_on(&device));
    block_on(every_column_type_and_a_tuple_as_a_struct_on(&device));
    block_on(an_unsupported_column_is_a_planning_error_that_names_the_types_on(&device));
    nulls_follow_sql_on(&device);
    sliced_arrays_are_read_from_their_offset_on(&device);
    a_fault_names_its_row_in_the_batch_on(&device);
    the_signature_comes_from_the_rust_types_on(&device);
    block_on(a_mirrored_table_is_read_on_the_device_on(&device));
    large_batches_on(&device);
    block_on(out_of_gpu_memory_is_an_error_on(&device));
    // A mirror on another device is not read.
    let batches = mirror_batches();
    let elsewhere = gpu_datafusion::DeviceMirror::of(&Device::cpu(), &batches).unwrap();
    let (x, y) = (batches[0].column(0).clone(), batches[0].column(1).clone());
    invoke(&udf(add_gpu::COLUMNAR, &device), vec![ColumnarValue::Array(x), ColumnarValue::Array(y)], 3000).unwrap();
    assert_eq!(elsewhere.reads(), 0);
}
