//! Safe code cannot make the GPU touch freed memory. A `Pending` handle that is leaked
//! (`std::mem::forget`) ends its borrows without waiting; the arrays the queued kernel
//! uses must still outlive it: their frees, and any reuse of their memory, wait for the
//! kernel. Each test below fails if a free is not ordered after the kernel (the kernel
//! runs for many milliseconds, the host reuses the memory at once). On the GPU host the
//! binary also runs under `compute-sanitizer --tool memcheck`.

use gpu_runtime::{Device, DeviceVec, vectorize};

/// `x + count`, one dependent addition at a time: a kernel that runs long enough for the
/// host to free and reuse memory while it is still running.
#[vectorize(target = "cuda")]
fn spin(x: f32, count: u32) -> f32 {
    let mut y = x;
    for _ in 0..count {
        y += 1.0;
    }
    y
}

const N: usize = 1 << 24;
/// Additions per element: about 100 ms of kernel on an H200 for `N` elements, several
/// times what the host takes to free, reallocate and fill the memory (with a fifth of it,
/// the unfixed runtime failed two runs of three; the race must not depend on luck).
const COUNT: u32 = 200_000;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_leaked_launch_into_frees_its_output_after_the_kernel() {
    let device = Device::cuda(0).unwrap();
    let stream = device.new_stream().unwrap();
    let x = DeviceVec::<f32>::zeros_on(&device, N).unwrap();
    let mut out = DeviceVec::<f32>::zeros_on(&device, N).unwrap();
    std::mem::forget(spin::launch_into(&stream, &mut out, &x, COUNT).unwrap());
    // The kernel still writes `out`; its memory must not be handed out again before that
    // is done.
    drop(out);
    let reused = DeviceVec::from_slice_on(&device, &vec![-1.0f32; N]).unwrap();
    stream.synchronize().unwrap();
    let back = reused.to_vec().unwrap();
    let overwritten = back.iter().filter(|&&v| v != -1.0).count();
    assert_eq!(overwritten, 0, "the leaked kernel wrote {overwritten} elements of a later allocation");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_leaked_launch_into_frees_its_inputs_after_the_kernel() {
    let device = Device::cuda(0).unwrap();
    let stream = device.new_stream().unwrap();
    let x = DeviceVec::<f32>::zeros_on(&device, N).unwrap();
    let mut out = DeviceVec::<f32>::zeros_on(&device, N).unwrap();
    std::mem::forget(spin::launch_into(&stream, &mut out, &x, COUNT).unwrap());
    // The kernel still reads `x`: what a later allocation writes there must not reach it.
    drop(x);
    let reused = DeviceVec::from_slice_on(&device, &vec![-1.0f32; N]).unwrap();
    // Reading `out` from this thread's stream waits for the kernel (its noted use).
    let back = out.to_vec().unwrap();
    let wrong = back.iter().filter(|&&v| v != COUNT as f32).count();
    assert_eq!(wrong, 0, "{wrong} results were computed from memory reused after the input was dropped");
    assert!(reused.to_vec().unwrap().iter().all(|&v| v == -1.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn leaked_launches_of_every_kind_only_leak() {
    let device = Device::cuda(0).unwrap();
    let stream = device.new_stream().unwrap();
    let x = DeviceVec::<f32>::zeros_on(&device, N).unwrap();
    // Host arguments are staged before the call returns: dropping them at once is fine.
    let host: Vec<f32> = vec![2.0; N];
    std::mem::forget(spin::launch(&stream, &host, COUNT).unwrap());
    drop(host);
    std::mem::forget(spin::launch_device(&stream, &x, COUNT).unwrap());
    let mut host_out = vec![0.0f32; N];
    std::mem::forget(spin::launch_into(&stream, &mut host_out, &x, COUNT).unwrap());
    // A leaked handle never copies into a host output: it stays as it was.
    drop(x);
    stream.synchronize().unwrap();
    assert!(host_out.iter().all(|&v| v == 0.0));
    // The device is still in order: a call after all this computes what it should.
    let y = spin::device(&DeviceVec::from_slice_on(&device, &[1.0f32, 2.0]).unwrap(), 3u32).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![4.0, 5.0]);
}
