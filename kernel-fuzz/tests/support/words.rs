//! Calling a rustc-compiled function of the kernel language's types, the half and complex
//! types included, with its arguments and results as `u64` words laid out as
//! `kernel_fuzz::Value::to_words` lays them out (a `Complex<f64>` takes two). The fuzzer's
//! own `kernel_fuzz::native` has no dependencies, so it cannot name `half` or num-complex:
//! the tests, which have them, bring this.

use half::{bf16, f16};
use num_complex::Complex;

/// A value as words.
pub trait Word: Copy {
    /// How many words it takes.
    const WORDS: usize;
    /// The value whose words start `w`.
    fn take(w: &[u64]) -> Self;
    fn put(self, out: &mut Vec<u64>);
}

macro_rules! word_int {
    ($($t:ty: $u:ty),*) => {$(
        impl Word for $t {
            const WORDS: usize = 1;
            fn take(w: &[u64]) -> $t {
                w[0] as $u as $t
            }
            fn put(self, out: &mut Vec<u64>) {
                out.push(self as $u as u64);
            }
        }
    )*};
}
word_int!(i8: u8, i16: u16, i32: u32, i64: u64, isize: u64, u8: u8, u16: u16, u32: u32, u64: u64, usize: u64);

impl Word for bool {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> bool {
        w[0] as u8 != 0
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self as u64);
    }
}

impl Word for f32 {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> f32 {
        f32::from_bits(w[0] as u32)
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.to_bits() as u64);
    }
}

impl Word for f64 {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> f64 {
        f64::from_bits(w[0])
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.to_bits());
    }
}

impl Word for f16 {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> f16 {
        f16::from_bits(w[0] as u16)
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.to_bits() as u64);
    }
}

impl Word for bf16 {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> bf16 {
        bf16::from_bits(w[0] as u16)
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.to_bits() as u64);
    }
}

/// `re` in the low half, `im` in the high half.
impl Word for Complex<f32> {
    const WORDS: usize = 1;
    fn take(w: &[u64]) -> Complex<f32> {
        Complex::new(f32::from_bits(w[0] as u32), f32::from_bits((w[0] >> 32) as u32))
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.re.to_bits() as u64 | (self.im.to_bits() as u64) << 32);
    }
}

/// `re`'s word, then `im`'s.
impl Word for Complex<f64> {
    const WORDS: usize = 2;
    fn take(w: &[u64]) -> Complex<f64> {
        Complex::new(f64::from_bits(w[0]), f64::from_bits(w[1]))
    }
    fn put(self, out: &mut Vec<u64>) {
        out.push(self.re.to_bits());
        out.push(self.im.to_bits());
    }
}

/// A function's result as words: one value, or a tuple's values in order.
pub trait Results {
    fn words(self) -> Vec<u64>;
}

impl<T: Word> Results for T {
    fn words(self) -> Vec<u64> {
        let mut out = Vec::new();
        self.put(&mut out);
        out
    }
}

macro_rules! results_tuple {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Word),*> Results for ($($t,)*) {
            fn words(self) -> Vec<u64> {
                let mut out = Vec::new();
                $(self.$i.put(&mut out);)*
                out
            }
        }
    };
}
results_tuple!(A 0);
results_tuple!(A 0, B 1);
results_tuple!(A 0, B 1, C 2);
results_tuple!(A 0, B 1, C 2, D 3);
results_tuple!(A 0, B 1, C 2, D 3, E 4);
results_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

/// A function called with its arguments' words; returns its results' words.
pub trait CallWords<Args> {
    fn call_words(&self, args: &[u64]) -> Vec<u64>;
}

macro_rules! call_arity {
    ($($a:ident),*) => {
        impl<F: Fn($($a),*) -> R, R: Results, $($a: Word),*> CallWords<($($a,)*)> for F {
            #[allow(non_snake_case, unused_mut, unused_variables, unused_assignments)]
            fn call_words(&self, args: &[u64]) -> Vec<u64> {
                let mut i = 0;
                $(let $a = $a::take(&args[i..]); i += $a::WORDS;)*
                assert_eq!(i, args.len(), "argument words");
                self($($a),*).words()
            }
        }
    };
}
call_arity!();
call_arity!(A);
call_arity!(A, B);
call_arity!(A, B, C);
call_arity!(A, B, C, D);
call_arity!(A, B, C, D, E);
call_arity!(A, B, C, D, E, G);

/// `f` on `args`' words: its results' words.
pub fn call<Args, F: CallWords<Args>>(f: &F, args: &[u64]) -> Vec<u64> {
    f.call_words(args)
}
