//! Devices, memory and tracing on the GPU: listing, scoped choice, out-of-memory as an
//! error, memory that does not grow over many calls, and the per-call trace events.

use std::sync::{Arc, Mutex};

use gpu_runtime::{Device, DeviceId, DeviceVec, Error, vectorize};

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn devices_are_listed_with_their_memory() {
    let list = gpu_runtime::devices().unwrap();
    assert!(!list.is_empty());
    for (i, d) in list.iter().enumerate() {
        assert_eq!(d.ordinal, i);
        assert!(!d.name.is_empty() && d.sm_count > 0, "{d:?}");
        assert!(d.total_memory > 0 && d.free_memory <= d.total_memory, "{d:?}");
        assert!(d.compute_capability >= (7, 0), "{d:?}");
    }
    let (major, _) = gpu_runtime::driver_version().unwrap();
    assert!(major >= 12, "driver supports CUDA {major}");
    assert!(gpu_runtime::is_available());
    assert!(matches!(Device::cuda(list.len()), Err(Error::DeviceNotFound { .. })));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_scope_chooses_the_device_for_its_calls() {
    let d = Device::cuda(gpu_runtime::device_count().unwrap() - 1).unwrap();
    let outer = gpu_runtime::default_device().unwrap();
    let inside = d.scope(|| {
        let v = DeviceVec::from_slice(&[1.0f32, 2.0]).unwrap();
        assert_eq!(v.device(), &d);
        assert_eq!(add(&[1.0f32], 2.0).unwrap(), vec![3.0]);
        // Scopes nest and restore.
        outer.scope(|| assert_eq!(gpu_runtime::default_device().unwrap(), outer));
        gpu_runtime::default_device().unwrap()
    });
    assert_eq!(inside, d);
    assert_eq!(gpu_runtime::default_device().unwrap(), outer);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn too_large_an_allocation_is_an_error() {
    let device = gpu_runtime::default_device().unwrap();
    let (free, total) = device.memory_info().unwrap();
    let n = total / 4 + (1 << 20); // more f32s than the card holds
    match DeviceVec::<f32>::zeros(n) {
        Err(Error::OutOfMemory { requested, free: reported }) => {
            assert!(requested >= n * 4, "{requested}");
            assert!(reported <= total, "{reported}");
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // The device is still usable.
    assert_eq!(add(&[1.0f32], 1.0).unwrap(), vec![2.0]);
    let after = device.memory_info().unwrap().0;
    assert!(after + (256 << 20) >= free, "free memory went from {free} to {after}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memory_does_not_grow_over_many_calls() {
    let device = gpu_runtime::default_device().unwrap();
    let a: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let da = DeviceVec::from_slice(&a).unwrap();
    let mut out = DeviceVec::<f32>::zeros(a.len()).unwrap();
    let mut round = |k: usize| {
        add::into(&mut out, &da, k as f32).unwrap();
        let on_device = add::device(&da, &da).unwrap();
        drop(on_device);
        if k % 10 == 0 {
            assert_eq!(add(&a[..16], 1.0).unwrap()[15], 16.0);
        }
    };
    for k in 0..1000 {
        round(k);
    }
    device.synchronize().unwrap();
    let before = device.memory_info().unwrap().0;
    for k in 0..100_000 {
        round(k);
    }
    device.synchronize().unwrap();
    let after = device.memory_info().unwrap().0;
    assert!(after + (64 << 20) >= before, "free memory fell from {before} to {after} over 10^5 calls");
    assert_eq!(out.to_vec().unwrap()[1], 1.0 + 99_999.0);
}

/// A subscriber that keeps each event's fields as text.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={:?} ", field.name(), value));
            }
        }
        let mut f = Fields(format!("{} ", event.metadata().target()));
        event.record(&mut f);
        self.0.lock().unwrap().push(f.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn each_call_emits_a_trace_event() {
    let recorder = Recorder::default();
    let events = recorder.0.clone();
    tracing::subscriber::with_default(recorder, || {
        let a = vec![1.0f32; 1000];
        add(&a, 2.0).unwrap();
        let d = DeviceVec::from_slice(&a).unwrap();
        let mut out = DeviceVec::<f32>::zeros(1000).unwrap();
        add::into(&mut out, &d, &d).unwrap();
    });
    let events = events.lock().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    let host = &events[0];
    assert!(host.starts_with("gpu_runtime "), "{host}");
    for part in ["function=\"add\"", "elements=1000", "bytes_to_device=4000", "bytes_from_device=4000", "waited=true"] {
        assert!(host.contains(part), "{part} in {host}");
    }
    let device = &events[1];
    for part in ["bytes_to_device=0", "bytes_from_device=0", "waited=false"] {
        assert!(device.contains(part), "{part} in {device}");
    }
}

#[test]
#[ignore = "needs two CUDA GPUs (fails on a host with one)"]
fn two_devices_keep_their_data_apart() {
    let count = gpu_runtime::device_count().unwrap();
    assert!(count >= 2, "this host has {count} GPU(s): the two-device checks need a second one");
    let (d0, d1) = (Device::cuda(0).unwrap(), Device::cuda(1).unwrap());
    let a0 = DeviceVec::from_slice_on(&d0, &[1.0f32, 2.0]).unwrap();
    let a1 = DeviceVec::from_slice_on(&d1, &[3.0f32, 4.0]).unwrap();
    // Arguments on different devices: an error naming them, not a copy.
    match add(&a0, &a1) {
        Err(Error::DeviceMismatch { devices, .. }) => {
            assert_eq!(devices, vec![("a", DeviceId::Cuda(0)), ("b", DeviceId::Cuda(1))])
        }
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
    // Each device computes on its own data, chosen per call or by scope.
    assert_eq!(add::on(&d1, &a1, 1.0).unwrap(), vec![4.0, 5.0]);
    let r = d1.scope(|| add::device(&a1, &a1).unwrap());
    assert_eq!(r.device(), &d1);
    assert_eq!(r.to_vec().unwrap(), vec![6.0, 8.0]);
    assert_eq!(add(&a0, &a0).unwrap(), vec![2.0, 4.0]);
    assert!(matches!(add::on(&d0, &a1, 1.0), Err(Error::DeviceMismatch { .. })));
    // One call over both: host data is split, a device array is not moved.
    let x: Vec<f32> = (0..100_000).map(|i| i as f32).collect();
    let want: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    assert_eq!(add::on_devices(&[d0.clone(), d1.clone()], &x, 1.0).unwrap(), want);
    match add::on_devices(&[d0, d1], &a0, 1.0) {
        Err(Error::DeviceMismatch { devices, .. }) => {
            assert_eq!(devices, vec![("device", DeviceId::Cuda(1)), ("a", DeviceId::Cuda(0))])
        }
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
}
