//! `name::COLUMNAR`: vectorized functions called over columns typed at run time, as query
//! engines call them (gpu-datafusion's SQL functions), on the CPU device.

use gpu_runtime::columnar::{Column, ColumnArg, DeviceColumn, Kind, Value, Values, ValuesMut};
use gpu_runtime::{Device, Error, vectorize};

#[vectorize]
fn axpy(a: f32, x: f32, y: f32) -> f32 {
    a * x + y
}

#[vectorize(types(f32, f64))]
fn halve<T: gpu_runtime::Float>(x: T, d: T) -> (T, bool) {
    (x / d, x > d)
}

#[vectorize]
fn quotient(a: i64, b: i64) -> i64 {
    a / b
}

#[vectorize]
fn flags(b: bool, h: gpu_runtime::f16) -> u8 {
    b as u8 + (h.to_f32() > 0.5) as u8
}

#[test]
fn a_function_over_columns() {
    let f = axpy::COLUMNAR.functions()[0];
    assert_eq!((f.name(), f.params()), ("axpy", &["a", "x", "y"][..]));
    assert_eq!(f.param_kinds(), [Kind::F32, Kind::F32, Kind::F32]);
    assert_eq!((f.result_kinds(), f.returns_tuple()), (&[Kind::F32][..], false));
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..1000).map(|i| 1000.0 - i as f32).collect();
    let args =
        [ColumnArg::Scalar(Value::F32(2.0)), ColumnArg::Column(Values::F32(&x)), ColumnArg::Column(Values::F32(&y))];
    let got = f.call(&Device::cpu(), &args).unwrap();
    assert_eq!(got, vec![Column::F32(axpy::cpu(2.0, &x, &y).unwrap())]);
    // All scalars: one row.
    let args =
        [ColumnArg::Scalar(Value::F32(2.0)), ColumnArg::Scalar(Value::F32(3.0)), ColumnArg::Scalar(Value::F32(1.0))];
    assert_eq!(f.call(&Device::cpu(), &args).unwrap(), vec![Column::F32(vec![7.0])]);
}

#[test]
fn generic_functions_have_one_instance_per_type_and_tuples_one_column_per_field() {
    let c = halve::COLUMNAR;
    assert_eq!(c.name(), "halve");
    let kinds: Vec<&[Kind]> = c.functions().iter().map(|f| f.param_kinds()).collect();
    assert_eq!(kinds, [&[Kind::F32, Kind::F32][..], &[Kind::F64, Kind::F64][..]]);
    let f = c.instance(&[Kind::F64, Kind::F64]).unwrap();
    assert_eq!((f.result_kinds(), f.returns_tuple()), (&[Kind::F64, Kind::Bool][..], true));
    let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
    let got =
        f.call(&Device::cpu(), &[ColumnArg::Column(Values::F64(&x)), ColumnArg::Scalar(Value::F64(3.0))]).unwrap();
    let (q, r) = halve::cpu(&x, 3.0f64).unwrap();
    assert_eq!(got, vec![Column::F64(q), Column::Bool(r)]);
    assert!(c.instance(&[Kind::I32, Kind::I32]).is_none());
}

