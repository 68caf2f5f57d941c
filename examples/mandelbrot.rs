//! The Mandelbrot set, with num-complex's `Complex<f64>` in a vectorized function: each
//! point `c` of the picture iterates `z ← z² + c` from `z = 0` until `|z| > 2` or a limit,
//! and the count of steps colours the pixel.
//!
//! `cargo run --release --example mandelbrot [out.png]` renders 1920 × 1080 points with up
//! to 2,000 steps each on the best device, checks every count against the same function
//! on the CPU (`mandelbrot::parallel`: the arithmetic is `+ - *` only, so the counts are
//! equal, not close), and writes the picture as a PNG (`mandelbrot.png` by default).

use std::path::Path;

use gpu_runtime::{Complex, Complex64, Device, vectorize};

/// The number of steps of `z ← z² + c` (from `z = 0`) that stay within `|z| ≤ 2`, up to
/// `limit`: `limit` for a point of the set (as far as `limit` steps can tell).
#[vectorize]
pub fn escape(c: Complex64, limit: u32) -> u32 {
    let mut z = Complex::new(0.0f64, 0.0);
    let mut n = 0;
    while n < limit && z.norm_sqr() <= 4.0 {
        z = z * z + c;
        n += 1;
    }
    n
}

/// A rectangle of the complex plane, sampled at `width` × `height` pixel centres.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub center: Complex64,
    /// The width of the rectangle in the plane (the height follows from the pixels).
    pub span: f64,
    pub width: usize,
    pub height: usize,
}

impl View {
    /// The whole set, as it is usually shown.
    pub fn whole(width: usize, height: usize) -> View {
        View { center: Complex::new(-0.65, 0.0), span: 3.4, width, height }
    }

    /// Each pixel's point, row by row from the top.
    pub fn points(&self) -> Vec<Complex64> {
        let step = self.span / self.width as f64;
        let (x0, y0) =
            (self.center.re - step * self.width as f64 / 2.0, self.center.im + step * self.height as f64 / 2.0);
        (0..self.height)
            .flat_map(|r| {
                (0..self.width).map(move |c| Complex::new(x0 + (c as f64 + 0.5) * step, y0 - (r as f64 + 0.5) * step))
            })
            .collect()
    }
}

/// The escape counts of every pixel of `view`, computed on `device`.
pub fn render(device: &Device, view: &View, limit: u32) -> gpu_runtime::Result<Vec<u32>> {
    escape::on(device, &view.points(), limit)
}

/// An RGB colour for each count: black inside the set, and outside a smooth ramp over the
/// logarithm of the count (most points escape within a few steps).
pub fn colours(counts: &[u32], limit: u32) -> Vec<u8> {
    let top = (limit.max(2) as f64).ln();
    counts
        .iter()
        .flat_map(|&n| {
            if n >= limit {
                return [0, 0, 0];
            }
            let t = (n.max(1) as f64).ln() / top;
            let ramp = |phase: f64| (255.0 * (0.5 - 0.5 * (std::f64::consts::TAU * (t + phase)).cos())) as u8;
            [ramp(0.05), ramp(0.25), ramp(0.55)]
        })
        .collect()
}

/// Writes `rgb` (3 bytes per pixel, rows from the top) as an 8-bit RGB PNG.
pub fn write_png(path: &Path, width: usize, height: usize, rgb: &[u8]) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let (w, h) =
        (u32::try_from(width).map_err(std::io::Error::other)?, u32::try_from(height).map_err(std::io::Error::other)?);
    let mut encoder = png::Encoder::new(file, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer.write_image_data(rgb).map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "mandelbrot.png".to_string());
    let device = Device::best()?;
    let (view, limit) = (View::whole(1920, 1080), 2000);
    let points = view.points();
    // The first call on a device loads its module: done before the timing.
    escape::on(&device, Complex::new(0.0, 0.0), 1)?;
    let start = std::time::Instant::now();
    let counts = escape::on(&device, &points, limit)?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let on_cpu = escape::parallel(&points, limit)?;
    let differ = counts.iter().zip(&on_cpu).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "{differ} counts differ from the CPU's");
    write_png(Path::new(&path), view.width, view.height, &colours(&counts, limit))?;
    let inside = counts.iter().filter(|&&n| n == limit).count();
    let steps: u64 = counts.iter().map(|&n| n as u64).sum();
    println!(
        "{} x {} points, up to {limit} steps: {steps} steps in {ms:.1} ms on {} (the copies included; {inside} points in the set); equal to the CPU's; wrote {path}",
        view.width,
        view.height,
        device.name()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_device_counts_as_the_cpu() {
        let (view, limit) = (View::whole(160, 90), 500);
        let counts = render(&Device::cpu(), &view, limit).unwrap();
        assert_eq!(counts, escape::cpu(&view.points(), limit).unwrap());
        // Points known to be inside, and outside after exactly one step.
        assert_eq!(escape::cpu(Complex::new(-1.0, 0.0), limit).unwrap(), [limit]);
        assert_eq!(escape::cpu(Complex::new(0.0, 0.0), limit).unwrap(), [limit]);
        assert_eq!(escape::cpu(Complex::new(3.0, 0.0), limit).unwrap(), [1]);
        // The set is symmetric about the real axis; the picture's rows about its middle.
        for r in 0..view.height / 2 {
            let (top, bottom) = (r * view.width, (view.height - 1 - r) * view.width);
            assert_eq!(counts[top..top + view.width], counts[bottom..bottom + view.width], "row {r}");
        }
    }

    #[test]
    fn the_png_holds_the_picture() {
        let (view, limit) = (View::whole(64, 36), 200);
        let counts = render(&Device::cpu(), &view, limit).unwrap();
        let rgb = colours(&counts, limit);
        let path = std::env::temp_dir().join(format!("mandelbrot-test-{}.png", std::process::id()));
        write_png(&path, view.width, view.height, &rgb).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((info.width, info.height, info.color_type), (64, 36, png::ColorType::Rgb));
        assert_eq!(&buf[..info.buffer_size()], &rgb[..]);
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn the_gpu_counts_as_the_cpu() {
        let (view, limit) = (View::whole(960, 540), 1000);
        let gpu = render(&Device::cuda(0).unwrap(), &view, limit).unwrap();
        assert_eq!(gpu, escape::parallel(&view.points(), limit).unwrap());
    }
}
