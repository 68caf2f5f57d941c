//! User structs (`#[derive(GpuType)]`) in kernels, in the simulator and on the CPU device:
//! the same results as the host's own code, field writes of different threads kept apart,
//! and faults and races reported. The GPU runs the same kernels in `tests/gpu_structs.rs`.

mod struct_defs;

use gpu_runtime::{Device, Error, LaunchConfig};
use struct_defs::*;

fn cpu(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig::new(grid, block).device(&Device::cpu())
}

#[test]
fn a_step_through_a_device_function_matches_the_host() {
    let mut want = particles(1000);
    step_host(&mut want, 0.5);
    let mut sim = particles(1000);
    step::simulate(4u32, 256u32, &mut sim, 0.5).unwrap();
    assert_eq!(sim, want);
    let mut on_cpu = particles(1000);
    step::launch_with(&cpu(4, 256), &mut on_cpu, 0.5).unwrap().wait().unwrap();
    assert_eq!(on_cpu, want);
}

#[test]
fn fields_literals_and_nested_structs_match_the_host() {
    let ps = particles(300);
    let (want, want_mass) = tag_host(&ps);
    let mut out =
        vec![Tagged { weight: 0.0, p: ps[0], z: Default::default(), hits: [0; 4], on: false, pad: [0; 7] }; 300];
    let mut mass = vec![0.0f32; 300];
    tag::simulate(3u32, 128u32, &ps, &mut out, &mut mass).unwrap();
    assert_eq!(out, want);
    assert_eq!(mass, want_mass);
}

#[test]
fn structs_by_value_match_the_host() {
    let (pull, t) = pull_args();
    let mut want = particles(700);
    pulled_host(&mut want, pull, t, 0.125);
    let mut sim = particles(700);
    pulled::simulate(3u32, 256u32, &mut sim, pull, t, 0.125).unwrap();
    assert_eq!(sim, want);
    let mut on_cpu = particles(700);
    pulled::launch_with(&cpu(3, 256), &mut on_cpu, pull, t, 0.125).unwrap().wait().unwrap();
    assert_eq!(on_cpu, want);
    // Every field of both structs reaches the kernel: `on` false leaves the masses.
    let off = Tagged { on: false, ..t };
    let mut sim = particles(700);
    pulled::simulate(3u32, 256u32, &mut sim, pull, off, 0.125).unwrap();
    assert!(sim.iter().zip(particles(700)).all(|(a, b)| a.mass == b.mass));
    assert_ne!(sim, want);
}

#[test]
fn threads_writing_different_fields_of_one_element_all_land() {
    let mut want = particles(64);
    split_writes_host(&mut want);
    for _ in 0..5 {
        let mut ps = particles(64);
        split_writes::simulate(2u32, 128u32, &mut ps).unwrap();
        assert_eq!(ps, want);
    }
}

#[test]
fn the_same_field_written_by_two_threads_is_a_race() {
    let mut ps = particles(1);
    let e = same_field::simulate(1u32, 32u32, &mut ps).unwrap_err();
    assert!(matches!(e, Error::DataRace { .. }), "{e}");
}

#[test]
fn an_array_field_index_past_its_end_is_a_fault() {
    let mut ps = particles(4);
    let e = past_the_field::simulate(1u32, 4u32, &mut ps, 3).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("the len is 3 but the index is 3"), "{text}");
    // The caller's slice is as it was.
    assert_eq!(ps, particles(4));
}

#[test]
fn layouts_are_rusts() {
    assert_eq!(std::mem::size_of::<Particle>(), 32);
    assert_eq!(std::mem::size_of::<Tagged>(), 64);
    assert_eq!(<Particle as gpu_runtime::GpuType>::NAME, "Particle");
}

/// A struct defined in one module and named by another's kernels, through `super::`, an
/// import and a re-export.
mod geom {
    #[derive(Clone, Copy, Debug, PartialEq, gpu_runtime::GpuType)]
    #[repr(C)]
    pub struct P2 {
        pub x: f32,
        pub y: f32,
    }
}

pub use geom::P2 as Point;

mod kernels {
    use gpu_runtime::{gpu, kernel};

