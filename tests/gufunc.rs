//! `#[guvectorize]` without a GPU: every layout form on both CPU paths, on the CPU device
//! and through the generated kernel in the simulator, against plain loops; broadcast and
//! empty loop dimensions, core sizes checked, output sizes given at the call, faults. The
//! same functions run on the GPU in `tests/gpu_gufunc.rs`.

mod gufunc_defs;

use gpu_runtime::ndarray::{Array, ArrayD, Dimension, IxDyn};
use gpu_runtime::{Device, Error, Where};
use gufunc_defs::*;

fn array(shape: &[usize], f: impl Fn(usize) -> f32) -> ArrayD<f32> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

/// Every way to run `$f` on the host, each against `$want`.
macro_rules! everywhere {
    ($f:ident ( $($a:expr),* ), $want:expr) => {{
        let want = $want;
        assert_eq!($f::cpu($($a),*).unwrap(), want, "cpu");
        assert_eq!($f::parallel($($a),*).unwrap(), want, "parallel");
        assert_eq!($f::on(&Device::cpu(), $($a),*).unwrap(), want, "on the CPU device");
        assert_eq!(Device::cpu().scope(|| $f($($a),*)).unwrap(), want, "default CPU device");
        assert_eq!($f::simulate($($a),*).unwrap(), want, "the kernel in the simulator");
        for how in [Where::Cpu, Where::Parallel, Where::On(&Device::cpu()), Where::Simulate] {
            assert_eq!($f::with(how, $($a),*).unwrap(), want, "with {how:?}");
        }
        assert_eq!(Device::cpu().scope(|| $f::with(Where::Default, $($a),*)).unwrap(), want, "with the default");
    }};
}

#[test]
fn a_reduction_over_the_core_with_broadcast_loop_dimensions() {
    let a = array(&[4, 5, 7], |i| (i % 11) as f32 - 5.0);
    let b = array(&[5, 7], |i| (i % 3) as f32);
    let mut want = ArrayD::<f32>::zeros(IxDyn(&[4, 5]));
    for i in 0..4 {
        for j in 0..5 {
            want[[i, j]] = (0..7).map(|k| a[[i, j, k]] * b[[j, k]]).sum();
        }
    }
    everywhere!(dot(&a, &b), want.clone());
    // Slices are one axis: a single core.
    let (x, y) = ([1.0f32, 2.0, 3.0], [4.0f32, 5.0, 6.0]);
    assert_eq!(dot::cpu(&x[..], &y[..]).unwrap(), ArrayD::from_elem(IxDyn(&[]), 32.0));
    // Arrays too, as the vectorized calls take them.
    assert_eq!(dot::cpu(&x, &y).unwrap(), ArrayD::from_elem(IxDyn(&[]), 32.0));
    assert_eq!(dot::simulate(&x, &y[..]).unwrap(), ArrayD::from_elem(IxDyn(&[]), 32.0));
    assert_eq!(dot::LAYOUT, "(n),(n)->()");
}

#[test]
fn a_core_output_with_a_scalar_input_per_loop_index_or_for_all() {
    let x = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| (ix[0] * 10 + ix[1]) as f64);
    let want = x.mapv(|v| v + 0.5);
    everywhere!(shift(&x, 0.5), want.clone());
    // `by` with loop dimensions of its own: one per row, broadcast over a new leading axis.
    let by = Array::from_shape_fn(IxDyn(&[2, 1]), |ix| ix[0] as f64 * 100.0);
    let want = Array::from_shape_fn(IxDyn(&[2, 3, 4]), |ix| x[[ix[1], ix[2]]] + ix[0] as f64 * 100.0);
    everywhere!(shift(&x, &by), want);
}

