use gpu_runtime::vectorize;

#[vectorize(launch_bounds(256))]
fn twice(x: f32) -> f32 {
    x * 2.0
}

fn main() {}
