//! The CPU device as the process default: through `GPU_VECTORIZE_DEVICE=cpu`, and through
//! `Device::make_default` (its own test binary: it sets the variable and the default).

use gpu_runtime::{Device, DeviceVec, Error, Stream, vectorize};

#[vectorize]
fn twice(x: f32) -> f32 {
    x * 2.0
}

#[vectorize(identity = 0)]
fn add(a: u32, b: u32) -> u32 {
    a + b
}

#[test]
fn the_default_device_can_be_the_cpu() {
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var(gpu_runtime::DEVICE_ENV, " CPU ") };
    let d = gpu_runtime::default_device().unwrap();
    assert!(d.is_cpu(), "{d:?}");
    assert!(Device::best().unwrap().is_cpu());
    // Every call without a device goes to the CPU, GPU or not.
    assert_eq!(twice(&[1.0f32, 2.5]).unwrap(), vec![2.0, 5.0]);
    let v = DeviceVec::from_slice(&[1u32, 2, 3]).unwrap();
    assert!(v.device().is_cpu());
    assert_eq!(add::reduce(&v).unwrap(), 6);
    assert_eq!(twice::device(&[4.0f32]).unwrap().to_vec().unwrap(), vec![8.0]);
    let stream: Stream = d.new_stream().unwrap();
    assert_eq!(twice::launch(&stream, 3.0f32).unwrap().wait().unwrap(), vec![6.0]);

    // `make_default` replaces what the variable said (here: with the same CPU device); a
    // scope still wins inside it.
    Device::cpu().make_default();
    assert!(gpu_runtime::default_device().unwrap().is_cpu());
    assert_eq!(twice(&[0.5f32]).unwrap(), vec![1.0]);
    // A CUDA device by ordinal is still asked for by name, and says why it cannot be had.
    match Device::cuda(0) {
        Ok(gpu) => assert!(gpu.is_cuda()),
        Err(e) => assert!(matches!(e, Error::NoDriver | Error::NoDevice), "{e:?}"),
    }
}
