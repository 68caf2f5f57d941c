//! N-dimensional broadcasting on the GPU (`name::nd`, `name::nd_into`): every layout the
//! runtime plans differently, compared bit for bit with the same call on the CPU.

mod common;

use common::{SameAs, assert_same, inputs};
use gpu_runtime::ndarray::{Array, Array1, Array2, Array3, ArrayD, IxDyn, Slice, s};
use gpu_runtime::{Error, vectorize};

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(target = "cuda")]
fn scaled(x: f64, n: i32) -> f32 {
    (x * n as f64) as f32
}

#[vectorize(target = "cuda")]
fn quot(a: i64, b: i64) -> i64 {
    a / b
}

#[vectorize(target = "cuda")]
fn sign_split(x: f64) -> (f64, bool) {
    (x.abs(), x.is_sign_negative())
}

/// The GPU's result equals the CPU's, bit for bit.
fn same<T: SameAs + Clone>(what: &str, got: &ArrayD<T>, want: &ArrayD<T>) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w): (Vec<T>, Vec<T>) = (got.iter().cloned().collect(), want.iter().cloned().collect());
    assert_same(what, &g, &w);
}

fn grid(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    Array2::from_shape_vec((rows, cols), inputs(rows * cols, seed)).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_layout_matches_the_cpu() {
    let a = grid(1000, 1001, 1);
    let b = grid(1000, 1001, 2);
    let row: Array1<f32> = Array1::from_vec(inputs(1001, 3));
    let col = grid(1000, 1, 4);
    type Case<'a> = (&'a str, gpu_runtime::Result<ArrayD<f32>>, gpu_runtime::Result<ArrayD<f32>>);
    let cases: Vec<Case> = vec![
        ("contiguous", add::nd(&a, &b), add::nd_cpu(&a, &b)),
        ("row broadcast", add::nd(&a, &row), add::nd_cpu(&a, &row)),
        ("column broadcast", add::nd(&a, &col), add::nd_cpu(&a, &col)),
        ("outer sum", add::nd(&col, &row), add::nd_cpu(&col, &row)),
        ("transposed", add::nd(a.t(), b.t()), add::nd_cpu(a.t(), b.t())),
        ("reversed", add::nd(a.slice(s![..;-1, ..]), &row), add::nd_cpu(a.slice(s![..;-1, ..]), &row)),
        ("sparse slice", add::nd(a.slice(s![..;7, 3..;11]), 1.0), add::nd_cpu(a.slice(s![..;7, 3..;11]), 1.0)),
        ("scalar", add::nd(2.0, &a), add::nd_cpu(2.0, &a)),
        (
            "one element",
            add::nd(&Array2::from_elem((1, 1), 0.5f32), &a),
            add::nd_cpu(&Array2::from_elem((1, 1), 0.5f32), &a),
        ),
    ];
    for (what, got, want) in &cases {
        same(what, got.as_ref().unwrap(), want.as_ref().unwrap());
    }
    // Three dimensions against two, with a stretched middle axis.
    let cube = Array3::from_shape_vec((7, 1, 300), inputs(2100, 5)).unwrap();
    let plane = grid(50, 300, 6);
    same("3-d", &add::nd(&cube, &plane).unwrap(), &add::nd_cpu(&cube, &plane).unwrap());
    // Nine axes that cannot merge: gathered on the host into one contiguous array.
    let big = Array::from_shape_vec(IxDyn(&[3; 9]), inputs(3usize.pow(9), 7)).unwrap();
    let (even, tail) =
        (big.slice_each_axis(|_| Slice::new(0, None, 2)), big.slice_each_axis(|_| Slice::new(1, None, 1)));
    assert_eq!((even.shape(), tail.shape()), (&[2; 9][..], &[2; 9][..]));
    same("9-d", &add::nd(even.view(), tail.view()).unwrap(), &add::nd_cpu(even.view(), tail.view()).unwrap());
    // Mixed types.
    let x: Array2<f64> = Array2::from_shape_vec((300, 200), inputs(60_000, 8)).unwrap();
    let n: Array1<i32> = Array1::from_vec(inputs(200, 9));
    same("mixed", &scaled::nd(&x, &n).unwrap(), &scaled::nd_cpu(&x, &n).unwrap());
    // Nothing to do.
    assert_eq!(add::nd(&Array2::<f32>::zeros((0, 3)), &Array1::<f32>::zeros(3)).unwrap().shape(), &[0, 3]);
    // Shapes that do not broadcast.
    assert!(matches!(add::nd(&a, &Array1::<f32>::zeros(3)), Err(Error::ShapeMismatch { .. })));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nd_into_and_tuples_and_faults() {
    let a = grid(500, 400, 11);
    let row: Array1<f32> = Array1::from_vec(inputs(400, 12));
    let want = add::nd_cpu(&a, &row).unwrap();
    // Into a contiguous output (written in place) and a transposed one (through the host).
    let mut out = Array2::<f32>::zeros((500, 400));
    add::nd_into(&mut out, &a, &row).unwrap();
    same("nd_into", &out.into_dyn(), &want);
    let mut t = Array2::<f32>::zeros((400, 500));
    add::nd_into(t.view_mut().reversed_axes(), &a, &row).unwrap();
    same("nd_into transposed", &t.t().to_owned().into_dyn(), &want);
    // Tuple results.
    let x: Array2<f64> = Array2::from_shape_vec((300, 7), inputs(2100, 13)).unwrap();
    let (abs, neg) = sign_split::nd(x.t()).unwrap();
    let (abs_cpu, neg_cpu) = sign_split::nd_cpu(x.t()).unwrap();
    same("tuple abs", &abs, &abs_cpu);
    assert_eq!(neg, neg_cpu);
    // A fault names the first failing element in C order of the broadcast shape.
    let num = Array2::from_shape_fn((40, 50), |(i, j)| (i * 50 + j) as i64);
    let mut den = Array1::from_elem(50, 3i64);
    den[17] = 0;
    match quot::nd(&num, &den) {
        Err(Error::KernelFault { index, .. }) => assert_eq!(index, 17),
        other => panic!("expected a fault, got {other:?}"),
    }
}

/// Device arrays broadcast on the GPU where they are (Numba's `fngpu(cuda.to_device(a),
/// cuda.to_device(b))` over (100, 3, 1) and (1, 3, 100)), beside host arrays and scalars,
/// into host outputs; a fault among device arrays; arrays of two devices refused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_arrays_broadcast_on_the_gpu() {
    use gpu_runtime::ndarray::Dimension;
    use gpu_runtime::{Device, DeviceArray};
    let gpu = Device::cuda(0).unwrap();
    let a = Array3::from_shape_fn((100, 3, 1), |(i, j, _)| (i * 3 + j) as f32 * 0.5);
    let b = Array3::from_shape_fn((1, 3, 100), |(_, j, k)| (j * 100 + k) as f32 - 7.0);
    let (da, db) = (DeviceArray::from_array_on(&gpu, &a).unwrap(), DeviceArray::from_array_on(&gpu, &b).unwrap());
    let want = add::nd_cpu(&a, &b).unwrap();
    assert_eq!(want.shape(), &[100, 3, 100]);
    same("device arrays", &add::nd(&da, &db).unwrap(), &want);
    same("a device array beside a host array", &add::nd(&da, &b).unwrap(), &want);
    same("nd_cpu copies them", &add::nd_cpu(&da, &db).unwrap(), &want);
    let mut out = Array3::<f32>::zeros((100, 3, 100));
    add::nd_into(&mut out, &da, &db).unwrap();
    same("nd_into", &out.into_dyn(), &want);
    let x = DeviceArray::from_array_on(&gpu, &Array2::from_shape_fn((300, 7), |(i, j)| i as f64 - j as f64 * 0.25))
        .unwrap();
    let (abs, neg) = sign_split::nd(&x).unwrap();
    let (abs_cpu, neg_cpu) = sign_split::nd_cpu(&x.to_array().unwrap()).unwrap();
    same("tuple", &abs, &abs_cpu);
    assert_eq!(neg, neg_cpu);
    same("with a scalar", &scaled::nd(&x, 3).unwrap(), &scaled::nd_cpu(&x.to_array().unwrap(), 3).unwrap());
    // More axes than the strided entry takes: gathered through the host, still right.
    let deep =
        Array::from_shape_fn(IxDyn(&[2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2]), |ix| ix.slice().iter().sum::<usize>() as f32);
    let wide =
        Array::from_shape_fn(IxDyn(&[1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1]), |ix| ix.slice().iter().sum::<usize>() as f32);
    let (ddeep, dwide) =
        (DeviceArray::from_array_on(&gpu, &deep).unwrap(), DeviceArray::from_array_on(&gpu, &wide).unwrap());
    same("many axes", &add::nd(&ddeep, &dwide).unwrap(), &add::nd_cpu(&deep, &wide).unwrap());
    // A fault names the first failing element in C order of the broadcast shape.
    let num = DeviceArray::from_array_on(&gpu, &Array2::from_shape_fn((40, 50), |(i, j)| (i * 50 + j) as i64)).unwrap();
    let mut den = Array1::from_elem(50, 3i64);
    den[17] = 0;
    let dden = DeviceArray::from_array_on(&gpu, &den).unwrap();
    match quot::nd(&num, &dden) {
        Err(Error::KernelFault { index, message, .. }) => {
            assert_eq!(index, 17);
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    let on_cpu = DeviceArray::from_array_on(&Device::cpu(), &b).unwrap();
    assert!(matches!(add::nd(&da, &on_cpu), Err(Error::DeviceMismatch { .. })));
}
