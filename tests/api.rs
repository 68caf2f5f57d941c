//! The generated API, checked without a GPU: argument checks, broadcasting, empty input,
//! the CPU path, the generated PTX, and errors (not panics) when no GPU is there.

use gpu_runtime::{Error, vectorize};

#[vectorize(target = "cuda")]
fn add_gpu(a: f32, b: f32) -> f32 {
    a + b
}

/// Several parameter types, and a parameter named like a generated item.
#[vectorize(target = "cuda", arch = "sm_80")]
fn scale(device: f64, n: i32, flag: bool) -> f32 {
    if flag { (device * n as f64) as f32 } else { 0.0 }
}

#[vectorize]
fn divide(a: i32, b: i32) -> i32 {
    a / b
}

#[test]
fn a_call_over_no_device_is_an_error() {
    let e = add_gpu::on_devices(&[], &[1.0f32], 2.0).unwrap_err();
    assert!(matches!(e, Error::NoDevicesGiven { function: "add_gpu" }), "{e:?}");
    assert_eq!(e.to_string(), "`add_gpu::on_devices` was given no device to run on");
}

#[test]
fn slices_of_different_lengths_are_an_error_naming_them() {
    let e = add_gpu(&[1.0f32, 2.0, 3.0], &[1.0f32, 2.0]).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { function: "add_gpu", .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "`add_gpu`: the slice arguments must have the same length, but `a` has 3 and `b` has 2 elements"
    );
    let e = scale(&[1.0f64, 2.0], 3, &[true]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`scale`: the slice arguments must have the same length, but `device` has 2 and `flag` has 1 elements"
    );
    // The CPU path checks the same way.
    assert!(matches!(add_gpu::cpu(&[1.0f32], &[1.0f32, 2.0]), Err(Error::LengthMismatch { .. })));
}

#[test]
fn empty_slices_give_an_empty_result_without_a_launch() {
    let empty: [f32; 0] = [];
    assert_eq!(add_gpu(&empty, &empty).unwrap(), Vec::<f32>::new());
    assert_eq!(add_gpu(&empty, 1.0).unwrap(), Vec::<f32>::new());
    assert_eq!(add_gpu::cpu(&empty, 1.0).unwrap(), Vec::<f32>::new());
}

#[test]
fn every_slice_form_and_scalar_is_accepted() {
    let v = vec![1.0f32, 2.0, 3.0];
    let a = [4.0f32, 5.0, 6.0];
    let want = vec![5.0f32, 7.0, 9.0];
    assert_eq!(add_gpu::cpu(&v, &a).unwrap(), want);
    assert_eq!(add_gpu::cpu(&v[..], &a[..]).unwrap(), want);
    assert_eq!(add_gpu::cpu(&v, 1.0).unwrap(), vec![2.0, 3.0, 4.0]);
    assert_eq!(add_gpu::cpu(0.5, 0.25).unwrap(), vec![0.75]);
    assert_eq!(scale::cpu(&[1.5f64, 2.0], 2, true).unwrap(), vec![3.0, 4.0]);
    assert_eq!(scale::cpu(1.5, &[2, 4], &[true, false]).unwrap(), vec![3.0, 0.0]);
}

#[test]
fn the_original_function_stays_callable() {
    assert_eq!(add_gpu::scalar(1.5, 2.0), 3.5);
    assert_eq!(scale::scalar(2.0, 3, true), 6.0);
    assert_eq!(divide::scalar(7, 2), 3);
}

#[test]
fn the_generated_ptx_is_there_to_read() {
    assert!(add_gpu::PTX.contains(".target sm_70"), "{}", add_gpu::PTX);
    assert!(add_gpu::PTX.contains(".visible .entry vectorize_add_gpu("));
    // IEEE addition, rounded to nearest: the same bits as the CPU.
    assert!(add_gpu::PTX.contains("add.rn.f32"));
    assert!(scale::PTX.contains(".target sm_80"));
    assert!(add_gpu::LLVM_IR.contains("define void @vectorize_add_gpu("), "{}", add_gpu::LLVM_IR);
    // Integer division can fail, so its kernel takes an error flag.
    assert!(divide::PTX.contains("atom.global.min.u64"));
    assert!(!add_gpu::PTX.contains("atom."));
}

