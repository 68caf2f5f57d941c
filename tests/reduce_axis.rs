//! Reductions along axes without a GPU: `f::reduce_axis`/`reduce_axes` of reducible
//! vectorized functions against `ndarray`'s own `sum_axis`/`fold_axis` on pseudo-random
//! shapes (on the CPU device, and the generated fold kernel in the simulator), and fused
//! map-reduce with a `#[guvectorize]` function taken `along` an axis (a norm, a mean, an
//! argmax with its index). The GPU runs the same in `tests/gpu_gufunc.rs`.
mod gufunc_defs;

use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn};
use gpu_runtime::{Device, DeviceVec, Error, Where, guvectorize, vectorize};

#[vectorize(identity = 0)]
fn add_i64(a: i64, b: i64) -> i64 {
    a + b
}

#[vectorize]
fn max_f32(a: f32, b: f32) -> f32 {
    a.max(b)
}

#[vectorize]
fn div_i64(a: i64, b: i64) -> i64 {
    a / b
}

#[vectorize(target = "parallel", identity = 1)]
fn mul_u64(a: u64, b: u64) -> u64 {
    a.wrapping_mul(b)
}

/// The Euclidean norm of the core: a map (square) and a reduction (sum) in one pass.
#[guvectorize("(n)->()")]
fn norm(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x[i];
    }
    s.sqrt()
}

/// The mean of the core.
#[guvectorize("(n)->()")]
fn mean(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i];
    }
    s / x.len() as f64
}

/// A small deterministic generator (xorshift) for shapes and values.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }

    fn shape(&mut self) -> Vec<usize> {
        let ndim = 1 + self.below(4);
        (0..ndim).map(|_| self.below(7)).collect()
    }
}

#[test]
fn reduce_axis_matches_ndarray_on_random_shapes() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let cpu = Device::cpu();
    for case in 0..60 {
        let shape = g.shape();
        let n: usize = shape.iter().product();
        let ints: Vec<i64> = (0..n).map(|_| g.below(2001) as i64 - 1000).collect();
        let a = Array::from_shape_vec(IxDyn(&shape), ints).unwrap();
        let axis = g.below(shape.len() as u64);
        let want = a.sum_axis(Axis(axis));
        assert_eq!(cpu.scope(|| add_i64::reduce_axis(&a, axis)).unwrap(), want, "case {case}: {shape:?} axis {axis}");
        // A CPU-target function runs on the host whatever the default device.
        let u = a.mapv(|v| (v.unsigned_abs() % 5) + 1);
        let want_u = u.fold_axis(Axis(axis), 1u64, |acc, &v| acc.wrapping_mul(v));
        assert_eq!(mul_u64::reduce_axis(&u, axis).unwrap(), want_u, "case {case}");
        // Several axes at once, each once, in any order.
        if shape.len() >= 2 {
            let (x, y) = (0, shape.len() - 1);
            let want2 = a.sum_axis(Axis(y)).sum_axis(Axis(x));
            assert_eq!(cpu.scope(|| add_i64::reduce_axes(&a, &[y, x, y])).unwrap(), want2, "case {case}");
        }
        let f = a.mapv(|v| v as f32 * 0.5);
        if shape[axis] > 0 {
            let want_f = f.fold_axis(Axis(axis), f32::NEG_INFINITY, |acc, &v| acc.max(v));
            assert_eq!(cpu.scope(|| max_f32::reduce_axis(&f, axis)).unwrap(), want_f, "case {case}");
        } else {
            let e = cpu.scope(|| max_f32::reduce_axis(&f, axis)).unwrap_err();
            assert!(matches!(e, Error::EmptyReduce { function: "max_f32" }), "{e:?}");
        }
    }
}

