//! The methods of the kernel language (`ptx-codegen`'s `intrinsic.rs` and docs/language.md list
//! them): their receivers, argument and result types, and how exact they are on the GPU.

use crate::ty::Ty;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Recv {
    Float,
    Int,
    Signed,
    Unsigned,
    /// `f16` and `bf16`.
    Half,
    /// `Complex<f32>` and `Complex<f64>`.
    Complex,
}

impl Recv {
    pub fn accepts(self, t: Ty) -> bool {
        match self {
            Recv::Float => t.is_float(),
            Recv::Int => t.is_int(),
            Recv::Signed => t.is_signed(),
            Recv::Unsigned => t.is_unsigned(),
            Recv::Half => t.is_half(),
            Recv::Complex => t.is_complex(),
        }
    }
}

/// An argument's or the result's type, relative to the receiver's.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Slot {
    Same,
    Bool,
    U32,
    I32,
    /// The unsigned type of the receiver's width.
    Unsigned,
    /// The type of a complex receiver's parts.
    Part,
}

impl Slot {
    pub fn resolve(self, recv: Ty) -> Ty {
        match self {
            Slot::Same => recv,
            Slot::Bool => Ty::Bool,
            Slot::U32 => Ty::U32,
            Slot::I32 => Ty::I32,
            Slot::Unsigned => recv.unsigned(),
            Slot::Part => recv.part().expect("a complex receiver"),
        }
    }
}

/// How a method computes on the GPU.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Accuracy {
    /// Bit-identical to the CPU.
    Exact,
    /// From libdevice: within its documented error bound, so only the host JIT (which
    /// calls the CPU's own functions for libdevice's) can compare it bit for bit.
    Libdevice,
    /// Bit-identical to the CPU's run-time answer, but Rust leaves its rounding
    /// unspecified and rustc's answer depends on optimisation: `powi` is compiler-rt's
    /// repeated squaring when it runs (what the GPU kernel does too), and the host's `pow`
    /// when LLVM folds a constant receiver in an optimised build. So only the interpreter
    /// and the host JIT (both run time) and an unoptimised reference compare it bit for bit.
    RunTime,
}

macro_rules! methods {
    ($($v:ident $name:literal $recv:ident ($($a:ident),*) -> $ret:ident $acc:ident;)*) => {
        /// A method of the kernel language.
        #[derive(Copy, Clone, PartialEq, Eq, Debug)]
        pub enum Method { $($v),* }

        /// Every method with its receivers (one entry per receiver class).
        pub const METHODS: &[MethodInfo] = &[$(MethodInfo {
            method: Method::$v,
            name: $name,
            recv: Recv::$recv,
            args: &[$(Slot::$a),*],
            ret: Slot::$ret,
            accuracy: Accuracy::$acc,
        }),*];
    };
}

#[derive(Copy, Clone, Debug)]
pub struct MethodInfo {
    pub method: Method,
    pub name: &'static str,
    pub recv: Recv,
    pub args: &'static [Slot],
    pub ret: Slot,
    pub accuracy: Accuracy,
}