/// Without a driver or a device, every query is an error, never a panic; with one, the
/// queries agree with each other. CI checks the first half; the GPU host runs this binary
/// too and checks the second.
#[test]
fn device_queries_report_what_the_machine_has() {
    let no_gpu = |e: &Error| matches!(e, Error::NoDriver | Error::NoDevice);
    if gpu_runtime::is_available() {
        let count = gpu_runtime::device_count().unwrap();
        let listed = gpu_runtime::devices().unwrap();
        assert_eq!(listed.len(), count);
        assert!(listed.iter().enumerate().all(|(i, d)| d.ordinal == i && d.sm_count > 0), "{listed:?}");
        let first = gpu_runtime::Device::cuda(0).unwrap();
        assert_eq!((first.name(), first.compute_capability()), (listed[0].name.as_str(), listed[0].compute_capability));
        assert_eq!(gpu_runtime::driver_version().unwrap(), listed[0].driver_cuda_version);
        assert!(matches!(
            gpu_runtime::Device::cuda(count),
            Err(Error::DeviceNotFound { ordinal, count: c }) if ordinal == count && c == count
        ));
    } else {
        assert!(no_gpu(&gpu_runtime::devices().unwrap_err()));
        assert!(gpu_runtime::driver_version().is_err());
        assert!(no_gpu(&gpu_runtime::Device::cuda(0).unwrap_err()));
        // The gpu-info tool explains and exits with status 2.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-info")).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("no GPU to use") && text.contains("what to do"), "{text}");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-info")).arg("--json").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("{\"ok\": false, \"error\": "), "{text}");
    }
}

/// A call without a GPU is an error that says what to do; with one, it runs.
#[test]
fn a_call_runs_on_the_gpu_or_says_there_is_none() {
    let r = add_gpu(&[1.0f32], &[2.0f32]);
    if gpu_runtime::is_available() {
        assert_eq!(r.unwrap(), vec![3.0]);
        assert_eq!(gpu_runtime::default_device().unwrap().ordinal(), 0);
    } else {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::NoDriver | Error::NoDevice), "{e:?}");
        assert!(e.to_string().contains("run the function on the CPU"), "{e}");
        assert!(matches!(gpu_runtime::default_device(), Err(Error::NoDriver | Error::NoDevice)));
        assert!(gpu_runtime::Device::cuda(0).is_err());
    }
    // Argument errors come first, GPU or not.
    assert!(matches!(add_gpu(&[1.0f32], &[1.0f32, 2.0]), Err(Error::LengthMismatch { .. })));
}

#[vectorize(identity = 0)]
fn total(a: u64, b: u64) -> u64 {
    a.wrapping_add(b)
}

#[vectorize]
fn highest(a: i16, b: i16) -> i16 {
    a.max(b)
}

#[test]
fn reduce_of_nothing_needs_no_gpu() {
    assert_eq!(total::reduce(&Vec::<u64>::new()).unwrap(), 0);
    let e = highest::reduce(&[0i16; 0]).unwrap_err();
    assert!(matches!(e, Error::EmptyReduce { function: "highest" }));
    assert!(e.to_string().contains("identity"), "{e}");
    assert_eq!(highest::reduce(-4).unwrap(), -4);
}

#[test]
fn into_checks_the_output_length_first() {
    let mut out = vec![0.0f32; 2];
    match add_gpu::into(&mut out, &[1.0f32, 2.0, 3.0], 1.0) {
        Err(Error::LengthMismatch { lengths, .. }) => assert_eq!(lengths, vec![("a", 3), ("out", 2)]),
        other => panic!("expected a length mismatch, got {other:?}"),
    }
    assert!(add_gpu::into(&mut Vec::<f32>::new(), &[0.0f32; 0], 1.0).is_ok());
    assert_eq!(add_gpu::parallel(&[1.0f32, 2.0], 0.5).unwrap(), vec![1.5, 2.5]);
}

