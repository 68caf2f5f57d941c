use gpu_runtime::{gpu, kernel, random, vectorize};

// A name the library lacks, and one it keeps private, through either path.
#[vectorize]
fn half_noise(seed: u64, i: u64) -> f32 {
    random::uniform_f16(seed, 0, i)
}

#[kernel]
fn pairs(seed: u64, out: &mut [u32]) {
    let i = gpu::grid1();
    if i < out.len() {
        out[i] = gpu_runtime::random::word_pair(seed, 0, i as u64).0;
    }
}

// A call with the wrong argument types is checked against the library's signature.
#[vectorize]
fn typed(seed: u32, i: u64) -> f32 {
    random::uniform_f32(seed, 0, i)
}

fn main() {}
