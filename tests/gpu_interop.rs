//! Device memory shared with cudarc, on the GPU: cudarc's kernels and ours on the same
//! memory, each seeing the other's writes in order, with the memory taken, given, lent
//! and borrowed across the boundary, and raw pointers.

use std::sync::Arc;

use gpu_runtime::cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use gpu_runtime::cudarc::nvrtc::Ptx;
use gpu_runtime::{Device, DeviceVec, Error, vectorize};

#[vectorize]
fn add_one(x: f32) -> f32 {
    x + 1.0
}

/// `x[i] *= 2` for `i < n`, written as PTX so that cudarc loads it without a compiler.
const DOUBLE: &str = "
.version 7.0
.target sm_70
.address_size 64
.visible .entry double_it(.param .u64 x, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [x];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
";

const N: usize = 1 << 24;

fn setup() -> (Device, Arc<CudaContext>, Arc<CudaStream>, CudaFunction) {
    let device = Device::cuda(0).unwrap();
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let module = ctx.load_module(Ptx::from_src(DOUBLE)).unwrap();
    let f = module.load_function("double_it").unwrap();
    (device, ctx, stream, f)
}

/// Queues `double_it` on `stream` over the first `n` elements of `x` (a cudarc slice or
/// mutable view).
macro_rules! launch_double {
    ($stream:expr, $f:expr, $x:expr, $n:expr) => {{
        let n32 = $n as u32;
        let cfg =
            LaunchConfig { grid_dim: ($n.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut b = $stream.launch_builder($f);
        b.arg($x).arg(&n32);
        // SAFETY: `double_it` takes a pointer to `n` f32s and `n`, as given.
        unsafe { b.launch(cfg) }.unwrap();
    }};
}

fn input() -> Vec<f32> {
    (0..N).map(|i| (i % 1000) as f32 * 0.5).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memory_taken_from_cudarc_and_given_back() {
    let (device, _ctx, stream, f) = setup();
    let x = input();
    let mut slice = stream.clone_htod(&x).unwrap();
    launch_double!(stream, &f, &mut slice, N);
    // Taken: our kernel runs after cudarc's (queued, not waited for).
    let v = DeviceVec::from_cudarc(&device, slice).unwrap();
    let mut w = DeviceVec::from_cudarc(&device, stream.clone_htod(&x).unwrap()).unwrap();
    add_one::into(&mut w, &v).unwrap();
    // Given back: cudarc's kernel on its stream runs after ours.
    let mut back = w.into_cudarc(&stream).unwrap();
    launch_double!(stream, &f, &mut back, N);
    let got = stream.clone_dtoh(&back).unwrap();
    let bad = (0..N).filter(|&i| got[i] != 2.0 * (2.0 * x[i] + 1.0)).count();
    assert_eq!(bad, 0, "first: {:?}", (0..N).find(|&i| got[i] != 2.0 * (2.0 * x[i] + 1.0)).map(|i| (i, got[i], x[i])));
    drop(v);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ours_lent_to_cudarc_and_cudarc_lent_to_us() {
    let (device, _ctx, stream, f) = setup();
    let x = input();
    // Ours, lent to cudarc's stream: its kernel runs after our write, ours after its.
    let mut v = DeviceVec::from_slice_on(&device, &x).unwrap();
    add_one::into(&mut v, &DeviceVec::from_slice_on(&device, &x).unwrap()).unwrap();
    {
        let mut view = v.cudarc_view_mut(&stream).unwrap();
        launch_double!(stream, &f, &mut view, N);
    }
    let out = add_one(&v).unwrap();
    let bad = (0..N).filter(|&i| out[i] != 2.0 * (x[i] + 1.0) + 1.0).count();
    assert_eq!(bad, 0, "our read did not see cudarc's write");
    // cudarc's, lent to us: our write is done before cudarc reads after the borrow.
    let mut slice = stream.clone_htod(&x).unwrap();
    {
        let mut borrow = DeviceVec::borrow_cudarc_mut(&device, &mut slice).unwrap();
        let src = DeviceVec::from_slice_on(&device, &x).unwrap();
        add_one::into(borrow.as_mut_slice(), &src).unwrap();
    }
    launch_double!(stream, &f, &mut slice, N);
    let got = stream.clone_dtoh(&slice).unwrap();
    assert_eq!((0..N).filter(|&i| got[i] != 2.0 * (x[i] + 1.0)).count(), 0);
    // Read-only borrow.
    let borrow = DeviceVec::borrow_cudarc(&device, &slice).unwrap();
    let out = add_one(borrow.as_slice()).unwrap();
    assert_eq!((0..N).filter(|&i| out[i] != 2.0 * (x[i] + 1.0) + 1.0).count(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_pointers_and_refusals() {
    let (device, ctx, stream, _f) = setup();
    let x = input();
    let slice = stream.clone_htod(&x).unwrap();
    stream.synchronize().unwrap();
    let ptr = {
        use gpu_runtime::cudarc::driver::DevicePtr;
        let (p, _record) = slice.device_ptr(&stream);
        p
    };
    {
        // SAFETY: `slice` holds N f32s at `ptr`, lives past the vector, and nothing else
        // touches it meanwhile (the stream was synchronised).
        let raw = unsafe { DeviceVec::<f32>::from_raw_parts(&device, ptr, N) }.unwrap();
        let out = add_one(&raw).unwrap();
        assert_eq!((0..N).filter(|&i| out[i] != x[i] + 1.0).count(), 0);
        // Memory it does not own cannot be given away.
        let e = raw.into_cudarc(&stream).unwrap_err();
        assert!(e.to_string().contains("does not own its memory"), "{e}");
    }
    // SAFETY: as above; the pointer is off by one byte, which the constructor refuses.
    let e = unsafe { DeviceVec::<f32>::from_raw_parts(&device, ptr + 1, 4) }.unwrap_err();
    assert!(matches!(e, Error::Interop { .. }) && e.to_string().contains("not aligned"), "{e}");
    // The per-thread default stream names a different stream on each thread; a slice on
    // it is refused before it is taken apart.
    let v = DeviceVec::from_slice_on(&device, &x[..10]).unwrap();
    let e = v.cudarc_view(&ctx.per_thread_stream()).unwrap_err();
    assert!(e.to_string().contains("per-thread default stream"), "{e}");
    let pts = ctx.per_thread_stream();
    let on_pts = pts.clone_htod(&x[..10]).unwrap();
    let e = DeviceVec::from_cudarc(&device, on_pts).unwrap_err();
    assert!(e.to_string().contains("per-thread default stream"), "{e}");
    // The CPU device has no CUDA memory.
    let e = DeviceVec::from_cudarc(&Device::cpu(), slice).unwrap_err();
    assert!(e.to_string().contains("CPU device"), "{e}");
}