/// One function, a kernel per listed type.
#[vectorize(types(f32, f64))]
fn half_hypot<T: gpu_runtime::Float>(x: T, y: T) -> T {
    (x * x + y * y).sqrt() * T::from_f64(0.5)
}

/// A generic function with a parameter of a fixed type, and a reduction.
#[vectorize(types(i64, u8), identity = 0)]
fn plus<T: gpu_runtime::Scalar + std::ops::Add<Output = T>>(x: T, y: T) -> T {
    x + y
}

#[test]
fn generic_functions_get_one_kernel_per_type() {
    assert_eq!(half_hypot::cpu(&[3.0f32, 6.0], 4.0).unwrap(), vec![2.5f32, 3.605_551_3]);
    assert_eq!(half_hypot::cpu(3.0f64, &[4.0f64]).unwrap(), vec![2.5f64]);
    assert_eq!(half_hypot::scalar(3.0f64, 4.0), 2.5);
    assert!(half_hypot::PTX_F32.contains(".f32") && !half_hypot::PTX_F32.contains("sqrt.rn.f64"));
    assert!(half_hypot::PTX_F64.contains("sqrt.rn.f64"));
    assert_eq!(half_hypot::PTX, half_hypot::PTX_F32);
    assert_eq!(<f64 as half_hypot::Element>::PTX, half_hypot::PTX_F64);
    assert_eq!(plus::parallel(&[250u8, 3], 10).unwrap(), vec![4u8, 13]);
    assert_eq!(plus::cpu(&[-5i64], 2).unwrap(), vec![-3i64]);
    assert_eq!(plus::reduce(&[0i64; 0]).unwrap(), 0);
    assert!(plus::PTX_U8.contains(".visible .entry vectorize_plus_reduce("));
}

#[vectorize(target = "cpu", identity = 0.0)]
fn cpu_sum(a: f64, b: f64) -> f64 {
    a + b
}

#[vectorize(target = "parallel")]
fn par_scale(x: f32, k: f32) -> f32 {
    x * k
}

#[vectorize(target = "parallel", types(f32, f64))]
fn par_square<T: gpu_runtime::Float>(x: T) -> T {
    x * x
}

#[test]
fn cpu_and_parallel_targets_need_no_gpu() {
    let v: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    assert_eq!(cpu_sum(&v, 1.0).unwrap()[9_999], 10_000.0);
    assert_eq!(cpu_sum::reduce(&v).unwrap(), 49_995_000.0);
    assert_eq!(cpu_sum::reduce(&[0.0f64; 0]).unwrap(), 0.0);
    let x: Vec<f32> = (0..100_000).map(|i| i as f32).collect();
    let y = par_scale(&x, 0.5).unwrap();
    assert_eq!(y.len(), 100_000);
    assert_eq!(y[99_999], 49_999.5);
    let mut out = vec![0.0f32; 3];
    par_scale::into(&mut out, &[1.0f32, 2.0, 3.0], 2.0).unwrap();
    assert_eq!(out, vec![2.0, 4.0, 6.0]);
    par_scale::into(&mut out, 1.0, 3.0).unwrap();
    assert_eq!(out, vec![3.0; 3]);
    assert!(matches!(par_scale::into(&mut out, &[1.0f32], 2.0), Err(Error::LengthMismatch { .. })));
    assert_eq!(par_square(&[3.0f64, -2.0]).unwrap(), vec![9.0, 4.0]);
    assert_eq!(par_square::cpu(&[1.5f32]).unwrap(), vec![2.25]);
}

/// A tuple result: one output array per field.
#[vectorize(target = "parallel")]
fn split(x: f64) -> (i64, f64) {
    let whole = x.trunc();
    (whole as i64, x - whole)
}

#[vectorize(target = "cpu", types(f32, f64))]
fn sincos<T: gpu_runtime::Float>(x: T) -> (T, T, bool) {
    (x.sin(), x.cos(), x < T::ZERO)
}

