//! `#[guvectorize]` on the GPU: every function of `gufunc_defs` against its CPU run, on
//! sizes that fill the GPU, with broadcast and empty loop dimensions, output sizes given
//! at the call, and an index past a core faulting as on the CPU.

mod gufunc_defs;

use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
use gpu_runtime::{Device, Error};
use gufunc_defs::*;

fn array(shape: &[usize], f: impl Fn(usize) -> f32) -> ArrayD<f32> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

/// Within a few ulps of the larger (sums on the GPU contract into fused multiply-adds).
fn close(a: &ArrayD<f32>, b: &ArrayD<f32>, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}");
    for (x, y) in a.iter().zip(b) {
        let tol = 1e-5 * x.abs().max(y.abs()).max(1.0);
        assert!((x - y).abs() <= tol || (x.is_nan() && y.is_nan()), "{what}: {x} vs {y}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_form_matches_the_cpu() {
    let gpu = Device::cuda(0).unwrap();
    // 200 000 loop indices: 782 blocks of 256 threads.
    let a = array(&[400, 500, 7], |i| ((i * 7919) % 23) as f32 - 11.0);
    let b = array(&[500, 7], |i| (i % 5) as f32 * 0.25);
    close(&dot(&a, &b).unwrap(), &dot::parallel(&a, &b).unwrap(), "dot");
    close(&dot::on(&gpu, &a, &b).unwrap(), &dot::cpu(&a, &b).unwrap(), "dot on");

    let x = Array::from_shape_fn(IxDyn(&[1000, 37]), |ix| (ix[0] as f64).sin() + ix[1] as f64);
    let by = Array::from_shape_fn(IxDyn(&[3, 1]), |ix| ix[0] as f64 - 1.0);
    assert_eq!(shift(&x, &by).unwrap(), shift::cpu(&x, &by).unwrap());
    assert_eq!(shift(&x, 2.5).unwrap(), shift::cpu(&x, 2.5).unwrap());

    let ma = array(&[2000, 5, 3], |i| (i % 9) as f32);
    let mb = array(&[2000, 3, 4], |i| (i % 4) as f32 - 1.5);
    close(&matmul(&ma, &mb).unwrap(), &matmul::cpu(&ma, &mb).unwrap(), "matmul");

    let r = array(&[3000, 129], |i| ((i * 31) % 257) as f32);
    assert_eq!(argmax(&r).unwrap(), argmax::cpu(&r).unwrap());
    assert_eq!(max_at(&r).unwrap(), max_at::cpu(&r).unwrap(), "two returned outputs");
    let (best, at) = max_at::device(&gpu_runtime::DeviceArray::from_array(&r).unwrap()).unwrap();
    assert_eq!((best.to_array().unwrap(), at.to_array().unwrap()), max_at::cpu(&r).unwrap());
    let (z, sd) = standardize(&r).unwrap();
    let (zc, sdc) = standardize::cpu(&r).unwrap();
    close(&z, &zc, "standardize");
    close(&sd, &sdc, "standard deviations");
    close(&softmax(&r).unwrap(), &softmax::cpu(&r).unwrap(), "softmax");
    let tiled = Array::from_shape_fn(IxDyn(&[3000, 300]), |ix| r[[ix[0], ix[1] % 129]]);
    assert_eq!(tile::sized(&[("m", 300)], &r).unwrap(), tiled);
    // Empty loop dimensions: no launch, empty results.
    let none = array(&[0, 7], |_| 0.0);
    assert_eq!(dot(&none, &b.slice(gpu_runtime::ndarray::s![0, ..]).to_owned()).unwrap().shape(), &[0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_index_past_a_core_faults_as_on_the_cpu() {
    let x = Array::from_shape_fn(IxDyn(&[100_000, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let mut at = vec![1usize; 100_000];
    at[77_777] = 4;
    at[90_000] = 9;
    let at = Array::from_shape_vec(IxDyn(&[100_000]), at).unwrap();
    let on_gpu = read_at(&x, &at).unwrap_err();
    let on_cpu = read_at::cpu(&x, &at).unwrap_err();
    assert!(matches!(on_gpu, Error::KernelFault { function: "read_at", index: 77_777, .. }), "{on_gpu:?}");
    assert_eq!(on_gpu.to_string(), on_cpu.to_string());
    // Within the cores it reads each row's own element.
    let ok = Array::from_shape_fn(IxDyn(&[100_000]), |ix| ix[0] % 4);
    let got = read_at(&x, &ok).unwrap();
    assert!(got.iter().enumerate().all(|(t, &v)| v == (t * 4 + t % 4) as i32));
}

#[gpu_runtime::vectorize(identity = 0)]
fn add_i64(a: i64, b: i64) -> i64 {
    a + b
}

#[gpu_runtime::vectorize]
fn max_f32(a: f32, b: f32) -> f32 {
    a.max(b)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_along_axes_match_ndarray() {
    use gpu_runtime::ndarray::Axis;
    let a = Array::from_shape_fn(IxDyn(&[300, 200, 30]), |ix| ((ix[0] * 7 + ix[1] * 3 + ix[2]) % 101) as i64 - 50);
    for axis in 0..3 {
        assert_eq!(add_i64::reduce_axis(&a, axis).unwrap(), a.sum_axis(Axis(axis)), "axis {axis}");
    }
    assert_eq!(add_i64::reduce_axes(&a, &[0, 2]).unwrap(), a.sum_axis(Axis(2)).sum_axis(Axis(0)));
    let f = a.mapv(|v| v as f32 * 0.25);
    let want = f.fold_axis(Axis(1), f32::NEG_INFINITY, |acc, &v| acc.max(v));
    assert_eq!(max_f32::reduce_axis(&f, 1).unwrap(), want);
    let empty = Array::<i64, _>::zeros(IxDyn(&[4, 0]));
    assert_eq!(add_i64::reduce_axis(&empty, 1).unwrap(), Array::zeros(IxDyn(&[4])));
    assert!(matches!(max_f32::reduce_axis(&Array::<f32, _>::zeros(IxDyn(&[0, 3])), 0), Err(Error::EmptyReduce { .. })));
    // A fused map-reduce (argmax with its index) along the first axis.
    let want: ArrayD<u32> = f.map_axis(Axis(0), |col| {
        (0..col.len()).fold(0usize, |best, i| if col[i] > col[best] { i } else { best }) as u32
    });
    assert_eq!(argmax::along(0, &f).unwrap(), want);
}

/// Device arrays in, results left on the GPU, and chains of calls that never leave it; a
/// partly broadcast device array, a core taken along another axis, a fault found among
/// device inputs, and arrays of two devices in one call refused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_arrays_stay_on_the_gpu() {
    use gpu_runtime::{DeviceArray, DeviceId, DeviceVec};
    let gpu = Device::cuda(0).unwrap();
    let a = array(&[300, 400, 9], |i| ((i * 7919) % 23) as f32 - 11.0);
    let b = array(&[400, 9], |i| (i % 5) as f32 * 0.25);
    let (da, db) = (DeviceArray::from_array_on(&gpu, &a).unwrap(), DeviceArray::from_array_on(&gpu, &b).unwrap());
    let want = dot::cpu(&a, &b).unwrap();
    close(&dot(&da, &db).unwrap(), &want, "dot of device arrays");
    close(&dot(&da, &b).unwrap(), &want, "a device array beside a host array");
    close(&dot::cpu(&da, &db).unwrap(), &want, "device arrays on the CPU target (copied)");
    let d = dot::device(&da, &db).unwrap();
    assert_eq!((d.device().id(), d.shape()), (DeviceId::Cuda(0), &[300, 400][..]));
    close(&d.to_array().unwrap(), &want, "dot::device");

    // A chain: standardize, then softmax of the standardized rows, all on the GPU.
    let r = array(&[5000, 129], |i| ((i * 31) % 257) as f32);
    let dr = DeviceArray::from_array_on(&gpu, &r).unwrap();
    let (z, sd) = standardize::device(&dr).unwrap();
    let (zw, sdw) = standardize::cpu(&r).unwrap();
    close(&z.to_array().unwrap(), &zw, "standardize::device");
    close(&sd.to_array().unwrap(), &sdw, "standard deviations");
    close(&softmax::device(&z).unwrap().to_array().unwrap(), &softmax::cpu(&zw).unwrap(), "a chain");
    let m = DeviceArray::from_array_on(&gpu, &array(&[2000, 5, 3], |i| (i % 9) as f32)).unwrap();
    let n = DeviceArray::from_array_on(&gpu, &array(&[3, 4], |i| i as f32 - 6.0)).unwrap();
    let c = matmul::device(&m, &n).unwrap();
    assert_eq!(c.shape(), &[2000, 5, 4]);
    let want = matmul::cpu(&m.to_array().unwrap(), &n.to_array().unwrap()).unwrap();
    close(&c.to_array().unwrap(), &want, "matmul with a broadcast device matrix");

    // (30, 1, 9) against a loop of (30, 400): broadcast in part.
    let p = array(&[30, 1, 9], |i| i as f32 * 0.5);
    let dp = DeviceArray::from_array_on(&gpu, &p).unwrap();
    let b2 = array(&[30, 400, 9], |i| (i % 7) as f32);
    close(&dot(&dp, &b2).unwrap(), &dot::cpu(&p, &b2).unwrap(), "a partly broadcast device array");
    // The core along the first axis.
    let want = Device::cpu().scope(|| argmax::along(0, &r)).unwrap();
    assert_eq!(argmax::along(0, &dr).unwrap(), want);
    // A flat device vector is one axis.
    let v = DeviceVec::from_slice_on(&gpu, &[3.0f32, 4.0, 12.0]).unwrap();
    assert_eq!(dot(&v, &v).unwrap()[[]], 169.0);

    // A fault among device inputs: the first failing loop index, as on the CPU.
    let x = Array::from_shape_fn(IxDyn(&[50_000, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let mut at = Array::from_elem(IxDyn(&[50_000]), 1usize);
    at[[40_001]] = 4;
    let (dx, dat) = (DeviceArray::from_array_on(&gpu, &x).unwrap(), DeviceArray::from_array_on(&gpu, &at).unwrap());
    let e = read_at(&dx, &dat).unwrap_err();
    assert!(matches!(e, Error::KernelFault { function: "read_at", index: 40_001, .. }), "{e:?}");
    assert_eq!(e.to_string(), read_at::cpu(&x, &at).unwrap_err().to_string());

    // Data never moves between devices behind the caller's back.
    let on_cpu = DeviceArray::from_array_on(&Device::cpu(), &b).unwrap();
    assert!(matches!(dot(&da, &on_cpu), Err(Error::DeviceMismatch { .. })));
    assert!(matches!(dot::on(&Device::cpu(), &da, &b), Err(Error::DeviceMismatch { .. })));
    let e = dot::device(&da, &on_cpu).unwrap_err();
    assert!(e.to_string().contains("`a` on device 0") && e.to_string().contains("`b` on the CPU"), "{e}");
}

/// `examples/gufuncs.rs`'s functions on the GPU against the simulator: bit for bit, but
/// for `softmax`'s `exp` (libdevice's on the GPU, the host's in the simulator: within a
/// few ulp).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_examples_gufuncs_on_the_gpu() {
    use gpu_runtime::ndarray::{Array, IxDyn};
    use gufunc_defs::example::*;
    let logits = Array::from_shape_fn(IxDyn(&[64, 1000]), |ix| ((ix[0] * 131 + ix[1] * 7) % 97) as f32 / 10.0);
    close(&softmax(&logits).unwrap(), &softmax::simulate(&logits).unwrap(), "softmax");
    assert_eq!(argmax(&logits).unwrap(), argmax::simulate(&logits).unwrap());
    let data = Array::from_shape_fn(IxDyn(&[128, 500]), |ix| (ix[0] as f64 + 1.0) * (ix[1] as f64).sqrt());
    assert_eq!(standardize(&data).unwrap(), standardize::simulate(&data).unwrap());
    let series = Array::from_shape_fn(IxDyn(&[16, 10_000]), |ix| ((ix[1] as f32) * 0.01).sin() + ix[0] as f32);
    assert_eq!(moving_average(&series, 50usize).unwrap(), moving_average::simulate(&series, 50usize).unwrap());
    let a = Array::from_shape_fn(IxDyn(&[10_000, 4, 3]), |ix| (ix[0] % 7 + ix[1] + ix[2]) as f32);
    let b = Array::from_shape_fn(IxDyn(&[3, 2]), |ix| ix[0] as f32 - ix[1] as f32);
    assert_eq!(matmul(&a, &b).unwrap(), matmul::simulate(&a, &b).unwrap());
}

/// Random numbers in a core on the GPU: the host's, bit for bit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_numbers_in_a_core_on_the_gpu() {
    let x = array(&[1000, 64], |i| (i % 17) as f32);
    let rows = Array::from_shape_vec(IxDyn(&[1000]), (0..1000u64).collect()).unwrap();
    assert_eq!(add_noise(&x, &rows).unwrap(), add_noise::cpu(&x, &rows).unwrap());
}

/// The complete forms on the GPU: `with` (where, sizes, axis), `into` with host and device
/// outputs (the kernel writing a device array in place, a fault leaving a host output
/// alone), `reduce_axis_with`, and `reduce_init`/`reduce_into` with the result left in a
/// device array.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_complete_forms_on_the_gpu() {
    use gpu_runtime::ndarray::Axis;
    use gpu_runtime::{DeviceArray, DeviceVec, Where};
    let gpu = Device::cuda(0).unwrap();
    let x = array(&[300, 400, 6], |i| ((i * 7) % 11) as f32 - 5.0);
    let (best, at) = max_at::cpu(&x).unwrap();
    for how in [Where::Default, Where::On(&gpu), Where::Simulate, Where::Parallel] {
        assert_eq!(max_at::with(how, &x).unwrap(), (best.clone(), at.clone()), "{how:?}");
    }
    let y = array(&[1000, 3], |i| i as f32);
    assert_eq!(
        tile::with(Where::On(&gpu).sized(&[("m", 7)]), &y).unwrap(),
        tile::with(Where::Cpu.sized(&[("m", 7)]), &y).unwrap()
    );
    let (b0, _) = max_at::with(Where::On(&gpu).along(0), &x).unwrap();
    assert_eq!(b0, x.fold_axis(Axis(0), f32::NEG_INFINITY, |m, &v| m.max(v)));

    // `into`: host outputs, a device output written in place, and both at once.
    let mut hb = ArrayD::<f32>::zeros(IxDyn(&[300, 400]));
    let mut ha = ArrayD::<u32>::zeros(IxDyn(&[300, 400]));
    max_at::into((&mut hb, &mut ha), &x).unwrap();
    assert_eq!((&hb, &ha), (&best, &at));
    let mut da = DeviceArray::<u32>::zeros_on(&gpu, &[300, 400]).unwrap();
    let dx = DeviceArray::from_array_on(&gpu, &x).unwrap();
    argmax::into(&mut da, &dx).unwrap();
    assert_eq!(da.to_array().unwrap(), at);
    let mut hb2 = ArrayD::<f32>::zeros(IxDyn(&[300, 400]));
    let mut da2 = DeviceArray::<u32>::zeros_on(&gpu, &[300, 400]).unwrap();
    max_at::into((&mut hb2, &mut da2), &dx).unwrap();
    assert_eq!((hb2, da2.to_array().unwrap()), (best.clone(), at.clone()));
    let mut tiled = ArrayD::<f32>::zeros(IxDyn(&[1000, 7]));
    tile::into(&mut tiled, &y).unwrap();
    assert_eq!(tiled, tile::with(Where::Cpu.sized(&[("m", 7)]), &y).unwrap());
    // A fault: the host output stays as it was; the device array comes back to its owner.
    let xi = Array::from_shape_fn(IxDyn(&[50_000, 4]), |ix| (ix[0] * 4 + ix[1]) as i32);
    let mut at_ix = Array::from_elem(IxDyn(&[50_000]), 1usize);
    at_ix[[40_001]] = 4;
    let mut out = ArrayD::<i32>::from_elem(IxDyn(&[50_000]), -1);
    let e = read_at::into(&mut out, &xi, &at_ix).unwrap_err();
    assert!(matches!(e, Error::KernelFault { function: "read_at", index: 40_001, .. }), "{e:?}");
    assert!(out.iter().all(|&v| v == -1));
    let mut dout = DeviceArray::<i32>::zeros_on(&gpu, &[50_000]).unwrap();
    assert!(read_at::into(&mut dout, &xi, &at_ix).is_err());
    assert_eq!((dout.len(), dout.shape()), (50_000, &[50_000][..]));
    read_at::into(&mut dout, &xi, &Array::from_elem(IxDyn(&[50_000]), 2usize)).unwrap();
    assert!(dout.to_array().unwrap().iter().enumerate().all(|(t, &v)| v == (t * 4 + 2) as i32));

    // `launch` on streams: several calls in flight at once, each waited for.
    let (s1, s2) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let p1 = max_at::launch(&s1, &x).unwrap();
    let p2 = argmax::launch(&s2, &dx).unwrap();
    let p3 = read_at::launch(&s1, &xi, &at_ix).unwrap();
    assert_eq!(p2.wait().unwrap(), at);
    assert_eq!(p1.wait().unwrap(), (best.clone(), at.clone()));
    let e = p3.wait().unwrap_err();
    assert!(matches!(e, Error::KernelFault { function: "read_at", index: 40_001, .. }), "{e:?}");
    // A handle dropped without `wait` waits; the stream goes on.
    drop(argmax::launch(&s1, &x).unwrap());
    assert_eq!(argmax::launch(&s1, &x).unwrap().wait().unwrap(), at);
    let empty = array(&[0, 6], |_| 0.0);
    assert_eq!(argmax::launch(&s2, &empty).unwrap().wait().unwrap().shape(), &[0]);

    // Reductions along axes, on a chosen device; a few long lines, too.
    let a = Array::from_shape_fn(IxDyn(&[40, 300, 20]), |ix| ((ix[0] * 7 + ix[1] * 3 + ix[2]) % 101) as i64 - 50);
    for how in [Where::On(&gpu), Where::Simulate, Where::Parallel] {
        assert_eq!(add_i64::reduce_axis_with(how, &a, 1).unwrap(), a.sum_axis(Axis(1)), "{how:?}");
    }
    let long = Array::from_shape_fn(IxDyn(&[3, 200_000]), |ix| (ix[1] % 13) as i64 - 6 + ix[0] as i64);
    assert_eq!(add_i64::reduce_axis_with(Where::On(&gpu), &long, 1).unwrap(), long.sum_axis(Axis(1)));

    // Numba's `init=` and `res=`.
    let v: Vec<i64> = (0..10_000_000).map(|i| i % 1000 - 400).collect();
    let total: i64 = v.iter().sum();
    assert_eq!(add_i64::reduce(&v).unwrap(), total);
    assert_eq!(add_i64::reduce_init(123, &v).unwrap(), total + 123);
    assert_eq!(add_i64::reduce_on(&gpu, &v[..100]).unwrap(), v[..100].iter().sum::<i64>());
    assert_eq!(add_i64::reduce_init(5, &v[..1]).unwrap(), v[0] + 5);
    assert_eq!(add_i64::reduce_init(5, &[] as &[i64]).unwrap(), 5);
    let mut res = DeviceVec::<i64>::zeros_on(&gpu, 1).unwrap();
    add_i64::reduce_into(&mut res, &v).unwrap();
    assert_eq!(res.to_vec().unwrap(), [total]);
    let dv = DeviceVec::from_slice_on(&gpu, &v).unwrap();
    add_i64::reduce_into(&mut res, &dv).unwrap();
    assert_eq!(res.to_vec().unwrap(), [total]);
    let f: Vec<f32> = (0..1_000_000).map(|i| ((i * 7919) % 10007) as f32).collect();
    let want = f.iter().copied().fold(-1.0f32, f32::max);
    assert_eq!(max_f32::reduce_init(-1.0, &f).unwrap(), want);
    assert_eq!(max_f32::reduce_init(1e9, &f).unwrap(), 1e9);
    let mut fres = DeviceVec::<f32>::zeros_on(&gpu, 1).unwrap();
    max_f32::reduce_into(&mut fres, &f).unwrap();
    assert_eq!(fres.to_vec().unwrap(), [want]);
    let mut host = [0.0f32];
    max_f32::reduce_into(&mut host, &f).unwrap();
    assert_eq!(host, [want]);
    // A result on the CPU device with the values on the GPU is refused.
    let mut cres = DeviceVec::<i64>::zeros_on(&Device::cpu(), 1).unwrap();
    assert!(matches!(add_i64::reduce_into(&mut cres, &dv), Err(Error::DeviceMismatch { .. })));
}