#[test]
fn matrices_as_cores_batched() {
    let a = array(&[6, 3, 4], |i| (i % 7) as f32);
    let b = array(&[4, 2], |i| i as f32 - 3.0);
    let mut want = ArrayD::<f32>::zeros(IxDyn(&[6, 3, 2]));
    for t in 0..6 {
        for i in 0..3 {
            for j in 0..2 {
                want[[t, i, j]] = (0..4).map(|k| a[[t, i, k]] * b[[k, j]]).sum();
            }
        }
    }
    everywhere!(matmul(&a, &b), want);
}

#[test]
fn early_returns_and_several_outputs() {
    let x = array(&[5, 6], |i| ((i * 7919) % 13) as f32);
    let want_idx = Array::from_shape_fn(IxDyn(&[5]), |ix| {
        let row: Vec<f32> = (0..6).map(|j| x[[ix[0], j]]).collect();
        (0..6).fold(0usize, |best, j| if row[j] > row[best] { j } else { best }) as u32
    });
    everywhere!(argmax(&x), want_idx);
    let empty = array(&[2, 0], |_| 0.0);
    everywhere!(argmax(&empty), Array::from_elem(IxDyn(&[2]), u32::MAX));
    let (z, sd) = standardize::cpu(&x).unwrap();
    assert_eq!((z.shape(), sd.shape()), (&[5, 6][..], &[5][..]));
    for r in 0..5 {
        let mean: f32 = (0..6).map(|j| z[[r, j]]).sum::<f32>() / 6.0;
        assert!(mean.abs() < 1e-5 && sd[[r]] > 0.0, "row {r}: mean {mean}");
    }
    everywhere!(standardize(&x), (z, sd));
}

#[test]
fn several_scalar_outputs_are_returned_as_a_tuple() {
    let x = array(&[3, 4, 6], |i| ((i * 7) % 11) as f32 - 5.0);
    let mut best = ArrayD::<f32>::zeros(IxDyn(&[3, 4]));
    let mut at = ArrayD::<u32>::zeros(IxDyn(&[3, 4]));
    for i in 0..3 {
        for j in 0..4 {
            let row: Vec<f32> = (0..6).map(|k| x[[i, j, k]]).collect();
            let k = (0..6).fold(0, |b, k| if row[k] > row[b] { k } else { b });
            (best[[i, j]], at[[i, j]]) = (row[k], k as u32);
        }
    }
    everywhere!(max_at(&x), (best.clone(), at.clone()));
    // Along the first axis, and an empty core.
    let (b0, a0) = Device::cpu().scope(|| max_at::along(0, &x)).unwrap();
    assert_eq!((b0.shape(), a0.shape()), (&[4, 6][..], &[4, 6][..]));
    assert_eq!(a0[[1, 2]], (0..3).fold(0, |b, i| if x[[i, 1, 2]] > x[[b, 1, 2]] { i } else { b }) as u32);
    let empty = array(&[2, 0], |_| 0.0);
    let (b, a) = max_at::cpu(&empty).unwrap();
    assert_eq!((b[[0]], a[[1]]), (f32::NEG_INFINITY, u32::MAX));
    assert_eq!(max_at::simulate(&empty).unwrap(), max_at::cpu(&empty).unwrap());
    // On the CPU device, both results stay in its memory.
    let d = gpu_runtime::DeviceArray::from_array_on(&Device::cpu(), &x).unwrap();
    let (db, da) = max_at::device(&d).unwrap();
    assert_eq!((db.to_array().unwrap(), da.to_array().unwrap()), (best, at));
}

#[test]
fn softmax_rows_sum_to_one() {
    let x = array(&[64, 33], |i| ((i * 31) % 17) as f32 / 4.0);
    let y = softmax::parallel(&x).unwrap();
    for r in 0..64 {
        let s: f32 = (0..33).map(|j| y[[r, j]]).sum();
        assert!((s - 1.0).abs() < 1e-5, "row {r}: {s}");
    }
    everywhere!(softmax(&x), y);
}

#[test]
fn empty_loop_dimensions_give_empty_results() {
    let a = array(&[0, 3], |_| 1.0);
    let b = array(&[3], |_| 1.0);
    everywhere!(dot(&a, &b), ArrayD::<f32>::zeros(IxDyn(&[0])));
}