#[test]
fn reduce_axis_runs_wherever_it_is_asked_to() {
    let mut g = Gen(0xD1B5_4A32_D192_ED03);
    let cpu = Device::cpu();
    for case in 0..20 {
        let shape = g.shape();
        let n: usize = shape.iter().product();
        let a = Array::from_shape_vec(IxDyn(&shape), (0..n).map(|_| g.below(201) as i64 - 100).collect()).unwrap();
        let axis = g.below(shape.len() as u64);
        let want = a.sum_axis(Axis(axis));
        for how in [Where::Cpu, Where::Parallel, Where::On(&cpu), Where::Simulate] {
            assert_eq!(add_i64::reduce_axis_with(how, &a, axis).unwrap(), want, "case {case}: {how:?}");
        }
        if shape.len() >= 2 {
            let want2 = a.sum_axis(Axis(shape.len() - 1)).sum_axis(Axis(0));
            for how in [Where::Cpu, Where::Parallel, Where::On(&cpu), Where::Simulate] {
                let got = add_i64::reduce_axes_with(how, &a, &[0, shape.len() - 1]).unwrap();
                assert_eq!(got, want2, "case {case}: {how:?}");
            }
        }
    }
    // A few long lines: on the CPU and in the simulator too, every line is folded.
    let long = Array::from_shape_fn(IxDyn(&[2, 70_000]), |ix| (ix[1] % 7) as i64 - 3 + ix[0] as i64);
    for how in [Where::Cpu, Where::Parallel, Where::On(&cpu), Where::Simulate] {
        assert_eq!(add_i64::reduce_axis_with(how, &long, 1).unwrap(), long.sum_axis(Axis(1)), "{how:?}");
    }
    // A function compiled for the host only has no kernel to simulate.
    let u = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| ix[1] as u64 + 1);
    let e = mul_u64::reduce_axis_with(Where::Simulate, &u, 1).unwrap_err();
    assert!(matches!(e, Error::NoKernel { .. }), "{e:?}");
    assert_eq!(mul_u64::reduce_axis_with(Where::Cpu, &u, 1).unwrap(), u.fold_axis(Axis(1), 1, |a, &v| a * v));
    // A gufunc of a reduction's layout taken along an axis, anywhere.
    let x = Array::from_shape_fn(IxDyn(&[3, 4]), |ix| ix[0] as f64 - ix[1] as f64);
    let want = x.mean_axis(Axis(0)).unwrap();
    for how in [Where::Cpu, Where::Parallel, Where::On(&cpu), Where::Simulate] {
        assert_eq!(mean::with(how.along(0), &x).unwrap(), want, "{how:?}");
    }
}

#[test]
fn reduce_takes_an_initial_value_and_a_result_array() {
    let cpu = Device::cpu();
    let v: Vec<i64> = (1..=100).collect();
    cpu.scope(|| {
        assert_eq!(add_i64::reduce_init(1000, &v).unwrap(), 6050);
        // An empty array gives `init`, with or without an identity.
        assert_eq!(add_i64::reduce_init(7, &[] as &[i64]).unwrap(), 7);
        assert_eq!(max_f32::reduce_init(-1.0, &[] as &[f32]).unwrap(), -1.0);
        assert!(matches!(max_f32::reduce(&[] as &[f32]).unwrap_err(), Error::EmptyReduce { .. }));
        // A scalar is one element.
        assert_eq!(add_i64::reduce_init(3, 4).unwrap(), 7);
        // Where combining `init` with the fold panics, the call fails as Rust would.
        let e = div_i64::reduce_init(1000, &[0i64]).unwrap_err();
        assert!(matches!(e, Error::KernelFault { function: "div_i64", .. }), "{e:?}");
        // The result into a host element or a device array.
        let mut host = [0i64];
        add_i64::reduce_into(&mut host, &v).unwrap();
        assert_eq!(host, [5050]);
        let mut dev = DeviceVec::<i64>::zeros(1).unwrap();
        add_i64::reduce_into(&mut dev, &v).unwrap();
        assert_eq!(dev.to_vec().unwrap(), [5050]);
        let mut two = [0i64; 2];
        let e = add_i64::reduce_into(&mut two, &v).unwrap_err();
        assert!(matches!(e, Error::LengthMismatch { .. }), "{e:?}");
        assert_eq!(two, [0, 0]);
    });
    assert_eq!(add_i64::reduce_on(&cpu, &v).unwrap(), 5050);
    // The CPU targets.
    let u: Vec<u64> = (1..=10).collect();
    assert_eq!(mul_u64::reduce_init(2, &u).unwrap(), 7_257_600);
    let mut r = [0u64];
    mul_u64::reduce_into(&mut r, &u).unwrap();
    assert_eq!(r, [3_628_800]);
}

#[test]
fn the_generated_fold_kernel_runs_in_the_simulator() {
    let a = Array::from_shape_fn(IxDyn(&[5, 300]), |ix| (ix[0] * 300 + ix[1]) as i64 - 700);
    assert_eq!(add_i64::reduce_axis_with(Where::Simulate, &a, 1).unwrap(), a.sum_axis(Axis(1)));
    let f = Array::from_shape_fn(IxDyn(&[40, 3]), |ix| ((ix[0] * 7 + ix[1] * 13) % 17) as f32);
    let want = f.fold_axis(Axis(1), f32::NEG_INFINITY, |acc, &v| acc.max(v));
    assert_eq!(max_f32::reduce_axis_with(Where::Simulate, &f, 1).unwrap(), want);
}

