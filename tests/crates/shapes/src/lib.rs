//! GPU structs defined in a crate of their own: the top-level package's tests use them in
//! kernels and vectorized functions of theirs (`tests/struct_defs`), as a user's crate
//! uses another crate's types.

pub mod geo {
    use gpu_runtime::GpuType;

    #[derive(Clone, Copy, Debug, PartialEq, GpuType)]
    #[repr(C)]
    pub struct Point {
        pub x: f32,
        pub y: f32,
    }

    /// A struct whose fields are another struct of this crate: its definition reaches the
    /// other crate with the one it names.
    #[derive(Clone, Copy, Debug, PartialEq, GpuType)]
    #[repr(C)]
    pub struct Segment {
        pub a: Point,
        pub b: Point,
        pub weight: f64,
    }

    /// `n` segments, every field set from the index.
    pub fn segments(n: usize) -> Vec<Segment> {
        (0..n)
            .map(|i| {
                let t = i as f32;
                Segment { a: Point { x: t, y: -t }, b: Point { x: 2.0 * t, y: 0.5 }, weight: i as f64 * 0.25 }
            })
            .collect()
    }
}