    #[kernel]
    pub fn norms(ps: &[super::geom::P2], out: &mut [f32]) {
        let i = gpu::grid1();
        if i < ps.len() {
            out[i] = (ps[i].x * ps[i].x + ps[i].y * ps[i].y).sqrt();
        }
    }

    use super::Point;

    #[kernel]
    pub fn swap(ps: &mut [Point]) {
        let i = gpu::grid1();
        if i < ps.len() {
            let p = ps[i];
            ps[i] = Point { x: p.y, y: p.x };
        }
    }
}

#[test]
fn structs_are_named_across_modules() {
    let mut ps = vec![geom::P2 { x: 3.0, y: 4.0 }, Point { x: -1.0, y: 0.0 }];
    let mut out = vec![0.0f32; 2];
    kernels::norms::simulate(1u32, 32u32, &ps, &mut out).unwrap();
    assert_eq!(out, [5.0, 1.0]);
    kernels::swap::simulate(1u32, 32u32, &mut ps).unwrap();
    assert_eq!(ps, [Point { x: 4.0, y: 3.0 }, Point { x: 0.0, y: -1.0 }]);
}

/// `examples/nbody.rs` (structs in device arrays and in a shared tile) on the CPU device:
/// the same bodies as plain Rust, and the energy kept.
#[test]
fn the_nbody_example_matches_plain_rust_on_the_cpu_device() {
    use struct_defs::nbody;
    let bodies = nbody::disc(300);
    let got = nbody::simulate(&Device::cpu(), &bodies, 3, 1e-3).unwrap();
    let mut want = bodies.clone();
    for _ in 0..3 {
        want = nbody::step_host(&want, 1e-3);
    }
    assert_eq!(got, want);
    let drift = ((nbody::energy(&got) - nbody::energy(&bodies)) / nbody::energy(&bodies)).abs();
    assert!(drift < 1e-4, "{drift}");
    // And in the simulator, with its race check on.
    let mut next = bodies.clone();
    nbody::step::simulate(3u32, nbody::TILE as u32, &bodies, &mut next, 1e-3).unwrap();
    assert_eq!(next, nbody::step_host(&bodies, 1e-3));
}

#[test]
fn literal_fields_are_evaluated_in_the_order_written() {
    let a: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let mut out = particles(1);
    reorder::simulate(1u32, 1u32, &a, &mut out, 5).unwrap();
    assert_eq!(out[0], Particle { pos: [5.0, 0.0, 0.0], vel: [6.0; 3], mass: 7.0, id: 5 });
    // At 7, `mass` reads index 9 first; the definition's order would fault at `vel`'s 8.
    let e = reorder::simulate(1u32, 1u32, &a, &mut out, 7).unwrap_err();
    assert!(e.to_string().contains("the len is 8 but the index is 9"), "{e}");
}

#[test]
fn structs_of_another_crate() {
    use struct_defs::across_crates::*;
    let ss = segments(500);
    let mid = midpoint::on(&Device::cpu(), &ss).unwrap();
    assert_eq!(mid[4], Point { x: 6.0, y: -1.75 });
    assert!(mid.iter().zip(&ss).all(|(m, s)| *m == midpoint::scalar(*s)));
    let by = Point { x: 1.5, y: -0.25 };
    let mut want = ss.clone();
    stretch_host(&mut want, by);
    let mut sim = ss.clone();
    stretch::simulate(2u32, 256u32, &mut sim, by).unwrap();
    assert_eq!(sim, want);
}

#[test]
fn a_struct_defined_inside_a_function() {
    // Its derive exports a macro from inside the function: no warning (CI's clippy denies
    // them), and the struct is an element as any other.
    #[derive(Clone, Copy, Debug, PartialEq, gpu_runtime::GpuType)]
    #[repr(C)]
    struct Local {
        a: f32,
        b: u32,
    }
    let v = gpu_runtime::DeviceVec::from_slice_on(&Device::cpu(), &[Local { a: 1.5, b: 2 }]).unwrap();
    assert_eq!(v.to_vec().unwrap(), [Local { a: 1.5, b: 2 }]);
}

