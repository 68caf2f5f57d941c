//! The CPU device beside a real GPU: `Device::best()` is the GPU, data never moves between
//! the CPU device and a GPU behind the caller's back (`DeviceMismatch`), and the same
//! program gives the same results on both.

mod kernel_defs;

use gpu_runtime::{Device, DeviceId, DeviceVec, Error, LaunchConfig, vectorize};

#[vectorize]
fn fma3(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

#[vectorize(identity = 0)]
fn add_i64(a: i64, b: i64) -> i64 {
    a + b
}

#[vectorize]
fn divide(a: i32, b: i32) -> i32 {
    a / b
}

fn devices(e: Error) -> Vec<(&'static str, DeviceId)> {
    match e {
        Error::DeviceMismatch { devices, .. } => devices,
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn best_is_the_gpu() {
    let best = Device::best().unwrap();
    assert!(best.is_cuda() && best.id() == DeviceId::Cuda(0), "{best:?}");
    assert_ne!(best, Device::cpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_program_gives_the_same_results_on_both() {
    let a: Vec<f32> = (0..100_000).map(|i| (i as f32 * 0.01).cos()).collect();
    let b: Vec<f32> = (0..100_000).map(|i| (i % 13) as f32).collect();
    let ints: Vec<i64> = (0..1_000_003).map(|i| i % 1000 - 400).collect();
    let run = |device: &Device| {
        let da = DeviceVec::from_slice_on(device, &a).unwrap();
        let mut out = DeviceVec::zeros_on(device, a.len()).unwrap();
        fma3::into(&mut out, &da, &b, 1.0f32).unwrap();
        let stream = device.new_stream().unwrap();
        let queued = fma3::launch(&stream, &da, &b, -1.0f32).unwrap().wait().unwrap();
        let di = DeviceVec::from_slice_on(device, &ints).unwrap();
        (out.to_vec().unwrap(), queued, add_i64::reduce(&di).unwrap(), device.scope(|| add_i64::reduce(&ints)).unwrap())
    };
    let (gpu, cpu) = (run(&Device::cuda(0).unwrap()), run(&Device::cpu()));
    // a * b + c: one rounding on both (the GPU contracts into an fma, the host need not):
    // within one ulp of the larger.
    for (x, y) in gpu.0.iter().zip(&cpu.0).chain(gpu.1.iter().zip(&cpu.1)) {
        assert!((x - y).abs() <= f32::EPSILON * x.abs().max(y.abs()).max(1.0), "{x} vs {y}");
    }
    assert_eq!((gpu.2, gpu.3), (cpu.2, cpu.3));
    // A fault is the same error on both.
    let (x, mut d) = ((0..5000).collect::<Vec<i32>>(), vec![1i32; 5000]);
    d[4321] = 0;
    let on_gpu = divide::on(&Device::cuda(0).unwrap(), &x, &d).unwrap_err();
    let on_cpu = divide::on(&Device::cpu(), &x, &d).unwrap_err();
    assert_eq!(on_gpu.to_string(), on_cpu.to_string());
    assert!(matches!(on_cpu, Error::KernelFault { index: 4321, .. }));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn data_does_not_move_between_the_cpu_device_and_a_gpu() {
    let (gpu, cpu) = (Device::cuda(0).unwrap(), Device::cpu());
    let x = [1.0f32, 2.0, 3.0];
    let on_gpu = DeviceVec::from_slice_on(&gpu, &x).unwrap();
    let on_cpu = DeviceVec::from_slice_on(&cpu, &x).unwrap();
    // A GPU array in a call on the CPU device, and the other way round.
    assert_eq!(
        devices(fma3::on(&cpu, &on_gpu, 1.0f32, 0.0f32).unwrap_err()),
        [("device", DeviceId::Cpu), ("a", DeviceId::Cuda(0))]
    );
    assert_eq!(
        devices(fma3::on(&gpu, &on_cpu, 1.0f32, 0.0f32).unwrap_err()),
        [("device", DeviceId::Cuda(0)), ("a", DeviceId::Cpu)]
    );
    // Arrays on both in one call: the CPU array takes the call to the CPU, which refuses
    // the other.
    let e = fma3(&on_gpu, &on_cpu, 0.0f32).unwrap_err();
    assert_eq!(devices(e), [("device", DeviceId::Cpu), ("a", DeviceId::Cuda(0))]);
    // Outputs too.
    let mut out_gpu = DeviceVec::<f32>::zeros_on(&gpu, 3).unwrap();
    let e = fma3::into(&mut out_gpu, &on_cpu, 1.0f32, 0.0f32).unwrap_err();
    assert_eq!(devices(e), [("device", DeviceId::Cpu), ("out", DeviceId::Cuda(0))]);
    let mut out_cpu = DeviceVec::<f32>::zeros_on(&cpu, 3).unwrap();
    let e = fma3::into(&mut out_cpu, &on_gpu, 1.0f32, 0.0f32).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e:?}");
    // The data decides where a call without a device runs: a GPU array reduces on its GPU
    // inside a scope of the CPU device (as an array on GPU 0 does under default GPU 1).
    let ones = DeviceVec::from_slice_on(&gpu, &[1i64; 1000]).unwrap();
    assert_eq!(cpu.scope(|| add_i64::reduce(&ones)).unwrap(), 1000);
    // A stream of the CPU device with a GPU array.
    let stream = cpu.new_stream().unwrap();
    assert!(matches!(fma3::launch(&stream, &on_gpu, 1.0f32, 0.0f32), Err(Error::DeviceMismatch { .. })));
    // The CPU among GPUs in one `on_devices` call.
    let e = fma3::on_devices(&[gpu.clone(), cpu.clone()], &x, 1.0f32, 0.0f32).unwrap_err();
    assert!(matches!(e, Error::MixedDevices { function: "fma3" }), "{e:?}");
    // Explicit kernels: a CPU array with a GPU array, and a GPU launch given a CPU array.
    let mut y_cpu = DeviceVec::<f32>::zeros_on(&cpu, 3).unwrap();
    let e = kernel_defs::axpy::launch(1u32, 32u32, 1.0f32, &on_gpu, &mut y_cpu).unwrap_err();
    assert_eq!(devices(e), [("x", DeviceId::Cuda(0)), ("y", DeviceId::Cpu)]);
    let e =
        kernel_defs::axpy::launch_with(&LaunchConfig::new(1u32, 32u32).device(&gpu), 1.0f32, &on_cpu, &mut [0.0f32; 3])
            .unwrap_err();
    assert_eq!(devices(e), [("device", DeviceId::Cuda(0)), ("x", DeviceId::Cpu)]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn columns_on_the_gpu_are_read_in_place_there_and_refused_elsewhere() {
    use gpu_runtime::columnar::{Column, ColumnArg, DeviceColumn, Value, Values};
    let gpu = Device::best().unwrap();
    let f = fma3::COLUMNAR.functions()[0];
    let n = 3_000_000;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let c: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let da = DeviceColumn::on(&gpu, Values::F32(&a)).unwrap();
    assert_eq!(da.values().to_column().unwrap(), Column::F32(a.clone()));
    let args = [ColumnArg::Device(da.values()), ColumnArg::Scalar(Value::F32(1.5)), ColumnArg::Column(Values::F32(&c))];
    let want = fma3::cpu(&a, 1.5, &c).unwrap();
    assert_eq!(f.call(&gpu, &args).unwrap(), vec![Column::F32(want.clone())]);
    let part = da.values().slice(1000..2_001_000).unwrap();
    let args = [
        ColumnArg::Device(part),
        ColumnArg::Scalar(Value::F32(1.5)),
        ColumnArg::Column(Values::F32(&c[1000..2_001_000])),
    ];
    assert_eq!(f.call(&gpu, &args).unwrap(), vec![Column::F32(want[1000..2_001_000].to_vec())]);
    let args = [ColumnArg::Device(da.values()), ColumnArg::Scalar(Value::F32(1.5)), ColumnArg::Column(Values::F32(&c))];
    let e = f.call(&Device::cpu(), &args).unwrap_err();
    assert!(devices(e).contains(&("a", gpu.id())));
    // Results straight into page-locked memory.
    let mut out = gpu_runtime::PageLocked::<u8>::zeroed(&gpu, 4 * n).unwrap();
    let outs = vec![out.column_mut(gpu_runtime::columnar::Kind::F32, n).unwrap()];
    f.call_into(&gpu, &args, outs).unwrap();
    let got: Vec<f32> = out.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    assert_eq!(got, want);
    let mut typed = gpu_runtime::PageLocked::<f32>::zeroed(&gpu, n).unwrap();
    fma3::into(&mut typed[..], &a, 1.5f32, &c).unwrap();
    assert_eq!(typed.as_slice(), &want[..]);
}