#[test]
fn tuple_results_come_back_as_one_array_per_field() {
    let (whole, frac) = split(&[1.25f64, -2.5, 3.0]).unwrap();
    assert_eq!(whole, vec![1, -2, 3]);
    assert_eq!(frac, vec![0.25, -0.5, 0.0]);
    assert_eq!(split::cpu(7.75).unwrap(), (vec![7], vec![0.75]));
    assert_eq!(split::scalar(-0.5), (0, -0.5));
    let (mut w, mut f) = (vec![0i64; 2], vec![0.0f64; 2]);
    split::into((&mut w, &mut f), &[5.5f64, 6.25]).unwrap();
    assert_eq!((w.clone(), f.clone()), (vec![5, 6], vec![0.5, 0.25]));
    // Every output's length is checked, by name.
    let mut short = vec![0.0f64; 1];
    let e = split::into((&mut w, &mut short), &[5.5f64, 6.25]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`split`: the slice arguments must have the same length, but `x` has 2, `out.0` has 2 and `out.1` has 1 elements"
    );
    let (s, c, neg) = sincos(&[0.0f32, -1.0]).unwrap();
    assert_eq!((s[0], c[0], neg), (0.0, 1.0, vec![false, true]));
    assert_eq!(sincos::parallel(&[0.0f64]).unwrap().1, vec![1.0]);
    // An empty call gives empty arrays.
    assert_eq!(split(&[0.0f64; 0]).unwrap(), (vec![], vec![]));
}

// ----- N-dimensional broadcasting (the `ndarray` feature), on the CPU targets -----------

use gpu_runtime::ndarray::{self, Array, Array1, Array2, Array3, ArrayD, IxDyn, s};

#[vectorize(target = "parallel")]
fn nd_add(a: f64, b: f64) -> f64 {
    a + b
}

#[vectorize(target = "cpu")]
fn nd_split(x: f64, k: i32) -> (f64, bool) {
    (x * k as f64, x < 0.0)
}

#[test]
fn nd_broadcasts_as_numpy_and_ndarray_do() {
    let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let row = Array1::from_vec(vec![10.0, 20.0, 30.0, 40.0]);
    let col = Array2::from_shape_fn((3, 1), |(i, _)| 100.0 * i as f64);
    // Against ndarray's own broadcasting arithmetic.
    assert_eq!(nd_add::nd(&a, &row).unwrap(), (&a + &row).into_dyn());
    assert_eq!(nd_add::nd(&col, &row).unwrap(), (&col + &row).into_dyn());
    assert_eq!(nd_add::nd(a.t(), 0.5).unwrap(), (&a.t() + 0.5).into_dyn());
    assert_eq!(
        nd_add::nd(a.slice(s![..;-1, 1..;2]), col.slice(s![.., 0])).unwrap_err().to_string(),
        "`nd_add`: the shapes do not broadcast together: `a` is [3, 2] and `b` is [3]"
    );
    let cube = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64);
    assert_eq!(nd_add::nd(&cube, &a).unwrap(), (&cube + &a).into_dyn());
    // Scalars only: a zero-dimensional result.
    assert_eq!(nd_add::nd(1.0, 2.0).unwrap(), ArrayD::from_elem(IxDyn(&[]), 3.0));
    // An empty axis: an empty result of the broadcast shape.
    let empty = Array2::<f64>::zeros((0, 4));
    assert_eq!(nd_add::nd(&empty, &row).unwrap().shape(), &[0, 4]);
    // The GPU target's host twin agrees.
    assert_eq!(nd_add::nd_cpu(&a, &row).unwrap(), nd_add::nd(&a, &row).unwrap());
}

