use gpu_runtime::vectorize;

struct Scale;

impl Scale {
    #[vectorize(target = "cuda")]
    fn twice(x: f32) -> f32 {
        x * 2.0
    }
}

fn main() {}
