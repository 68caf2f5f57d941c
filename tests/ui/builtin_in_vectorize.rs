use gpu_runtime::{gpu, vectorize};

#[vectorize]
fn lane(x: u32) -> u32 {
    x + gpu::lane_id()
}

fn main() {}
