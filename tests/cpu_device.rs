//! The CPU as a device (`Device::cpu()`): every entry of the generated API on it, without a
//! GPU, against the plain CPU path (`f::cpu`) and plain loops. The same file runs on the GPU
//! host, where a GPU is also there and must not be used by these calls.

mod kernel_defs;

use gpu_runtime::nd::{ArrayD, IxDyn};
use gpu_runtime::{Device, DeviceId, DeviceVec, Error, LaunchConfig, vectorize};

#[vectorize]
fn fma3(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

#[vectorize]
fn divide(a: i32, b: i32) -> i32 {
    a / b
}

#[vectorize]
fn split(x: f64) -> (f64, bool) {
    (x.abs(), x < 0.0)
}

#[vectorize(identity = 0)]
fn add_i64(a: i64, b: i64) -> i64 {
    a + b
}

#[vectorize]
fn max_f32(a: f32, b: f32) -> f32 {
    a.max(b)
}

#[vectorize(types(f32, f64))]
fn halve<T: gpu_runtime::Float>(x: T) -> T {
    x / (T::ONE + T::ONE)
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 10.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.0).collect();
    (a, b)
}

#[test]
fn the_cpu_device_describes_itself() {
    let cpu = Device::cpu();
    assert!(cpu.is_cpu() && !cpu.is_cuda());
    assert_eq!(cpu.id(), DeviceId::Cpu);
    assert_eq!(cpu, Device::cpu());
    assert!(cpu.name().starts_with("CPU ("), "{}", cpu.name());
    assert!(cpu.sm_count() >= 1);
    assert_eq!(cpu.compute_capability(), (0, 0));
    cpu.synchronize().unwrap();
    let (free, total) = cpu.memory_info().unwrap();
    assert!(free <= total && total > 0);
    let info = cpu.info().unwrap();
    assert_eq!((info.name.as_str(), info.driver_cuda_version), (cpu.name(), (0, 0)));
    assert_eq!(DeviceId::Cpu.to_string(), "the CPU");
    assert_eq!(DeviceId::Cuda(1).to_string(), "device 1");
}

#[test]
fn best_is_the_gpu_where_there_is_one_else_the_cpu() {
    let best = Device::best().unwrap();
    assert_eq!(best.is_cuda(), gpu_runtime::is_available(), "{best:?}");
}

#[test]
fn arrays_on_the_cpu_device_hold_host_memory() {
    let cpu = Device::cpu();
    let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut v = DeviceVec::from_slice_on(&cpu, &data).unwrap();
    assert_eq!(v.device(), &cpu);
    assert_eq!((v.len(), v.to_vec().unwrap()), (1000, data.clone()));
    assert_eq!(v.slice(10..13).unwrap().to_vec().unwrap(), vec![10.0, 11.0, 12.0]);
    v.slice_mut(0..2).unwrap().copy_from(&[-1.0, -2.0]).unwrap();
    let mut out = vec![0.0f32; 1000];
    v.copy_to(&mut out).unwrap();
    assert_eq!(&out[..3], &[-1.0, -2.0, 2.0]);
    assert!(matches!(v.slice(999..1001), Err(Error::OutOfRange { .. })));
    assert!(matches!(v.copy_from(&[1.0]), Err(Error::LengthMismatch { .. })));
    let z = DeviceVec::<u8>::zeros_on(&cpu, 77).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0u8; 77]);
    let empty = DeviceVec::<f64>::zeros_on(&cpu, 0).unwrap();
    assert!(empty.is_empty() && empty.to_vec().unwrap().is_empty());
    assert!(format!("{v:?}").contains("on the CPU"), "{v:?}");
}

#[test]
fn calls_on_the_cpu_device_match_the_cpu_path() {
    let cpu = Device::cpu();
    for n in [0usize, 1, 7, 4097, 100_003] {
        let (a, b) = inputs(n);
        let want = fma3::cpu(&a, &b, 0.5f32).unwrap();
        assert_eq!(fma3::on(&cpu, &a, &b, 0.5f32).unwrap(), want, "n = {n}");
        // Arrays on the CPU device take the call there, whatever the default device is.
        let (da, db) = (DeviceVec::from_slice_on(&cpu, &a).unwrap(), DeviceVec::from_slice_on(&cpu, &b).unwrap());
        assert_eq!(fma3(&da, &db, 0.5f32).unwrap(), want, "n = {n}");
        assert_eq!(fma3::on(&cpu, da.as_slice(), &b, 0.5f32).unwrap(), want, "n = {n}");
        let on_device = cpu.scope(|| fma3::device(&a, &db, 0.5f32)).unwrap();
        assert_eq!((on_device.device().id(), on_device.to_vec().unwrap()), (DeviceId::Cpu, want.clone()));
        let mut out = DeviceVec::zeros_on(&cpu, n).unwrap();
        fma3::into(&mut out, &da, &b, 0.5f32).unwrap();
        assert_eq!(out.to_vec().unwrap(), want);
        let mut host_out = vec![0.0f32; n];
        cpu.scope(|| fma3::into(&mut host_out, &a, &b, 0.5f32)).unwrap();
        assert_eq!(host_out, want);
    }
    // Only scalars: one element, as everywhere.
    assert_eq!(fma3::on(&cpu, 2.0f32, 3.0f32, 1.0f32).unwrap(), vec![7.0]);
    // Mistakes are the same errors as on a GPU.
    let e = fma3::on(&cpu, &[1.0f32, 2.0], &[1.0f32], 0.0f32).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { function: "fma3", .. }), "{e:?}");
    let mut short = vec![0.0f32; 1];
    let e = cpu.scope(|| fma3::into(&mut short, &[1.0f32, 2.0], 1.0f32, 0.0f32)).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e:?}");
}