#[test]
fn shapes_are_checked() {
    let a = array(&[2, 3], |_| 1.0);
    let b = array(&[4], |_| 1.0);
    let e = dot::cpu(&a, &b).unwrap_err();
    assert!(
        matches!(&e, Error::CoreSizeMismatch { function: "dot", dim: "n", sizes } if sizes == &[("a", 3), ("b", 4)])
    );
    assert_eq!(e.to_string(), "`dot`: the core dimension `n` has different sizes: 3 in `a`, 4 in `b`");
    let e = dot::cpu(2.0f32, &b).unwrap_err();
    assert!(matches!(e, Error::CoreRank { function: "dot", param: "a", .. }), "{e:?}");
    let e = dot::cpu(&array(&[2, 3], |_| 0.0), &array(&[3, 3], |_| 0.0)).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { function: "dot", .. }), "{e:?}");
    let e = matmul::cpu(&array(&[2, 3], |_| 0.0), &array(&[4, 2], |_| 0.0)).unwrap_err();
    assert!(matches!(e, Error::CoreSizeMismatch { dim: "n", .. }), "{e:?}");
}

#[test]
fn an_output_size_no_input_fixes_is_given_at_the_call() {
    let x = array(&[2, 3], |i| i as f32);
    let e = tile::cpu(&x).unwrap_err();
    assert!(matches!(e, Error::UnsizedCoreDim { function: "tile", dim: "m", output: "out" }), "{e:?}");
    assert!(e.to_string().contains("tile::sized(&[(\"m\", size)], ..)"), "{e}");
    let want = Array::from_shape_fn(IxDyn(&[2, 5]), |ix| x[[ix[0], ix[1] % 3]]);
    Device::cpu().scope(|| {
        assert_eq!(tile::sized(&[("m", 5)], &x).unwrap(), want);
        let e = tile::sized(&[("k", 5)], &x).unwrap_err();
        assert!(matches!(e, Error::UnknownCoreDim { .. }), "{e:?}");
        let e = tile::sized(&[("n", 4)], &x).unwrap_err();
        assert!(matches!(e, Error::CoreSizeMismatch { dim: "n", .. }), "{e:?}");
    });
    // Sizes go with every place a call runs.
    let cpu = Device::cpu();
    for how in [Where::Cpu, Where::Parallel, Where::On(&cpu), Where::Simulate] {
        assert_eq!(tile::with(how.sized(&[("m", 5)]), &x).unwrap(), want, "{how:?}");
        let e = tile::with(how, &x).unwrap_err();
        assert!(matches!(e, Error::UnsizedCoreDim { dim: "m", .. }), "{how:?}: {e:?}");
    }
    // `along` is a reduction's: `tile`'s layout is not one.
    let e = tile::with(Where::Cpu.sized(&[("m", 5)]).along(0), &x).unwrap_err();
    assert!(matches!(e, Error::NotAReduction { function: "tile", .. }), "{e:?}");
    assert!(e.to_string().contains("cannot be taken along an axis"), "{e}");
}

#[test]
fn an_index_past_the_core_is_a_fault_not_the_next_core() {
    // Row 1 of 3 reads one past its core; the next row's data is there, and must not be read.
    let x = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let e = read_at::cpu(&x, &Array::from_shape_vec(IxDyn(&[3]), vec![0usize, 4, 1]).unwrap()).unwrap_err();
    match &e {
        Error::KernelFault { function: "read_at", index: 1, message } => {
            assert_eq!(message, "index out of bounds: the len is 4 but the index is 4");
        }
        other => panic!("expected a fault at loop index 1, got {other:?}"),
    }
    let at = Array::from_shape_vec(IxDyn(&[3]), vec![0usize, 4, 1]).unwrap();
    assert_eq!(read_at::simulate(&x, &at).unwrap_err().to_string(), e.to_string());
    assert_eq!(read_at::parallel(&x, &at).unwrap_err().to_string(), e.to_string());
    let ok = Array::from_shape_vec(IxDyn(&[3]), vec![3usize, 0, 2]).unwrap();
    assert_eq!(read_at::simulate(&x, &ok).unwrap().into_raw_vec_and_offset().0, vec![3, 4, 10]);
}

