//! Device memory from elsewhere, without a GPU: what the interop functions refuse on the
//! CPU device (the GPU side is `tests/gpu_interop.rs`).

use gpu_runtime::{Device, DeviceVec, Error};

#[test]
fn raw_pointers_are_refused_on_the_cpu_device() {
    // SAFETY: the call is refused before the pointer is used.
    let e = unsafe { DeviceVec::<f32>::from_raw_parts(&Device::cpu(), 0x1000, 4) }.unwrap_err();
    assert!(matches!(e, Error::Interop { .. }), "{e}");
    assert!(e.to_string().contains("CPU device, which has no CUDA memory"), "{e}");
}
