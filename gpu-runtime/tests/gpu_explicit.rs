//! An explicit kernel launched on the GPU through `ExplicitKernel`, with a hand-written
//! PTX entry that follows `kernel_abi`'s contract (until `#[kernel]` generates them):
//! `fill(y: &mut [u32])` writes `y.len()` to `y[grid1()]`, and a thread past the end
//! reports an index out of bounds through the fault record.

use gpu_runtime::__private::{ExplicitKernel, ExplicitSpec, KArg, KernelParam};
use gpu_runtime::{DeviceVec, Error, LaunchConfig};

const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry kernel_fill(
    .param .u64 y_ptr,
    .param .u64 y_len,
    .param .u64 fault
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [y_ptr];
    ld.param.u64 %rd2, [y_len];
    ld.param.u64 %rd3, [fault];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    cvt.u64.u32 %rd4, %r4;
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra FAULT;
    shl.b64 %rd5, %rd4, 2;
    add.s64 %rd6, %rd1, %rd5;
    cvt.u32.u64 %r5, %rd2;
    st.global.u32 [%rd6], %r5;
    ret;
FAULT:
    mov.u64 %rd10, 0;
    mov.u64 %rd11, 1;
    atom.global.cas.b64 %rd7, [%rd3], %rd10, %rd11;
    setp.ne.u64 %p2, %rd7, 0;
    @%p2 bra DONE;
    mov.u64 %rd8, 14;
    st.global.u64 [%rd3+8], %rd8;
    st.global.u64 [%rd3+16], %rd4;
    st.global.u64 [%rd3+24], %rd2;
    cvt.u64.u32 %rd8, %r1;
    st.global.u64 [%rd3+32], %rd8;
    cvt.u64.u32 %rd9, %r3;
    shl.b64 %rd9, %rd9, 32;
    st.global.u64 [%rd3+40], %rd9;
    st.global.u64 [%rd3+48], %rd10;
DONE:
    ret;
}
"#;

static FILL: ExplicitKernel = ExplicitKernel::new(ExplicitSpec {
    name: "fill",
    symbol: "kernel_fill",
    ptx: PTX,
    params: &[("y", KernelParam::Slice)],
});

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_host_slice_is_copied_in_and_back() {
    let mut y = vec![0u32; 6];
    FILL.launch(&LaunchConfig::new(2, 3), vec![KArg::output("y", &mut y)]).unwrap();
    assert_eq!(y, [6; 6]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_thread_past_the_end_is_a_thread_fault_and_the_host_slice_is_left_alone() {
    let mut y = vec![9u32; 6];
    let e = FILL.launch(&LaunchConfig::new(2, 4), vec![KArg::output("y", &mut y)]).unwrap_err();
    match e {
        Error::ThreadFault { kernel: "fill", block: [1, 0, 0], thread, message } => {
            // Threads 2 and 3 of block 1 fail; the record holds whichever came first.
            let index = thread[0] + 4;
            assert!(thread == [2, 0, 0] || thread == [3, 0, 0], "{thread:?}");
            assert_eq!(message, format!("index out of bounds: the len is 6 but the index is {index}"));
        }
        other => panic!("expected a thread fault, got {other:?}"),
    }
    assert_eq!(y, [9; 6]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_arrays_are_written_in_place_and_queued_launches_finish_on_wait() {
    let mut d = DeviceVec::<u32>::zeros(5).unwrap();
    FILL.launch(&LaunchConfig::new(1, 5), vec![KArg::output("y", &mut d)]).unwrap();
    assert_eq!(d.to_vec().unwrap(), [5; 5]);
    let stream = d.device().new_stream().unwrap();
    let mut y = vec![0u32; 3];
    let pending = FILL.launch_async(&LaunchConfig::new(1, 3).stream(&stream), vec![KArg::output("y", &mut y)]).unwrap();
    pending.wait().unwrap();
    assert_eq!(y, [3; 3]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn too_much_shared_memory_and_too_large_blocks_are_refused() {
    let mut y = vec![0u32; 4];
    let cfg = LaunchConfig::new(1, 4).shared_bytes(16 << 20);
    let e = FILL.launch(&cfg, vec![KArg::output("y", &mut y)]).unwrap_err();
    assert!(matches!(e, Error::LaunchConfig { kernel: "fill", .. }), "{e:?}");
    // More than 48 KiB of dynamic shared memory is opted in to.
    let cfg = LaunchConfig::new(1, 4).shared_bytes(64 << 10);
    FILL.launch(&cfg, vec![KArg::output("y", &mut y)]).unwrap();
    assert_eq!(y, [4; 4]);
}
