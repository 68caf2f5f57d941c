//! NumPy-style broadcasting over `ndarray` arrays (`gpu-runtime`'s `ndarray` feature):
//! a row vector over a matrix, a column against a row, a transposed view, read where they
//! are without host-side copies of the views.

use gpu_runtime::ndarray::{Array1, Array2, s};
use gpu_runtime::{Error, vectorize};

#[vectorize(target = "cuda")]
fn standardize(x: f32, mean: f32, std: f32) -> f32 {
    (x - mean) / std
}

#[vectorize(target = "cuda")]
fn distance(x: f64, y: f64) -> f64 {
    (x * x + y * y).sqrt()
}

fn main() -> gpu_runtime::Result<()> {
    let data = Array2::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f32);
    let mean = Array1::from_vec(vec![4.5f32, 5.5, 6.5]);
    let std = Array1::from_vec(vec![3.0f32, 3.0, 3.0]);
    let xs = Array2::from_shape_fn((3, 1), |(i, _)| i as f64);
    let ys = Array1::from_vec(vec![0.0f64, 1.0, 2.0, 3.0]);

    let (z, grid, reversed) = match standardize::nd(&data, &mean, &std) {
        Ok(z) => {
            println!("on the GPU");
            // (3, 1) against (4,): a (3, 4) grid.
            (z, distance::nd(&xs, &ys)?, standardize::nd(data.slice(s![..;-1, ..]).t(), 0.0f32, 1.0f32)?)
        }
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); on the CPU:");
            (
                standardize::nd_cpu(&data, &mean, &std)?,
                distance::nd_cpu(&xs, &ys)?,
                standardize::nd_cpu(data.slice(s![..;-1, ..]).t(), 0.0f32, 1.0f32)?,
            )
        }
        Err(e) => return Err(e),
    };
    println!("standardized columns:\n{z:.3}");
    println!("distances from the origin on a grid:\n{grid:.3}");
    println!("rows reversed, then transposed:\n{reversed}");
    // Shapes that do not broadcast are an error that names them.
    let e = standardize::nd_cpu(&data, &Array1::<f32>::zeros(4), 1.0f32).unwrap_err();
    println!("{e}");
    Ok(())
}