#[test]
fn a_fault_names_its_element() {
    let f = quotient::COLUMNAR.functions()[0];
    let x: Vec<i64> = (0..100).collect();
    let d: Vec<i64> = (0..100).map(|i| if i == 42 { 0 } else { 1 }).collect();
    match f.call(&Device::cpu(), &[ColumnArg::Column(Values::I64(&x)), ColumnArg::Column(Values::I64(&d))]) {
        Err(Error::KernelFault { function: "quotient", index: 42, message }) => {
            assert!(message.contains("divide by zero"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn arguments_of_another_type_or_number_are_errors() {
    let f = axpy::COLUMNAR.functions()[0];
    let x = [1.0f64, 2.0];
    let args =
        [ColumnArg::Scalar(Value::F32(2.0)), ColumnArg::Column(Values::F64(&x)), ColumnArg::Scalar(Value::F32(1.0))];
    let e = f.call(&Device::cpu(), &args).unwrap_err();
    assert_eq!(e.to_string(), "`axpy` takes f32 for `x`, not f64");
    let e = f.call(&Device::cpu(), &args[..1]).unwrap_err();
    assert_eq!(e.to_string(), "`axpy` takes f32 for `x`, not no argument");
    let (a, b) = ([1.0f32, 2.0], [1.0f32]);
    let args =
        [ColumnArg::Column(Values::F32(&a)), ColumnArg::Column(Values::F32(&b)), ColumnArg::Scalar(Value::F32(1.0))];
    assert!(matches!(f.call(&Device::cpu(), &args), Err(Error::LengthMismatch { .. })));
}

#[test]
fn columns_in_a_devices_memory_are_read_in_place() {
    let f = axpy::COLUMNAR.functions()[0];
    let cpu = Device::cpu();
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
    let y: Vec<f32> = (0..1000).map(|i| 7.0 - i as f32).collect();
    let dx = DeviceColumn::on(&cpu, Values::F32(&x)).unwrap();
    assert_eq!((dx.kind(), dx.len(), dx.device().is_cpu()), (Kind::F32, 1000, true));
    assert_eq!(dx.values().to_column().unwrap(), Column::F32(x.clone()));
    // A device column beside a host column and a scalar, whole and sliced.
    let args = [ColumnArg::Scalar(Value::F32(3.0)), ColumnArg::Device(dx.values()), ColumnArg::Column(Values::F32(&y))];
    assert_eq!(f.call(&cpu, &args).unwrap(), vec![Column::F32(axpy::cpu(3.0, &x, &y).unwrap())]);
    let part = dx.values().slice(100..250).unwrap();
    assert_eq!((part.kind(), part.len()), (Kind::F32, 150));
    let args = [ColumnArg::Scalar(Value::F32(3.0)), ColumnArg::Device(part), ColumnArg::Column(Values::F32(&y[..150]))];
    assert_eq!(f.call(&cpu, &args).unwrap(), vec![Column::F32(axpy::cpu(3.0, &x[100..250], &y[..150]).unwrap())]);
    assert!(matches!(dx.values().slice(900..1001), Err(Error::OutOfRange { .. })));
    // Of another type than the parameter's: the same error as a host column's.
    let dz = DeviceColumn::on(&cpu, Values::F64(&[1.0, 2.0])).unwrap();
    let args = [ColumnArg::Scalar(Value::F32(3.0)), ColumnArg::Device(dz.values()), ColumnArg::Scalar(Value::F32(1.0))];
    assert_eq!(f.call(&cpu, &args).unwrap_err().to_string(), "`axpy` takes f32 for `x`, not f64");
    // Of another length: a length mismatch.
    let args =
        [ColumnArg::Scalar(Value::F32(3.0)), ColumnArg::Device(dx.values()), ColumnArg::Column(Values::F32(&y[..9]))];
    assert!(matches!(f.call(&cpu, &args), Err(Error::LengthMismatch { .. })));
}

#[test]
fn results_are_written_into_columns_given() {
    let cpu = Device::cpu();
    let f = halve::COLUMNAR.instance(&[Kind::F64, Kind::F64]).unwrap();
    let x: Vec<f64> = (0..500).map(|i| i as f64 - 100.0).collect();
    let (mut q, mut r) = (vec![0.0f64; 500], vec![false; 500]);
    let args = [ColumnArg::Column(Values::F64(&x)), ColumnArg::Scalar(Value::F64(7.0))];
    f.call_into(&cpu, &args, vec![ValuesMut::F64(&mut q), ValuesMut::Bool(&mut r)]).unwrap();
    assert_eq!((q.clone(), r.clone()), halve::cpu(&x, 7.0f64).unwrap());
    // Outputs of another type, number or length.
    let mut wrong = vec![0.0f32; 500];
    let e = f.call_into(&cpu, &args, vec![ValuesMut::F32(&mut wrong), ValuesMut::Bool(&mut r)]).unwrap_err();
    assert_eq!(e.to_string(), "`halve` takes f64 for `(result)`, not f32");
    assert!(f.call_into(&cpu, &args, vec![ValuesMut::F64(&mut q)]).is_err());
    let mut short = vec![0.0f64; 499];
    let e = f.call_into(&cpu, &args, vec![ValuesMut::F64(&mut short), ValuesMut::Bool(&mut r)]).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
    // A fault leaves the outputs as they were.
    let g = quotient::COLUMNAR.functions()[0];
    let a: Vec<i64> = (0..100).collect();
    let d: Vec<i64> = (0..100).map(|i| if i == 60 { 0 } else { 3 }).collect();
    let mut out = vec![-1i64; 100];
    let e = g
        .call_into(
            &cpu,
            &[ColumnArg::Column(Values::I64(&a)), ColumnArg::Column(Values::I64(&d))],
            vec![ValuesMut::I64(&mut out)],
        )
        .unwrap_err();
    assert!(matches!(e, Error::KernelFault { index: 60, .. }), "{e}");
    assert!(out.iter().all(|&v| v == -1));
    // Page-locked memory belongs to a GPU.
    assert!(gpu_runtime::PageLocked::<f32>::zeroed(&cpu, 10).is_err());
}

#[test]
fn booleans_and_halves_are_column_types() {
    let f = flags::COLUMNAR.functions()[0];
    let b = [true, false, true];
    let h = [0.25f32, 0.75, 1.0].map(gpu_runtime::f16::from_f32);
    let got =
        f.call(&Device::cpu(), &[ColumnArg::Column(Values::Bool(&b)), ColumnArg::Column(Values::F16(&h))]).unwrap();
    assert_eq!(got, vec![Column::U8(vec![1, 1, 2])]);
}

#[test]
fn columns_take_and_scatter_rows() {
    let c = Column::I32(vec![10, 20, 30]);
    assert_eq!(c.take(&[2, 0]), Some(Column::I32(vec![30, 10])));
    assert_eq!(c.take(&[3]), None);
    assert_eq!(c.scatter(&[1, 3, 4], 5), Some(Column::I32(vec![0, 10, 0, 20, 30])));
    assert_eq!(c.scatter(&[1, 5, 2], 5), None);
    assert_eq!(c.get(1), Some(Value::I32(20)));
}

#[vectorize(identity = 0)]
fn total(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

#[vectorize(types(f32, f64))]
fn biggest<T: gpu_runtime::Float>(a: T, b: T) -> T {
    a.max(b)
}

#[test]
fn reductions_fold_a_column() {
    let c = total::COLUMNAR;
    // Every `fn(T, T) -> T` has `reduce` (the caller promises associativity), so `quotient` too.
    assert!(c.reducible() && quotient::COLUMNAR.reducible() && !axpy::COLUMNAR.reducible());
    let f = c.functions()[0];
    let x: Vec<i64> = (0..10_000).map(|i| i * 7 - 3).collect();
    let got = f.reduce(&Device::cpu(), Values::I64(&x)).unwrap().unwrap();
    assert_eq!(got, Value::I64(total::reduce_on(&Device::cpu(), &x).unwrap()));
    assert_eq!(f.reduce(&Device::cpu(), Values::I64(&[])).unwrap().unwrap(), Value::I64(0), "the identity");
    let e = f.reduce(&Device::cpu(), Values::F32(&[1.0])).unwrap().unwrap_err();
    assert_eq!(e.to_string(), "`total` takes i64 for `values`, not f32");
    assert!(axpy::COLUMNAR.functions()[0].reduce(&Device::cpu(), Values::F32(&[1.0])).is_none());
    // One fold per type of a generic reduction; without an identity an empty column is an error.
    let b = biggest::COLUMNAR;
    assert!(b.reducible());
    let g = b.instance(&[Kind::F64, Kind::F64]).unwrap();
    assert_eq!(g.reduce(&Device::cpu(), Values::F64(&[1.0, 5.0, -2.0])).unwrap().unwrap(), Value::F64(5.0));
    assert!(matches!(g.reduce(&Device::cpu(), Values::F64(&[])).unwrap(), Err(Error::EmptyReduce { .. })));
}
