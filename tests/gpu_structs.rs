//! User structs on the GPU: the kernels of `tests/struct_defs` against the host's own
//! code, from host slices and from device arrays, field writes of different threads kept
//! apart, and an array field's bounds fault. The simulator runs the same kernels in
//! `tests/structs.rs`.

mod struct_defs;

use gpu_runtime::{DeviceVec, Error};
use struct_defs::*;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_step_through_a_device_function_matches_the_host() {
    let n = 100_000;
    let mut want = particles(n);
    for _ in 0..3 {
        step_host(&mut want, 0.5);
    }
    let mut host = particles(n);
    for _ in 0..3 {
        step::launch(n.div_ceil(256) as u32, 256u32, &mut host, 0.5).unwrap();
    }
    assert_eq!(host, want);
    let mut dev = DeviceVec::from_slice(&particles(n)).unwrap();
    for _ in 0..3 {
        step::launch(n.div_ceil(256) as u32, 256u32, &mut dev, 0.5).unwrap();
    }
    assert_eq!(dev.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fields_literals_and_nested_structs_match_the_host() {
    let ps = particles(10_000);
    let (want, want_mass) = tag_host(&ps);
    let blank = Tagged { weight: 0.0, p: ps[0], z: Default::default(), hits: [0; 4], on: false, pad: [0; 7] };
    let mut out = vec![blank; ps.len()];
    let mut mass = vec![0.0f32; ps.len()];
    tag::launch(40u32, 256u32, &ps, &mut out, &mut mass).unwrap();
    assert_eq!(mass, want_mass);
    for (k, (got, want)) in out.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "element {k}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn structs_by_value_match_the_host() {
    let (pull, t) = pull_args();
    let n = 50_000;
    let mut want = particles(n);
    pulled_host(&mut want, pull, t, 0.125);
    let mut host = particles(n);
    pulled::launch(n.div_ceil(256) as u32, 256u32, &mut host, pull, t, 0.125).unwrap();
    assert_eq!(host, want);
    let mut dev = DeviceVec::from_slice(&particles(n)).unwrap();
    pulled::launch(n.div_ceil(256) as u32, 256u32, &mut dev, pull, t, 0.125).unwrap();
    assert_eq!(dev.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_reduction_over_structs() {
    let n = 3_000_000;
    let xs = extremes(n);
    let want = extremes_host(n);
    assert_eq!(merge::reduce(&xs).unwrap(), want);
    let d = DeviceVec::from_slice(&xs).unwrap();
    assert_eq!(merge::reduce(&d).unwrap(), want);
    // One block, a partial block, several blocks.
    for k in [1, 2, 255, 256, 257, 10_000] {
        assert_eq!(merge::reduce(&xs[..k]).unwrap(), extremes_host(k), "{k} values");
    }
    let empty: [Extremes; 0] = [];
    assert_eq!(merge::reduce(&empty).unwrap().lo, f32::INFINITY);
    // From an initial value, and into a device array.
    let start = Extremes { lo: -500.0, hi: 0.0, at_lo: 7, count: 2, total: 1 };
    assert_eq!(merge::reduce_init(start, &d).unwrap(), merge::scalar(start, want));
    let mut res = DeviceVec::from_slice(&[start]).unwrap();
    merge::reduce_into(&mut res, &d).unwrap();
    assert_eq!(res.to_vec().unwrap(), [want]);
    // Along an axis: many short lines (one thread each), and a few long ones (a block
    // reduction each).
    for (rows, cols) in [(3000, 1000), (2, 1_500_000)] {
        let grid = gpu_runtime::ndarray::Array2::from_shape_vec((rows, cols), xs.clone()).unwrap();
        let got = merge::reduce_axis(&grid, 1).unwrap();
        for (r, got) in got.iter().enumerate() {
            let line = &xs[r * cols..(r + 1) * cols];
            assert_eq!(*got, line[1..].iter().fold(line[0], |a, &b| merge::scalar(a, b)), "row {r} of {rows}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn structs_broadcast_over_ndarray_arrays() {
    use gpu_runtime::ndarray::{Array, Array2, ArrayD, Axis, IxDyn};
    // A row of particles against a column of origins: the strided entry, each pair once.
    let ps = Array2::from_shape_vec((1, 4000), particles(4000)).unwrap();
    let origins = Array2::from_shape_vec((300, 1), particles(4300)[4000..].to_vec()).unwrap();
    let (d, ratio) = relative::nd(&ps, &origins).unwrap();
    assert_eq!((d.clone(), ratio.clone()), relative::nd_cpu(&ps, &origins).unwrap());
    assert_eq!(d[[7, 11]], relative::scalar(ps[[0, 11]], origins[[7, 0]]).0);
    // A one-element array (read everywhere, passed by value: 32 bytes) and a struct
    // scalar broadcast.
    let row = |a: &ArrayD<Vec3>, k: usize| -> Vec<Vec3> { a.index_axis(Axis(0), k).iter().copied().collect() };
    let one = Array::from_shape_vec(IxDyn(&[1]), vec![origins[[2, 0]]]).unwrap();
    assert_eq!(row(&relative::nd(&ps, &one).unwrap().0, 0), row(&d, 2));
    assert_eq!(row(&relative::nd(&ps, origins[[3, 0]]).unwrap().0, 0), row(&d, 3));
    // A transposed view of structs in, structs out.
    let wind = Vec3 { x: 1.0, y: -2.0, z: 0.5 };
    let moved = push::nd(ps.t(), wind, 0.25).unwrap();
    assert_eq!(moved, push::nd_cpu(ps.t(), wind, 0.25).unwrap());
    assert_eq!(moved[[5, 0]], push::scalar(ps[[0, 5]], wind, 0.25));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn structs_of_another_crate() {
    use struct_defs::across_crates::*;
    let ss = segments(100_000);
    let mid = midpoint(&ss).unwrap();
    assert!(mid.iter().zip(&ss).all(|(m, s)| *m == midpoint::scalar(*s)));
    let by = Point { x: 1.5, y: -0.25 };
    let mut want = ss.clone();
    stretch_host(&mut want, by);
    let mut dev = DeviceVec::from_slice(&ss).unwrap();
    stretch::launch(ss.len().div_ceil(256) as u32, 256u32, &mut dev, by).unwrap();
    assert_eq!(dev.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn threads_writing_different_fields_of_one_element_all_land() {
    let mut want = particles(4096);
    split_writes_host(&mut want);
    let mut ps = particles(4096);
    split_writes::launch(64u32, 256u32, &mut ps).unwrap();
    assert_eq!(ps, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_array_field_index_past_its_end_is_a_fault() {
    let mut ps = particles(4);
    match past_the_field::launch(1u32, 4u32, &mut ps, 3).unwrap_err() {
        Error::ThreadFault { message, .. } => {
            assert!(message.contains("the len is 3 but the index is 3"), "{message}")
        }
        e => panic!("expected a thread fault, got {e}"),
    }
    assert_eq!(ps, particles(4));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn literal_fields_are_evaluated_in_the_order_written() {
    let a: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let mut out = particles(1);
    reorder::launch(1u32, 1u32, &a, &mut out, 5).unwrap();
    assert_eq!(out[0], Particle { pos: [5.0, 0.0, 0.0], vel: [6.0; 3], mass: 7.0, id: 5 });
    // At 7, `mass` reads index 9 first; the definition's order would fault at `vel`'s 8.
    let e = reorder::launch(1u32, 1u32, &a, &mut out, 7).unwrap_err();
    assert!(e.to_string().contains("the len is 8 but the index is 9"), "{e}");
}

mod vectorized {
    //! Structs in `#[vectorize]` functions on the GPU: the compiled kernel against the
    //! host original (`name::scalar`), element for element, from host slices (directly and
    //! through the chunked pipeline) and device arrays, with structs of one, two and four
    //! words broadcast by value.

    use super::struct_defs::*;
    use gpu_runtime::DeviceVec;

    fn each<T, R>(xs: &[T], f: impl Fn(&T) -> R) -> Vec<R> {
        xs.iter().map(f).collect()
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn struct_elements_from_host_slices_and_device_arrays() {
        let ps = particles(100_000);
        let want = each(&ps, |p| kinetic::scalar(*p));
        assert_eq!(kinetic(&ps).unwrap(), want);
        let dev = DeviceVec::from_slice(&ps).unwrap();
        assert_eq!(kinetic::device(&dev).unwrap().to_vec().unwrap(), want);
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn structs_in_and_out_with_structs_broadcast() {
        let ps = particles(100_000);
        let wind = Vec3 { x: 1.0, y: -2.0, z: 0.5 };
        let want = each(&ps, |p| push::scalar(*p, wind, 0.25));
        assert_eq!(push(&ps, wind, 0.25).unwrap(), want);
        let dev = DeviceVec::from_slice(&ps).unwrap();
        let mut out = DeviceVec::<Particle>::zeros(ps.len()).unwrap();
        push::into(&mut out, &dev, wind, 0.25).unwrap();
        assert_eq!(out.to_vec().unwrap(), want);
        // A struct of two words broadcast, a tuple of a struct and a scalar back.
        let origin = ps[10];
        let want: (Vec<Vec3>, Vec<f32>) = ps.iter().map(|p| relative::scalar(*p, origin)).unzip();
        assert_eq!(relative(&ps, origin).unwrap(), want);
        assert_eq!(relative(&dev, origin).unwrap(), want);
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn large_host_slices_of_structs_go_through_the_chunked_pipeline() {
        // 96 MiB of particles in and out: several chunks of the pipeline.
        let ps = particles(3 << 20);
        let wind = Vec3 { x: 0.5, y: 0.25, z: -1.0 };
        let want = each(&ps, |p| push::scalar(*p, wind, 0.125));
        assert_eq!(push(&ps, wind, 0.125).unwrap(), want);
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn every_kind_of_field_and_a_fault_at_its_element() {
        let ts = tagged(50_000);
        let want = each(&ts, |t| retag::scalar(*t, 2));
        assert_eq!(retag(&ts, 2usize).unwrap(), want);
        // A struct of four words broadcast against an array of indices.
        let ks: Vec<usize> = (0..1000).map(|i| i % 4).collect();
        let want = each(&ks, |k| retag::scalar(ts[7], *k));
        assert_eq!(retag(ts[7], &ks).unwrap(), want);
        match retag(&ts, 4usize) {
            Err(gpu_runtime::Error::KernelFault { index, message, .. }) => {
                assert_eq!((index, message.as_str()), (0, "index out of bounds: the len is 4 but the index is 4"));
            }
            other => panic!("expected the first element's fault, got {other:?}"),
        }
    }
}

mod generalized {
    //! Structs in `#[guvectorize]` functions on the GPU, against the host original.

    use super::struct_defs::*;
    use gpu_runtime::Where;
    use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cores_of_structs_and_struct_scalars() {
        let (r, n) = (4_000, 64);
        let ps = Array::from_shape_vec(IxDyn(&[r, n]), particles(r * n)).unwrap();
        assert_eq!(centre(&ps).unwrap(), centre::with(Where::Cpu, &ps).unwrap());
        let wind = Vec3 { x: 1.0, y: 2.0, z: -3.0 };
        assert_eq!(blow(&ps, wind).unwrap(), blow::with(Where::Cpu, &ps, wind).unwrap());
        let winds: Vec<Vec3> = (0..r).map(|k| Vec3 { x: k as f32, y: 0.5, z: 0.0 }).collect();
        let per_row = ArrayD::from_shape_vec(IxDyn(&[r]), winds).unwrap();
        assert_eq!(blow(&ps, &per_row).unwrap(), blow::with(Where::Cpu, &ps, &per_row).unwrap());
    }
}