#[test]
fn a_fault_on_the_cpu_device_is_the_gpu_s_error() {
    let cpu = Device::cpu();
    // Several chunks of the parallel loop, the later zero in an earlier-finishing chunk
    // perhaps: the fault is still the first index.
    let a: Vec<i32> = (0..100_000).collect();
    let mut b = vec![3i32; 100_000];
    b[6001] = 0;
    b[90_000] = 0;
    let e = divide::on(&cpu, &a, &b).unwrap_err();
    match &e {
        Error::KernelFault { function, index, message } => {
            assert_eq!((*function, *index), ("divide", 6001));
            assert!(message.contains("divide by zero"), "{message}");
        }
        other => panic!("expected KernelFault, got {other:?}"),
    }
    assert_eq!(format!("{e}"), format!("{}", divide::cpu(&a, &b).unwrap_err()));
    // Queued on a stream of the CPU device, the fault comes from `wait`, as on a GPU.
    let stream = cpu.new_stream().unwrap();
    let pending = divide::launch(&stream, &a, &b).unwrap();
    assert!(pending.is_done());
    assert!(matches!(pending.wait(), Err(Error::KernelFault { index: 6001, .. })));
    // A host output is as it was after the fault, as on the GPU.
    let mut out = vec![-1i32; 100_000];
    assert!(matches!(cpu.scope(|| divide::into(&mut out, &a, &b)), Err(Error::KernelFault { index: 6001, .. })));
    assert!(out.iter().all(|v| *v == -1), "the CPU device wrote into the output before its fault");
}

#[test]
fn streams_of_the_cpu_device_run_each_call_when_queued() {
    let cpu = Device::cpu();
    let stream = cpu.new_stream().unwrap();
    assert_eq!(stream.device(), &cpu);
    let (a, b) = inputs(5000);
    let want = fma3::cpu(&a, &b, 1.0f32).unwrap();
    let p = fma3::launch(&stream, &a, &b, 1.0f32).unwrap();
    assert_eq!(p.wait().unwrap(), want);
    let d = fma3::launch_device(&stream, &a, &b, 1.0f32).unwrap().wait().unwrap();
    assert_eq!((d.device().is_cpu(), d.to_vec().unwrap()), (true, want.clone()));
    let mut out = vec![0.0f32; 5000];
    fma3::launch_into(&stream, &mut out, &a, &b, 1.0f32).unwrap().wait().unwrap();
    assert_eq!(out, want);
    stream.synchronize().unwrap();
    // A mistake in the call is reported when it is queued, as on a GPU.
    assert!(matches!(fma3::launch(&stream, &a[..3], &b, 1.0f32), Err(Error::LengthMismatch { .. })));
}

#[test]
fn tuple_results_and_generic_functions_on_the_cpu_device() {
    let cpu = Device::cpu();
    let x: Vec<f64> = (0..333).map(|i| i as f64 - 166.5).collect();
    let want = split::cpu(&x).unwrap();
    assert_eq!(split::on(&cpu, &x).unwrap(), want);
    let (abs, neg) = cpu.scope(|| split::device(&x)).unwrap();
    assert_eq!((abs.to_vec().unwrap(), neg.to_vec().unwrap()), want.clone());
    let (mut o1, mut o2) = (DeviceVec::zeros_on(&cpu, 333).unwrap(), vec![false; 333]);
    split::into((&mut o1, &mut o2), &x).unwrap();
    assert_eq!((o1.to_vec().unwrap(), o2), want);
    let xs = [1.0f32, 3.0];
    assert_eq!(halve::on(&cpu, &xs).unwrap(), vec![0.5f32, 1.5]);
    assert_eq!(halve::on(&cpu, &[5.0f64]).unwrap(), vec![2.5f64]);
}

