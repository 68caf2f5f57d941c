//! Asynchronous copies from global to shared memory (`gpu::copy_async*`, `cp.async`) in the
//! simulator: a double-buffered pipeline against the host's sum, 16-byte copies of `bf16`,
//! the checks with Rust's messages, and the destination used too early (by the copying
//! thread: a panic; by another: a data race). The GPU runs the same in `tests/gpu_mma.rs`.

mod common;
mod mma_defs;

use gpu_runtime::{Error, bf16};
use mma_defs::*;

fn integers(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 37) % 101) as f32 - 50.0).collect()
}

fn sums(x: &[f32], blocks: usize, stages: usize) -> Vec<f32> {
    x.chunks(STAGE * stages).take(blocks).map(|c| c.iter().sum()).collect()
}

#[test]
fn a_double_buffered_pipeline_sums_every_stage() {
    let (blocks, stages) = (3, 5);
    let x = integers(blocks * STAGE * stages);
    for width in [1, 2, 4] {
        let mut out = vec![f32::NAN; blocks];
        staged_sums::simulate(blocks as u32, STAGE as u32, &x, &mut out, stages, width).unwrap();
        assert_eq!(out, sums(&x, blocks, stages), "width {width}");
    }
}

#[test]
fn sixteen_byte_copies_of_halves() {
    let x: Vec<bf16> = (0..1024).map(|i| bf16::from_f32(i as f32 - 500.0)).collect();
    let mut out = vec![bf16::ZERO; 1024];
    copy_halves::simulate(2u32, 64u32, &x, &mut out).unwrap();
    assert_eq!(out, x);
}

fn thread_fault(r: gpu_runtime::Result<()>) -> String {
    match r {
        Err(Error::ThreadFault { message, .. }) => message,
        other => panic!("expected a thread fault, got {other:?}"),
    }
}

#[test]
fn a_copy_past_either_array_is_rust_s_range_error() {
    // The last block's copies reach past `x`: the source's check, after the destination's.
    let (blocks, stages) = (2, 2);
    let x = integers(blocks * STAGE * stages - 3);
    let mut out = vec![0.0f32; blocks];
    let m = thread_fault(staged_sums::simulate(blocks as u32, STAGE as u32, &x, &mut out, stages, 4));
    assert!(m.contains("range end index 4 out of range for slice of length 1"), "{m}");
}

/// The unchecked copies move what the checked ones do, and the simulator still checks them:
/// a copy past the end is Rust's range error (on a GPU, undefined behaviour).
#[test]
fn unchecked_copies_copy_and_are_checked_here() {
    let x = integers(3 * STAGE);
    for width in [1, 2, 4] {
        let mut out = vec![f32::NAN; 3 * STAGE];
        unchecked_copies::simulate(3u32, STAGE as u32, &x, &mut out, width).unwrap();
        assert_eq!(out, x, "width {width}");
    }
    let m = thread_fault(unchecked_past_the_end::simulate(1u32, 1u32, &x));
    assert!(m.contains("range end index 4 out of range for slice of length 2"), "{m}");
}

#[test]
fn the_destination_before_the_wait_is_an_error() {
    let x = integers(64);
    let mut out = vec![0.0f32; 64];
    let m = thread_fault(early_read::simulate(1u32, 64u32, &x, &mut out, false));
    assert!(m.contains("is read by the thread that copies into it asynchronously, before the copy is complete"), "{m}");
    // Another thread's element, after its own wait but with no barrier: a race.
    match early_read::simulate(1u32, 64u32, &x, &mut out, true) {
        Err(Error::DataRace { location, .. }) => assert!(location.contains("shared `f32` array"), "{location}"),
        other => panic!("expected a data race, got {other:?}"),
    }
}
