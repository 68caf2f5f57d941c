//! Graphs without a GPU: the CPU device has none, and says so (`tests/gpu_graphs.rs` records
//! and replays them on a GPU).

use gpu_runtime::{Device, DeviceVec, Error, Graph, vectorize};

#[vectorize]
fn scale(x: f32, k: f32) -> f32 {
    x * k
}

#[test]
fn the_cpu_device_has_no_graphs() {
    let cpu = Device::cpu();
    let stream = cpu.new_stream().unwrap();
    let x = DeviceVec::from_slice_on(&cpu, &[1.0f32, 2.0]).unwrap();
    let mut y = DeviceVec::<f32>::zeros_on(&cpu, 2).unwrap();
    let mut ran = false;
    let e = Graph::capture(&stream, |s| {
        ran = true;
        scale::launch_into(s, &mut y, &x, 2.0f32).map(drop)
    })
    .unwrap_err();
    assert!(matches!(&e, Error::Graph { reason } if reason.contains("CUDA GPU")), "{e}");
    assert!(!ran, "nothing is recorded, nor run");
    assert_eq!(y.to_vec().unwrap(), [0.0, 0.0]);
}