/// Pseudo-random loop shapes (broadcast against each other, with empty and size-1 axes)
/// and core sizes: every path against a naive loop over NumPy's broadcast.
#[test]
fn random_broadcasts_match_a_naive_loop() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n) as usize
    };
    for case in 0..40 {
        let ndim = next(4);
        let full: Vec<usize> = (0..ndim).map(|_| next(4)).collect();
        // Each input keeps a suffix of the loop shape, with some axes set to 1.
        let loop_of = |next: &mut dyn FnMut(u64) -> usize| -> Vec<usize> {
            let keep = next(ndim as u64 + 1);
            full[ndim - keep..].iter().map(|&d| if next(3) == 0 { 1 } else { d }).collect()
        };
        let (la, lb) = (loop_of(&mut next), loop_of(&mut next));
        let n = 1 + next(9);
        let shape_a: Vec<usize> = la.iter().copied().chain([n]).collect();
        let shape_b: Vec<usize> = lb.iter().copied().chain([n]).collect();
        let a = array(&shape_a, |i| ((i * 37) % 19) as f32 - 9.0);
        let b = array(&shape_b, |i| ((i * 11) % 7) as f32);
        // The broadcast loop shape, as NumPy gives it.
        let nd = la.len().max(lb.len());
        let pad =
            |s: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, nd - s.len()).chain(s.iter().copied()).collect() };
        let (pa, pb) = (pad(&la), pad(&lb));
        let lshape: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| if x == 1 { y } else { x }).collect();
        let want = ArrayD::from_shape_fn(IxDyn(&lshape), |ix| {
            let ix = ix.as_array_view().to_vec();
            // Input with padded loop shape `p` and `keep` loop axes of its own, core index `k`.
            let index = |p: &[usize], keep: usize, k: usize| -> Vec<usize> {
                ix.iter().zip(p).map(|(&i, &d)| if d == 1 { 0 } else { i }).skip(nd - keep).chain([k]).collect()
            };
            (0..n).map(|k| a[index(&pa, la.len(), k).as_slice()] * b[index(&pb, lb.len(), k).as_slice()]).sum::<f32>()
        });
        assert_eq!(dot::cpu(&a, &b).unwrap(), want, "case {case}: {shape_a:?} · {shape_b:?}");
        everywhere!(dot(&a, &b), want);
    }
}