#[test]
fn nd_into_writes_any_layout_and_checks_the_shape() {
    let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let mut out = Array2::<f64>::zeros((3, 4));
    nd_add::nd_into(&mut out, &a, 1.0).unwrap();
    assert_eq!(out, &a + 1.0);
    // A transposed (non-contiguous) output.
    let mut t = Array2::<f64>::zeros((4, 3));
    nd_add::nd_into(t.view_mut().reversed_axes(), &a, &a).unwrap();
    assert_eq!(t.t(), &a * 2.0);
    // The output is not broadcast: its shape must be the call's.
    let mut small = Array1::<f64>::zeros(4);
    let e = nd_add::nd_into(&mut small, &a, 1.0).unwrap_err();
    assert_eq!(e.to_string(), "`nd_add`: `out` has shape [4], but the call's shape is [3, 4]");
    // Tuple results: one array per field.
    let x = Array::from_shape_vec((2, 2), vec![1.5, -2.0, 0.0, -0.5]).unwrap();
    let (scaled, negative) = nd_split::nd(&x, &Array1::from_vec(vec![2, 3])).unwrap();
    assert_eq!(scaled, ndarray::arr2(&[[3.0, -6.0], [0.0, -1.5]]).into_dyn());
    assert_eq!(negative, ndarray::arr2(&[[false, true], [false, true]]).into_dyn());
    let (mut o1, mut o2) = (Array2::<f64>::zeros((2, 2)), Array2::from_elem((2, 2), true));
    nd_split::nd_into((&mut o1, &mut o2), &x, 1).unwrap();
    assert_eq!((o1, o2), (x.clone(), x.mapv(|v| v < 0.0)));
}

#[vectorize(target = "cpu")]
fn ratio_cpu(a: i64, b: i64) -> i64 {
    a / b
}

#[vectorize(target = "parallel", identity = 1)]
fn fold_div(a: i32, b: i32) -> i32 {
    a / b
}

#[vectorize]
fn bounded(x: i32, lo: i32, hi: i32) -> i32 {
    x.clamp(lo, hi)
}

/// The fault a GPU call reports: the element and Rust's message.
fn fault(r: gpu_runtime::Result<impl std::fmt::Debug>) -> (u64, String) {
    match r {
        Err(Error::KernelFault { index, message, .. }) => (index, message),
        other => panic!("expected a fault, got {other:?}"),
    }
}

/// Where the function panics, every CPU path returns the `Err` a GPU call returns (the
/// first failing element, Rust's message), never a panic.
#[test]
fn a_fault_is_the_same_error_on_every_cpu_path() {
    let a: Vec<i32> = (0..50_000).collect();
    let mut b = vec![3i32; 50_000];
    b[30_001] = 0;
    b[40_000] = 0; // a later failure: the first is reported, also when split over threads
    let want = (30_001, "attempt to divide by zero".to_string());
    assert_eq!(fault(divide::cpu(&a, &b)), want);
    assert_eq!(fault(divide::parallel(&a, &b)), want);
    let a64: Vec<i64> = a.iter().map(|&v| v as i64).collect();
    let b64: Vec<i64> = b.iter().map(|&v| v as i64).collect();
    assert_eq!(fault(ratio_cpu(&a64, &b64)), want);
    let mut out = vec![0i64; a.len()];
    assert_eq!(fault(ratio_cpu::into(&mut out, &a64, &b64)), want);
    assert_eq!(fault(divide::cpu(i32::MIN, -1)), (0, "attempt to divide with overflow".to_string()));
    // Messages keep the values Rust prints.
    assert_eq!(fault(bounded::cpu(&[5, 6], 1, 0)), (0, "min > max. min = 1, max = 0".to_string()));
    assert_eq!(fault(bounded::parallel(&[5, 6], &[0, 9], &[4, 2])), (1, "min > max. min = 9, max = 2".to_string()));
    // A fold fails at the step that panics in the sequential fold.
    let mut values = vec![1i32; 10_000];
    values[0] = 1000;
    values[7_777] = 0;
    assert_eq!(fault(fold_div::reduce(&values)), (7_777, "attempt to divide by zero".to_string()));
    assert_eq!(fold_div::reduce(&[100, 5, 2]).unwrap(), 10);
    // N-dimensional calls on the CPU too.
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as i32);
    let d = Array1::from_vec(vec![1, 2, 0, 4]);
    assert_eq!(fault(divide::nd_cpu(&m, &d)), (2, "attempt to divide by zero".to_string()));
}