mod vectorized {
    //! Structs in `#[vectorize]` functions on the CPU targets: `name::cpu`, and the CPU
    //! device's `name::on`. Both run the host original (the GPU, in `tests/gpu_structs.rs`,
    //! runs the compiled kernel against the same).

    use super::struct_defs::*;
    use gpu_runtime::Device;

    fn each<T, R>(xs: &[T], f: impl Fn(&T) -> R) -> Vec<R> {
        xs.iter().map(f).collect()
    }

    #[test]
    fn struct_elements_in_scalars_out() {
        let ps = particles(1000);
        let want = each(&ps, |p| kinetic::scalar(*p));
        assert_eq!(kinetic::cpu(&ps).unwrap(), want);
        assert_eq!(kinetic::on(&Device::cpu(), &ps).unwrap(), want);
        // The host's own arithmetic, not only the function's copy.
        assert_eq!(want[3], 0.5 * ps[3].mass * (0.25 * 0.25 + 0.375 * 0.375 + 4.0));
    }

    #[test]
    fn structs_in_and_out_with_a_struct_broadcast() {
        let ps = particles(500);
        let wind = Vec3 { x: 1.0, y: -2.0, z: 0.5 };
        let want = each(&ps, |p| push::scalar(*p, wind, 0.25));
        assert_eq!(want[7].id, 8);
        assert_eq!(push::cpu(&ps, wind, 0.25).unwrap(), want);
        assert_eq!(push::on(&Device::cpu(), &ps, wind, 0.25).unwrap(), want);
        let origin = ps[10];
        let (d, ratio): (Vec<Vec3>, Vec<f32>) = ps.iter().map(|p| relative::scalar(*p, origin)).unzip();
        assert_eq!(relative::on(&Device::cpu(), &ps, origin).unwrap(), (d, ratio));
    }

    #[test]
    fn every_kind_of_field() {
        let ts = tagged(300);
        let want = each(&ts, |t| retag::scalar(*t, 2));
        assert_eq!(want[5].hits, [5, 2, 4, 4]);
        assert!(want[5].on && !want[6].on);
        assert_eq!(retag::on(&Device::cpu(), &ts, 2usize).unwrap(), want);
    }

    #[test]
    fn a_reduction_over_structs() {
        let xs = extremes(100_000);
        let want = extremes_host(xs.len());
        // The least value (-100) recurs: the first index holding it is kept.
        assert_eq!((want.lo, want.at_lo, want.hi, want.count), (-100.0, 0, 406.0, 100_000));
        assert_eq!(merge::reduce_on(&Device::cpu(), &xs).unwrap(), want);
        assert_eq!(merge::reduce_on(&Device::cpu(), &xs[1..]).unwrap().at_lo, 1013);
        let empty: [Extremes; 0] = [];
        let identity = merge::reduce_on(&Device::cpu(), &empty).unwrap();
        assert_eq!((identity.lo, identity.count), (f32::INFINITY, 0));
        // Along an axis, by the fold's generated gufunc.
        let grid = gpu_runtime::ndarray::Array2::from_shape_vec((100, 1000), xs.clone()).unwrap();
        for how in [gpu_runtime::Where::Parallel, gpu_runtime::Where::Simulate] {
            let rows = merge::reduce_axis_with(how, &grid, 1).unwrap();
            assert_eq!(rows.len(), 100);
            for (r, got) in rows.iter().enumerate() {
                let line = &xs[r * 1000..(r + 1) * 1000];
                assert_eq!(*got, line[1..].iter().fold(line[0], |a, &b| merge::scalar(a, b)), "{how:?} row {r}");
            }
        }
    }