/// Device arrays of the CPU device: the call runs on the host, reads them in place and,
/// with `name::device`, leaves its results in the CPU device's memory, so a chain of calls
/// stays there; their shapes broadcast as host arrays do.
#[test]
fn the_cpu_devices_arrays_in_and_out() {
    use gpu_runtime::{DeviceArray, DeviceVec};
    let cpu = Device::cpu();
    let a = array(&[6, 5, 7], |i| (i % 13) as f32 - 6.0);
    let b = array(&[5, 7], |i| (i % 4) as f32 * 0.5);
    let (da, db) = (DeviceArray::from_array_on(&cpu, &a).unwrap(), DeviceArray::from_array_on(&cpu, &b).unwrap());
    assert_eq!(da.shape(), &[6, 5, 7]);
    let want = dot::cpu(&a, &b).unwrap();
    assert_eq!(dot(&da, &db).unwrap(), want);
    assert_eq!(dot(&da, &b).unwrap(), want, "a device array beside a host array");
    assert_eq!(dot::simulate(&da, &db).unwrap(), want);
    let d = dot::device(&da, &db).unwrap();
    assert_eq!(d.device().id(), gpu_runtime::DeviceId::Cpu);
    assert_eq!(d.shape(), &[6, 5]);
    assert_eq!(d.to_array().unwrap(), want);
    // Two outputs stay on the device, and feed the next call.
    let (z, sd) = standardize::device(&da).unwrap();
    assert_eq!((z.shape(), sd.shape()), (&[6, 5, 7][..], &[6, 5][..]));
    let (zw, sdw) = standardize::cpu(&a).unwrap();
    assert_eq!((z.to_array().unwrap(), sd.to_array().unwrap()), (zw.clone(), sdw));
    assert_eq!(softmax::device(&z).unwrap().to_array().unwrap(), softmax::cpu(&zw).unwrap());
    // A loop dimension broadcast in part, and the core taken along another axis.
    let c = array(&[6, 1, 7], |i| i as f32);
    let dc = DeviceArray::from_array_on(&cpu, &c).unwrap();
    assert_eq!(dot(&dc, &db).unwrap(), dot::cpu(&c, &b).unwrap());
    let want = Device::cpu().scope(|| argmax::along(0, &a)).unwrap();
    assert_eq!(argmax::along(0, &da).unwrap(), want);
    // A flat vector or a slice of one is one axis.
    let v = DeviceVec::from_slice_on(&cpu, &[3.0f32, 4.0, 12.0]).unwrap();
    assert_eq!(dot(&v, &v).unwrap().into_raw_vec_and_offset().0, vec![169.0]);
    assert_eq!(dot(v.slice(1..3).unwrap(), v.slice(0..2).unwrap()).unwrap()[[]], 12.0 + 48.0);
    // The core sizes are checked as for host arrays.
    let short = DeviceArray::<f32>::zeros_on(&cpu, &[6, 5, 6]).unwrap();
    assert!(matches!(dot(&short, &db), Err(Error::CoreSizeMismatch { dim: "n", .. })));
}

#[test]
fn device_arrays_are_shaped_and_reshaped() {
    use gpu_runtime::ndarray::Array2;
    use gpu_runtime::{DeviceArray, DeviceVec};
    let cpu = Device::cpu();
    // A transposed view is copied in C order.
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as i32);
    let t = DeviceArray::from_array_on(&cpu, &m.t()).unwrap();
    assert_eq!(t.shape(), &[4, 3]);
    assert_eq!(t.to_array().unwrap(), m.t().into_dyn());
    assert_eq!(t.as_vec().to_vec().unwrap(), m.t().iter().copied().collect::<Vec<_>>());
    let flat = t.into_shape(&[12]).unwrap();
    assert_eq!((flat.ndim(), flat.len(), flat.is_empty()), (1, 12, false));
    assert!(matches!(flat.into_shape(&[5, 3]), Err(Error::BadShape { len: 12, .. })));
    let v = DeviceVec::<f64>::zeros_on(&cpu, 6).unwrap();
    let a = DeviceArray::from_vec(v, &[2, 0, 3]);
    assert!(matches!(a, Err(Error::BadShape { len: 6, .. })), "{a:?}");
    let z = DeviceArray::<f64>::zeros_on(&cpu, &[2, 0, 3]).unwrap();
    assert!(z.is_empty());
    assert_eq!(z.to_array().unwrap().shape(), &[2, 0, 3]);
    assert!(matches!(DeviceArray::<u8>::zeros_on(&cpu, &[usize::MAX, 2]), Err(Error::BadShape { .. })));
    assert_eq!(format!("{z:?}"), "DeviceArray<f64>[2, 0, 3] on the CPU");
}

