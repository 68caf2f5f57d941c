//! Calling a native function (the rustc-compiled reference) with arguments and results as
//! bits in `u64` words, the form the host JIT and the interpreter share.

/// A scalar's bits in the low bytes of a `u64`, as the runtime passes them.
pub trait Bits: Copy {
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! bits_int {
    ($($t:ty: $u:ty),*) => {$(
        impl Bits for $t {
            fn to_u64(self) -> u64 {
                self as $u as u64
            }
            fn from_u64(v: u64) -> Self {
                v as $u as $t
            }
        }
    )*};
}
bits_int!(i8: u8, i16: u16, i32: u32, i64: u64, isize: u64, u8: u8, u16: u16, u32: u32, u64: u64, usize: u64);

impl Bits for bool {
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_u64(v: u64) -> Self {
        v as u8 != 0
    }
}

impl Bits for f32 {
    fn to_u64(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_u64(v: u64) -> Self {
        f32::from_bits(v as u32)
    }
}

impl Bits for f64 {
    fn to_u64(self) -> u64 {
        self.to_bits()
    }
    fn from_u64(v: u64) -> Self {
        f64::from_bits(v)
    }
}

/// A result's bits: one word per scalar (a tuple has one per element).
pub trait Words {
    fn words(self) -> Vec<u64>;
}

impl<T: Bits> Words for T {
    fn words(self) -> Vec<u64> {
        vec![self.to_u64()]
    }
}

macro_rules! words_tuple {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Bits),*> Words for ($($t,)*) {
            fn words(self) -> Vec<u64> {
                vec![$(self.$i.to_u64()),*]
            }
        }
    };
}
words_tuple!(A 0);
words_tuple!(A 0, B 1);
words_tuple!(A 0, B 1, C 2);
words_tuple!(A 0, B 1, C 2, D 3);
words_tuple!(A 0, B 1, C 2, D 3, E 4);
words_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

/// A native function that takes its arguments' bits and returns its results' bits.
pub type NativeFn = fn(&[u64]) -> Vec<u64>;

/// A native function called with its arguments' bits; returns its results' bits.
pub trait Native<Args> {
    fn call(&self, args: &[u64]) -> Vec<u64>;
}

macro_rules! native_arity {
    ($($a:ident),*) => {
        impl<F: Fn($($a),*) -> R, R: Words, $($a: Bits),*> Native<($($a,)*)> for F {
            #[allow(non_snake_case, unused_mut, unused_variables, unused_assignments)]
            fn call(&self, args: &[u64]) -> Vec<u64> {
                let mut i = 0;
                $(let $a = $a::from_u64(args[i]); i += 1;)*
                self($($a),*).words()
            }
        }
    };
}
native_arity!();
native_arity!(A);
native_arity!(A, B);
native_arity!(A, B, C);
native_arity!(A, B, C, D);
native_arity!(A, B, C, D, E);
native_arity!(A, B, C, D, E, G);
