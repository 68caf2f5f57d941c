//! One call over several devices (`name::on_devices`), on the GPU host. The list holds
//! every GPU of the host and the first one again, so a one-GPU host still runs two or more
//! pieces at once (on one device); the split, the joined results and the fault indices
//! are checked against one device and the CPU.

use gpu_runtime::{Device, DeviceVec, Error, vectorize};

#[vectorize(target = "cuda")]
fn mad(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

#[vectorize(target = "cuda")]
fn divmod(a: u32, b: u32) -> (u32, u32) {
    (a / b, a % b)
}

/// Every GPU of the host, then the first again (at least two entries).
fn device_lists() -> Vec<Vec<Device>> {
    let count = gpu_runtime::device_count().unwrap();
    let all: Vec<Device> = (0..count).map(|i| Device::cuda(i).unwrap()).collect();
    let mut twice = all.clone();
    twice.push(all[0].clone());
    let mut thrice = twice.clone();
    thrice.push(all[0].clone());
    vec![vec![all[0].clone()], twice, thrice]
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32 / 65536.0 - 128.0).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pieces_join_in_order_as_on_one_device() {
    // Sizes below a piece's alignment, odd ones, and one past the chunked pipeline's
    // threshold (its host copies run in each piece).
    for n in [0usize, 1, 255, 1000, (1 << 20) + 7, (3 << 22) + 5] {
        let (a, b) = (values(n, 1), values(n, 2));
        let want = mad::cpu(&a, &b, 0.5f32).unwrap();
        assert_eq!(mad::on(&Device::cuda(0).unwrap(), &a, &b, 0.5f32).unwrap(), want);
        for devices in device_lists() {
            let got = mad::on_devices(&devices, &a, &b, 0.5f32).unwrap();
            assert!(got == want, "n = {n}, {} devices: results differ", devices.len());
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tuple_results_and_device_arrays_on_their_own_device() {
    let n = 100_003;
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(7919)).collect();
    let b: Vec<u32> = (0..n as u32).map(|i| i % 97 + 1).collect();
    let want = divmod::cpu(&a, &b).unwrap();
    let d0 = Device::cuda(0).unwrap();
    let on_device = DeviceVec::from_slice_on(&d0, &b).unwrap();
    for devices in [vec![d0.clone()], vec![d0.clone(), d0.clone(), d0.clone()]] {
        assert_eq!(divmod::on_devices(&devices, &a, &b).unwrap(), want);
        // A device array goes with a list of its own device only.
        assert_eq!(divmod::on_devices(&devices, &a, &on_device).unwrap(), want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_names_its_index_in_the_whole_call() {
    let n = 1_000_000;
    let a: Vec<u32> = vec![6; n];
    let mut b: Vec<u32> = vec![3; n];
    b[700_001] = 0;
    b[900_000] = 0;
    for devices in device_lists() {
        match divmod::on_devices(&devices, &a, &b) {
            Err(Error::KernelFault { function: "divmod", index: 700_001, message }) => {
                assert_eq!(message, "attempt to divide by zero")
            }
            other => panic!("{} devices: {other:?}", devices.len()),
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn no_device_and_mismatched_lengths_are_errors() {
    let a = values(10, 1);
    assert!(matches!(mad::on_devices(&[], &a, &a, 1.0f32), Err(Error::NoDevicesGiven { function: "mad" })));
    let d0 = Device::cuda(0).unwrap();
    let r = mad::on_devices(&[d0.clone(), d0], &a, &a[..9], 1.0f32);
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
}