    #[test]
    fn structs_broadcast_over_ndarray_arrays() {
        use gpu_runtime::ndarray::{Array, Array2, IxDyn};
        // Particles in a row against origins in a column: each pair once.
        let ps = Array2::from_shape_vec((1, 40), particles(40)).unwrap();
        let origins = Array2::from_shape_vec((6, 1), particles(46)[40..].to_vec()).unwrap();
        let (d, ratio) = relative::nd_cpu(&ps, &origins).unwrap();
        assert_eq!(d.shape(), [6, 40]);
        for ((i, j), got) in d.indexed_iter().map(|(ix, v)| ((ix[0], ix[1]), v)) {
            let want = relative::scalar(ps[[0, j]], origins[[i, 0]]);
            assert_eq!((*got, ratio[[i, j]]), want, "[{i}, {j}]");
        }
        // The origin a one-element array (read everywhere), and a struct of two words
        // broadcast as a scalar.
        let one = Array::from_shape_vec(IxDyn(&[1]), vec![origins[[2, 0]]]).unwrap();
        let row = |a: &gpu_runtime::ndarray::ArrayD<Vec3>, k: usize| -> Vec<Vec3> {
            a.index_axis(gpu_runtime::ndarray::Axis(0), k).iter().copied().collect()
        };
        assert_eq!(row(&relative::nd_cpu(&ps, &one).unwrap().0, 0), row(&d, 2));
        assert_eq!(row(&relative::nd_cpu(&ps, origins[[3, 0]]).unwrap().0, 0), row(&d, 3));
        let wind = Vec3 { x: 1.0, y: -2.0, z: 0.5 };
        let moved = push::nd_cpu(ps.t(), wind, 0.25).unwrap();
        assert_eq!(moved.shape(), [40, 1]);
        assert!(moved.iter().zip(ps.iter()).all(|(m, p)| *m == push::scalar(*p, wind, 0.25)));
    }

    #[test]
    fn an_array_field_index_past_its_end_is_an_error() {
        let ts = tagged(10);
        let e = retag::on(&Device::cpu(), &ts, 4usize).unwrap_err().to_string();
        assert!(e.contains("index out of bounds: the len is 4 but the index is 4"), "{e}");
    }
}

mod generalized {
    //! Structs in `#[guvectorize]` functions: cores of structs in and out, a struct
    //! returned and a struct scalar, on every host path and through the kernel in the
    //! simulator (the GPU runs the same in `tests/gpu_structs.rs`).

    use super::struct_defs::*;
    use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
    use gpu_runtime::{Device, Where};

    pub fn rows(r: usize, n: usize) -> ArrayD<Particle> {
        Array::from_shape_vec(IxDyn(&[r, n]), particles(r * n)).unwrap()
    }

    #[test]
    fn a_core_of_structs_in_a_struct_out() {
        let ps = rows(6, 50);
        let want = ArrayD::from_shape_vec(IxDyn(&[6]), centre_host(ps.as_slice().unwrap(), 50)).unwrap();
        for how in [Where::Cpu, Where::Parallel, Where::On(&Device::cpu()), Where::Simulate] {
            assert_eq!(centre::with(how, &ps).unwrap(), want, "{how:?}");
        }
    }

    #[test]
    fn struct_scalars_per_row_or_for_all_and_a_written_core() {
        let ps = rows(4, 30);
        let wind = Vec3 { x: 1.0, y: 2.0, z: -3.0 };
        let blown = |w: &dyn Fn(usize) -> Vec3| -> ArrayD<Particle> {
            let mut out = ps.clone();
            for (r, mut row) in out.outer_iter_mut().enumerate() {
                for p in row.iter_mut() {
                    let mut q = drift(*p, 0.5);
                    let w = w(r);
                    q.vel = [q.vel[0] + w.x, q.vel[1] + w.y, q.vel[2] + w.z];
                    *p = q;
                }
            }
            out
        };
        let want = blown(&|_| wind);
        let winds: Vec<Vec3> = (0..4).map(|r| Vec3 { x: r as f32, y: 0.5, z: 0.0 }).collect();
        let per_row = ArrayD::from_shape_vec(IxDyn(&[4]), winds.clone()).unwrap();
        let want_per_row = blown(&|r| winds[r]);
        for how in [Where::Cpu, Where::Parallel, Where::On(&Device::cpu()), Where::Simulate] {
            assert_eq!(blow::with(how, &ps, wind).unwrap(), want, "{how:?}");
            assert_eq!(blow::with(how, &ps, &per_row).unwrap(), want_per_row, "{how:?}");
        }
    }
}