/// More loop indices than the simulator's threads (it runs at most two blocks of 256):
/// each thread takes several through the kernel's grid-stride loop, as on a GPU with a
/// capped grid, and every index is computed once, in its place; a fault past the first
/// stride is reported at its own loop index.
#[test]
fn the_kernels_grid_stride_loop_covers_every_loop_index() {
    let rows = 2_000;
    let a = array(&[rows, 9], |i| (i % 17) as f32 - 8.0);
    let b = array(&[rows, 9], |i| (i % 5) as f32);
    let mut want = ArrayD::<f32>::zeros(IxDyn(&[rows]));
    for r in 0..rows {
        want[[r]] = (0..9).map(|k| a[[r, k]] * b[[r, k]]).sum();
    }
    everywhere!(dot(&a, &b), want);
    let x = Array::from_shape_fn(IxDyn(&[rows, 4]), |ix| (ix[0] * 4 + ix[1]) as f32);
    let (best, at) = max_at::simulate(&x).unwrap();
    assert_eq!(at, ArrayD::from_elem(IxDyn(&[rows]), 3u32));
    assert_eq!(best, Array::from_shape_fn(IxDyn(&[rows]), |ix| (ix[0] * 4 + 3) as f32));
    let data: Vec<i32> = (0..rows as i32 * 3).collect();
    let x = Array::from_shape_vec(IxDyn(&[rows, 3]), data).unwrap();
    let mut at = ArrayD::<usize>::zeros(IxDyn(&[rows]));
    at[[1_700]] = 3;
    let e = read_at::simulate(&x, &at).unwrap_err();
    assert_eq!(e.to_string(), read_at::cpu(&x, &at).unwrap_err().to_string());
    assert!(matches!(e, Error::KernelFault { index: 1_700, .. }), "{e}");
}

/// `examples/gufuncs.rs`'s functions in the simulator (the kernel each compiles, run on the
/// host) give what they give on the CPU, bit for bit: the same operations in the same order.
#[test]
fn the_examples_gufuncs_in_the_simulator() {
    use gpu_runtime::ndarray::{Array, IxDyn};
    use gufunc_defs::example::*;
    let logits = Array::from_shape_fn(IxDyn(&[6, 300]), |ix| ((ix[0] * 131 + ix[1] * 7) % 97) as f32 / 10.0);
    assert_eq!(softmax::simulate(&logits).unwrap(), softmax::cpu(&logits).unwrap());
    assert_eq!(argmax::simulate(&logits).unwrap(), argmax::cpu(&logits).unwrap());
    let data = Array::from_shape_fn(IxDyn(&[5, 70]), |ix| (ix[0] as f64 + 1.0) * (ix[1] as f64).sqrt());
    assert_eq!(standardize::simulate(&data).unwrap(), standardize::cpu(&data).unwrap());
    let series = Array::from_shape_fn(IxDyn(&[3, 400]), |ix| ((ix[1] as f32) * 0.01).sin() + ix[0] as f32);
    assert_eq!(moving_average::simulate(&series, 50usize).unwrap(), moving_average::cpu(&series, 50usize).unwrap());
    let a = Array::from_shape_fn(IxDyn(&[40, 4, 3]), |ix| (ix[0] % 7 + ix[1] + ix[2]) as f32);
    let b = Array::from_shape_fn(IxDyn(&[3, 2]), |ix| ix[0] as f32 - ix[1] as f32);
    assert_eq!(matmul::simulate(&a, &b).unwrap(), matmul::cpu(&a, &b).unwrap());
    assert_eq!(dot::simulate(&a, &a).unwrap(), dot::cpu(&a, &a).unwrap());
}

/// A core that draws random numbers gives the random module's on every target.
#[test]
fn random_numbers_in_a_core() {
    let x = array(&[3, 50], |i| i as f32);
    let rows = Array::from_shape_vec(IxDyn(&[3]), vec![0u64, 1, 7]).unwrap();
    let mut want = x.clone();
    for (r, row) in [0u64, 1, 7].into_iter().enumerate() {
        for i in 0..50 {
            want[[r, i]] += gpu_runtime::random::uniform_f32(99, row, i as u64);
        }
    }
    everywhere!(add_noise(&x, &rows), want);
}