#[test]
fn reductions_on_the_cpu_device() {
    let cpu = Device::cpu();
    let v: Vec<i64> = (0..100_001).map(|i| i * 3 - 7).collect();
    let want: i64 = v.iter().sum();
    let dv = DeviceVec::from_slice_on(&cpu, &v).unwrap();
    assert_eq!(add_i64::reduce(&dv).unwrap(), want);
    assert_eq!(cpu.scope(|| add_i64::reduce(&v)).unwrap(), want);
    assert_eq!(cpu.scope(|| add_i64::reduce(&[] as &[i64])).unwrap(), 0);
    let f: Vec<f32> = (0..9999).map(|i| ((i * 7919) % 10007) as f32).collect();
    assert_eq!(cpu.scope(|| max_f32::reduce(&f)).unwrap(), 10006.0);
    let e = cpu.scope(|| max_f32::reduce(&[] as &[f32])).unwrap_err();
    assert!(matches!(e, Error::EmptyReduce { function: "max_f32" }), "{e:?}");
    // A scalar reduces to itself.
    assert_eq!(cpu.scope(|| add_i64::reduce(5i64)).unwrap(), 5);
}

#[test]
fn n_dimensional_calls_on_the_cpu_device() {
    let cpu = Device::cpu();
    let a = ArrayD::from_shape_fn(IxDyn(&[3, 1, 4]), |ix| (ix[0] * 4 + ix[2]) as f32);
    let b = ArrayD::from_shape_fn(IxDyn(&[5, 4]), |ix| ix[0] as f32 - ix[1] as f32);
    let want = fma3::nd_cpu(&a, &b, 2.0f32).unwrap();
    assert_eq!(want.shape(), &[3, 5, 4]);
    assert_eq!(cpu.scope(|| fma3::nd(&a, &b, 2.0f32)).unwrap(), want);
    // The CPU device's arrays run where they are, whatever the default device.
    let (da, db) = (
        gpu_runtime::DeviceArray::from_array_on(&cpu, &a).unwrap(),
        gpu_runtime::DeviceArray::from_array_on(&cpu, &b).unwrap(),
    );
    assert_eq!(fma3::nd(&da, &db, 2.0f32).unwrap(), want);
    assert_eq!(fma3::nd_cpu(&da, &b, 2.0f32).unwrap(), want);
    let mut out = want.clone();
    out.fill(0.0);
    fma3::nd_into(&mut out, &da, &db, 2.0f32).unwrap();
    assert_eq!(out, want);
    let mut out = ArrayD::<f32>::zeros(IxDyn(&[3, 5, 4]));
    cpu.scope(|| fma3::nd_into(&mut out, &a, &b, 2.0f32)).unwrap();
    assert_eq!(out, want);
}

#[test]
fn on_devices_with_only_the_cpu_runs_there() {
    let cpu = Device::cpu();
    let (a, b) = inputs(1234);
    assert_eq!(fma3::on_devices(&[cpu.clone(), cpu], &a, &b, 0.0f32).unwrap(), fma3::cpu(&a, &b, 0.0f32).unwrap());
}

#[test]
fn explicit_kernels_on_the_cpu_device_run_in_the_simulator() {
    use kernel_defs::{axpy, off_by_one};
    let cpu = Device::cpu();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let y0: Vec<f32> = (0..1000).map(|i| (i % 5) as f32).collect();
    let want: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| 2.0 * x + y).collect();
    // Device arrays on the CPU take the launch there.
    let dx = DeviceVec::from_slice_on(&cpu, &x).unwrap();
    let mut dy = DeviceVec::from_slice_on(&cpu, &y0).unwrap();
    axpy::launch(4u32, 64u32, 2.0f32, &dx, &mut dy).unwrap();
    assert_eq!(dy.to_vec().unwrap(), want);
    // Host slices with the CPU named by the configuration, or the default in a scope.
    let mut y = y0.clone();
    axpy::launch_with(&LaunchConfig::new(4u32, 64u32).device(&cpu), 2.0f32, &x, &mut y).unwrap().wait().unwrap();
    assert_eq!(y, want);
    let mut y = y0.clone();
    cpu.scope(|| axpy::launch(2u32, 32u32, 2.0f32, &x, &mut y)).unwrap();
    assert_eq!(y, want);
    let stream = cpu.new_stream().unwrap();
    let mut y = y0.clone();
    axpy::launch_with(&LaunchConfig::new(1u32, 128u32).stream(&stream), 2.0f32, &dx, &mut y).unwrap().wait().unwrap();
    assert_eq!(y, want);
    // A fault is the GPU's error, from `wait`.
    let mut small = vec![0i32; 8];
    let e = cpu.scope(|| off_by_one::launch(1u32, 16u32, &mut small)).unwrap_err();
    assert!(matches!(e, Error::ThreadFault { kernel: "off_by_one", .. }), "{e:?}");
    // A launch over the block limit is refused at once.
    let e = cpu.scope(|| axpy::launch(1u32, 4096u32, 1.0f32, &x, &mut y)).unwrap_err();
    assert!(!matches!(e, Error::ThreadFault { .. }), "{e:?}");
}