methods! {
    FAbs "abs" Float () -> Same Exact;
    IAbs "abs" Signed () -> Same Exact;
    FSignum "signum" Float () -> Same Exact;
    ISignum "signum" Signed () -> Same Exact;
    FMin "min" Float (Same) -> Same Exact;
    IMin "min" Int (Same) -> Same Exact;
    FMax "max" Float (Same) -> Same Exact;
    IMax "max" Int (Same) -> Same Exact;
    FClamp "clamp" Float (Same, Same) -> Same Exact;
    IClamp "clamp" Int (Same, Same) -> Same Exact;
    FRemEuclid "rem_euclid" Float (Same) -> Same Exact;
    IRemEuclid "rem_euclid" Int (Same) -> Same Exact;
    FDivEuclid "div_euclid" Float (Same) -> Same Exact;
    IDivEuclid "div_euclid" Int (Same) -> Same Exact;
    Copysign "copysign" Float (Same) -> Same Exact;
    Floor "floor" Float () -> Same Exact;
    Ceil "ceil" Float () -> Same Exact;
    Round "round" Float () -> Same Exact;
    RoundTiesEven "round_ties_even" Float () -> Same Exact;
    Trunc "trunc" Float () -> Same Exact;
    Fract "fract" Float () -> Same Exact;
    Sqrt "sqrt" Float () -> Same Exact;
    MulAdd "mul_add" Float (Same, Same) -> Same Exact;
    Recip "recip" Float () -> Same Exact;
    ToDegrees "to_degrees" Float () -> Same Exact;
    ToRadians "to_radians" Float () -> Same Exact;
    IsNan "is_nan" Float () -> Bool Exact;
    IsInfinite "is_infinite" Float () -> Bool Exact;
    IsFinite "is_finite" Float () -> Bool Exact;
    IsSignNegative "is_sign_negative" Float () -> Bool Exact;
    IsSignPositive "is_sign_positive" Float () -> Bool Exact;
    Powi "powi" Float (I32) -> Same RunTime;
    Cbrt "cbrt" Float () -> Same Libdevice;
    Exp "exp" Float () -> Same Libdevice;
    Exp2 "exp2" Float () -> Same Libdevice;
    ExpM1 "exp_m1" Float () -> Same Libdevice;
    Ln "ln" Float () -> Same Libdevice;
    Log2 "log2" Float () -> Same Libdevice;
    Log10 "log10" Float () -> Same Libdevice;
    Ln1p "ln_1p" Float () -> Same Libdevice;
    Log "log" Float (Same) -> Same Libdevice;
    Powf "powf" Float (Same) -> Same Libdevice;
    Sin "sin" Float () -> Same Libdevice;
    Cos "cos" Float () -> Same Libdevice;
    Tan "tan" Float () -> Same Libdevice;
    Asin "asin" Float () -> Same Libdevice;
    Acos "acos" Float () -> Same Libdevice;
    Atan "atan" Float () -> Same Libdevice;
    Atan2 "atan2" Float (Same) -> Same Libdevice;
    Sinh "sinh" Float () -> Same Libdevice;
    Cosh "cosh" Float () -> Same Libdevice;
    Tanh "tanh" Float () -> Same Libdevice;
    Asinh "asinh" Float () -> Same Libdevice;
    Acosh "acosh" Float () -> Same Libdevice;
    Atanh "atanh" Float () -> Same Libdevice;
    Hypot "hypot" Float (Same) -> Same Libdevice;
    Erf "erf" Float () -> Same Libdevice;
    Erfc "erfc" Float () -> Same Libdevice;
    Gamma "gamma" Float () -> Same Libdevice;
    LnGamma "ln_gamma" Float () -> Same Libdevice;
    Pow "pow" Int (U32) -> Same Exact;
    AbsDiff "abs_diff" Int (Same) -> Unsigned Exact;
    UnsignedAbs "unsigned_abs" Signed () -> Unsigned Exact;
    CountOnes "count_ones" Int () -> U32 Exact;
    CountZeros "count_zeros" Int () -> U32 Exact;
    LeadingZeros "leading_zeros" Int () -> U32 Exact;
    TrailingZeros "trailing_zeros" Int () -> U32 Exact;
    RotateLeft "rotate_left" Int (U32) -> Same Exact;
    RotateRight "rotate_right" Int (U32) -> Same Exact;
    SwapBytes "swap_bytes" Int () -> Same Exact;
    ReverseBits "reverse_bits" Int () -> Same Exact;
    IsPowerOfTwo "is_power_of_two" Unsigned () -> Bool Exact;
    WrappingAdd "wrapping_add" Int (Same) -> Same Exact;
    WrappingSub "wrapping_sub" Int (Same) -> Same Exact;
    WrappingMul "wrapping_mul" Int (Same) -> Same Exact;
    WrappingDiv "wrapping_div" Int (Same) -> Same Exact;
    WrappingRem "wrapping_rem" Int (Same) -> Same Exact;
    WrappingNeg "wrapping_neg" Int () -> Same Exact;
    WrappingAbs "wrapping_abs" Signed () -> Same Exact;
    WrappingShl "wrapping_shl" Int (U32) -> Same Exact;
    WrappingShr "wrapping_shr" Int (U32) -> Same Exact;
    WrappingPow "wrapping_pow" Int (U32) -> Same Exact;
    SaturatingAdd "saturating_add" Int (Same) -> Same Exact;
    SaturatingSub "saturating_sub" Int (Same) -> Same Exact;
    SaturatingMul "saturating_mul" Int (Same) -> Same Exact;
    SaturatingDiv "saturating_div" Int (Same) -> Same Exact;
    SaturatingNeg "saturating_neg" Signed () -> Same Exact;
    SaturatingAbs "saturating_abs" Signed () -> Same Exact;
    SaturatingPow "saturating_pow" Int (U32) -> Same Exact;
    // `half`'s methods (its rules: `max(NaN, x)` is `x`, `max(+0, -0)` the receiver).
    HIsNan "is_nan" Half () -> Bool Exact;
    HIsInfinite "is_infinite" Half () -> Bool Exact;
    HIsFinite "is_finite" Half () -> Bool Exact;
    HIsSignNegative "is_sign_negative" Half () -> Bool Exact;
    HIsSignPositive "is_sign_positive" Half () -> Bool Exact;
    HSignum "signum" Half () -> Same Exact;
    HCopysign "copysign" Half (Same) -> Same Exact;
    HMax "max" Half (Same) -> Same Exact;
    HMin "min" Half (Same) -> Same Exact;
    // num-complex's methods whose formulas use `+ - * /` and comparisons only (so are bit
    // for bit on every target); the others call `hypot`, `exp`, `atan2`, … (libdevice's on
    // the GPU) and are left out.
    Conj "conj" Complex () -> Same Exact;
    NormSqr "norm_sqr" Complex () -> Part Exact;
    L1Norm "l1_norm" Complex () -> Part Exact;
    Scale "scale" Complex (Part) -> Same Exact;
    Unscale "unscale" Complex (Part) -> Same Exact;
    Inv "inv" Complex () -> Same Exact;
    CPowi "powi" Complex (I32) -> Same Exact;
    CPowu "powu" Complex (U32) -> Same Exact;
    CIsNan "is_nan" Complex () -> Bool Exact;
    CIsInfinite "is_infinite" Complex () -> Bool Exact;
    CIsFinite "is_finite" Complex () -> Bool Exact;
    CIsNormal "is_normal" Complex () -> Bool Exact;
}

impl Method {
    pub fn info(self) -> &'static MethodInfo {
        METHODS.iter().find(|m| m.method == self).expect("every method is in the table")
    }

    /// `erf`, `erfc`, `gamma`, `ln_gamma`: std has no stable versions; the kernel language
    /// takes them from `gpu_runtime::SpecialMath` (path form `SpecialMath::erf(x)`).
    pub fn is_special(self) -> bool {
        matches!(self, Method::Erf | Method::Erfc | Method::Gamma | Method::LnGamma)
    }

    /// num-complex's methods that take `&self`: Rust calls them through the type only on a
    /// reference (`Complex::conj(&z)`), which the kernel language does not have (it takes
    /// `Complex::conj(z)`, which rustc refuses), so they are called as methods only.
    pub fn takes_ref(self) -> bool {
        matches!(
            self,
            Method::Conj
                | Method::NormSqr
                | Method::L1Norm
                | Method::Scale
                | Method::Unscale
                | Method::Inv
                | Method::CPowi
                | Method::CPowu
        )
    }
}