#[test]
fn into_writes_the_callers_arrays() {
    let cpu = Device::cpu();
    let x = array(&[3, 4, 6], |i| ((i * 7) % 11) as f32 - 5.0);
    let (best, at) = max_at::cpu(&x).unwrap();
    // Host arrays, one output and several, on the CPU device.
    cpu.scope(|| {
        let mut b = ArrayD::<f32>::zeros(IxDyn(&[3, 4]));
        let mut a = ArrayD::<u32>::zeros(IxDyn(&[3, 4]));
        max_at::into((&mut b, &mut a), &x).unwrap();
        assert_eq!((&b, &a), (&best, &at));
        // A view of other strides: the transposed loop shape takes transposed results.
        let mut t = Array::<u32, _>::zeros((4, 3));
        argmax::into(t.view_mut().reversed_axes(), &x).unwrap();
        assert_eq!(t.t().into_dyn(), at);
        // The CPU device's arrays.
        let mut d = gpu_runtime::DeviceArray::<u32>::zeros_on(&Device::cpu(), &[3, 4]).unwrap();
        argmax::into(&mut d, &x).unwrap();
        assert_eq!(d.to_array().unwrap(), at);
    });
    // A core dimension no input fixes takes its size from the output.
    let y = array(&[2, 3], |i| i as f32);
    let mut tiled = ArrayD::<f32>::zeros(IxDyn(&[2, 5]));
    cpu.scope(|| tile::into(&mut tiled, &y)).unwrap();
    assert_eq!(tiled, tile::with(Where::Cpu.sized(&[("m", 5)]), &y).unwrap());
    // Wrong shapes are errors, and nothing is written.
    let mut wrong = ArrayD::<u32>::from_elem(IxDyn(&[3, 5]), 9);
    let e = cpu.scope(|| argmax::into(&mut wrong, &x)).unwrap_err();
    assert!(matches!(e, Error::OutShape { function: "argmax", out: "out", .. }), "{e:?}");
    assert!(wrong.iter().all(|&v| v == 9));
    let mut flat = ArrayD::<f32>::zeros(IxDyn(&[]));
    let e = cpu.scope(|| tile::into(&mut flat, &y)).unwrap_err();
    assert!(matches!(e, Error::CoreRank { .. }), "{e:?}");
    // A fault leaves a host output as it was, wherever the call ran.
    let xi = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let at_ix = Array::from_shape_vec(IxDyn(&[3]), vec![0usize, 4, 1]).unwrap();
    let mut out = ArrayD::<i32>::from_elem(IxDyn(&[3]), -1);
    cpu.scope(|| {
        let e = read_at::into(&mut out, &xi, &at_ix).unwrap_err();
        assert!(matches!(e, Error::KernelFault { function: "read_at", index: 1, .. }), "{e:?}");
    });
    assert!(out.iter().all(|&v| v == -1));
}

#[test]
fn launch_on_the_cpu_devices_stream() {
    let stream = Device::cpu().new_stream().unwrap();
    let x = array(&[3, 4, 6], |i| ((i * 7) % 11) as f32 - 5.0);
    let pending = max_at::launch(&stream, &x).unwrap();
    assert_eq!(pending.wait().unwrap(), max_at::cpu(&x).unwrap());
    let xi = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let at_ix = Array::from_shape_vec(IxDyn(&[3]), vec![0usize, 4, 1]).unwrap();
    let e = read_at::launch(&stream, &xi, &at_ix).unwrap().wait().unwrap_err();
    assert!(matches!(e, Error::KernelFault { function: "read_at", index: 1, .. }), "{e:?}");
}

#[test]
fn arrays_are_one_axis() {
    let (a, b) = ([1.0f32, 2.0, 3.0], [4.0f32, 5.0, 6.0]);
    assert_eq!(dot::cpu(&a, &b).unwrap()[[]], 32.0);
    assert_eq!(dot::simulate(&a, &b).unwrap()[[]], 32.0);
    assert_eq!(Device::cpu().scope(|| dot(&a, &[1.0f32; 3])).unwrap()[[]], 6.0);
    let mut out = ArrayD::<f32>::zeros(IxDyn(&[]));
    Device::cpu().scope(|| dot::into(&mut out, &a, &b)).unwrap();
    assert_eq!(out[[]], 32.0);
}
