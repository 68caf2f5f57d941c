//! `GPU_VECTORIZE_DEVICE` chooses the default device; a value that is not an ordinal is an
//! error that says so, before any driver call (its own test binary: it sets the variable).

use gpu_runtime::{Error, vectorize};

#[vectorize]
fn twice(x: f32) -> f32 {
    x * 2.0
}

#[test]
fn a_bad_device_variable_is_an_error_not_a_panic() {
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var(gpu_runtime::DEVICE_ENV, "first") };
    let e = gpu_runtime::default_device().unwrap_err();
    assert!(matches!(&e, Error::BadDeviceEnv { value } if value == "first"), "{e:?}");
    assert!(e.to_string().contains("not a device ordinal"), "{e}");
    assert!(matches!(twice(&[1.0f32]), Err(Error::BadDeviceEnv { .. })));
    // The CPU path does not care.
    assert_eq!(twice::cpu(&[1.0f32]).unwrap(), vec![2.0]);
}