#[test]
fn axes_past_the_last_are_errors() {
    let a = Array::from_shape_fn(IxDyn(&[2, 3]), |ix| ix[0] as i64);
    let cpu = Device::cpu();
    let e = cpu.scope(|| add_i64::reduce_axis(&a, 2)).unwrap_err();
    assert!(matches!(e, Error::BadAxis { function: "add_i64", axis: 2, ndim: 2, .. }), "{e:?}");
    assert_eq!(e.to_string(), "`add_i64`: `values` has 2 axes, so it has no axis 2");
    let e = cpu.scope(|| add_i64::reduce_axis(5i64, 0)).unwrap_err();
    assert!(matches!(e, Error::BadAxis { ndim: 0, .. }), "{e:?}");
    let x = Array::from_shape_fn(IxDyn(&[2, 3]), |ix| ix[1] as f64);
    let e = norm::cpu(&x).and_then(|_| cpu.scope(|| norm::along(3, &x))).unwrap_err();
    assert!(matches!(e, Error::BadAxis { function: "norm", param: "x", axis: 3, ndim: 2 }), "{e:?}");
}

#[test]
fn fused_map_reduce_along_any_axis() {
    let cpu = Device::cpu();
    let x = Array::from_shape_fn(IxDyn(&[4, 5, 6]), |ix| (ix[0] as f64 - 1.5) * (ix[1] as f64 + 1.0) - ix[2] as f64);
    for axis in 0..3 {
        let want_norm = x.map_axis(Axis(axis), |line| line.iter().map(|v| v * v).sum::<f64>().sqrt());
        let got = cpu.scope(|| norm::along(axis, &x)).unwrap();
        for (g, w) in got.iter().zip(&want_norm) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "axis {axis}: {g} vs {w}");
        }
        let want_mean = x.mean_axis(Axis(axis)).unwrap();
        let got = cpu.scope(|| mean::along(axis, &x)).unwrap();
        for (g, w) in got.iter().zip(&want_mean) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "axis {axis}: {g} vs {w}");
        }
    }
    // argmax with its index, along the first axis.
    let f = Array::from_shape_fn(IxDyn(&[7, 3]), |ix| ((ix[0] * 5 + ix[1] * 3) % 7) as f32);
    let want: ArrayD<u32> = f.map_axis(Axis(0), |col| {
        (0..col.len()).fold(0usize, |best, i| if col[i] > col[best] { i } else { best }) as u32
    });
    assert_eq!(cpu.scope(|| gufunc_defs::argmax::along(0, &f)).unwrap(), want);
}

#[test]
fn few_long_lines_are_reduced_as_whole_arrays() {
    let cpu = Device::cpu();
    let a = Array::from_shape_fn(IxDyn(&[3, 70_000]), |ix| (ix[1] % 7) as i64 - 3 + ix[0] as i64);
    assert_eq!(cpu.scope(|| add_i64::reduce_axis(&a, 1)).unwrap(), a.sum_axis(Axis(1)));
    // Lanes that are not contiguous (a transposed array) are gathered first.
    let t = a.t().to_owned();
    assert_eq!(cpu.scope(|| add_i64::reduce_axis(&t, 0)).unwrap(), t.sum_axis(Axis(0)));
    assert_eq!(cpu.scope(|| add_i64::reduce_axes(&t, &[0, 1])).unwrap(), ArrayD::from_elem(IxDyn(&[]), a.sum()));
    let u = a.mapv(|v| (v.unsigned_abs() % 3) + 1);
    let want = u.fold_axis(Axis(1), 1u64, |acc, &v| acc.wrapping_mul(v));
    assert_eq!(mul_u64::reduce_axis(&u, 1).unwrap(), want);
    // A fault names the result whose line failed (C order), on both paths: lines 2 and 3
    // divide by zero, line 2 is reported.
    for len in [70_000usize, 10] {
        let mut d = Array::from_elem(IxDyn(&[4, len]), 1i64);
        d[[2, len / 2]] = 0;
        d[[3, 1]] = 0;
        let e = cpu.scope(|| div_i64::reduce_axis(&d, 1)).unwrap_err();
        match e {
            Error::KernelFault { function: "div_i64", index: 2, message } => {
                assert!(message.contains("divide by zero"), "{message}");
            }
            other => panic!("lines of {len}: expected a fault at result 2, got {other:?}"),
        }
    }
}
