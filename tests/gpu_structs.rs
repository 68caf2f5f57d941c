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
