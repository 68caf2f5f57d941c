//! `erf`, `erfc`, `gamma` and `ln_gamma` from C's libm: what the host JIT runs for
//! libdevice's versions, so the interpreter and the native corpus call the same functions.
//! (`gpu_runtime::SpecialMath` computes them with the `libm` crate instead; only the GPU
//! corpus would see the difference, and it leaves libdevice functions out.)

// Plain functions of floats that touch no memory (`lgamma` sets `signgam`, a global int
// nothing here reads).
unsafe extern "C" {
    safe fn erff(x: f32) -> f32;
    safe fn erfcf(x: f32) -> f32;
    safe fn tgammaf(x: f32) -> f32;
    safe fn lgammaf(x: f32) -> f32;
    safe fn erf(x: f64) -> f64;
    safe fn erfc(x: f64) -> f64;
    safe fn tgamma(x: f64) -> f64;
    safe fn lgamma(x: f64) -> f64;
}

/// The methods the kernel language takes from `gpu_runtime::SpecialMath`.
pub trait SpecialMath: Sized {
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    fn gamma(self) -> Self;
    fn ln_gamma(self) -> Self;
}

impl SpecialMath for f32 {
    fn erf(self) -> f32 {
        erff(self)
    }
    fn erfc(self) -> f32 {
        erfcf(self)
    }
    fn gamma(self) -> f32 {
        tgammaf(self)
    }
    fn ln_gamma(self) -> f32 {
        lgammaf(self)
    }
}

impl SpecialMath for f64 {
    fn erf(self) -> f64 {
        erf(self)
    }
    fn erfc(self) -> f64 {
        erfc(self)
    }
    fn gamma(self) -> f64 {
        tgamma(self)
    }
    fn ln_gamma(self) -> f64 {
        lgamma(self)
    }
}

/// Host versions of the libdevice functions the kernel language calls (`__nv_sinf` →
/// `f32::sin`, …): the address of an `extern "C"` function with the libdevice function's
/// signature, for `ptx_codegen::host::jit`. They are the functions the interpreter and
/// the native corpus call, so the host JIT is compared with them bit for bit.
pub fn libdevice_on_host(name: &str) -> Option<usize> {
    macro_rules! table {
        ($($t:ident: $($n:literal => |$($a:ident),*| $body:expr;)*)*) => {
            $($({
                extern "C" fn f($($a: $t),*) -> $t {
                    $body
                }
                if name == $n {
                    return Some(f as *const () as usize);
                }
            })*)*
        };
    }
    table! {
        f32:
            "__nv_fmodf" => |x, y| x % y;
            "__nv_cbrtf" => |x| x.cbrt();
            "__nv_expf" => |x| x.exp();
            "__nv_exp2f" => |x| x.exp2();
            "__nv_expm1f" => |x| x.exp_m1();
            "__nv_logf" => |x| x.ln();
            "__nv_log2f" => |x| x.log2();
            "__nv_log10f" => |x| x.log10();
            "__nv_log1pf" => |x| x.ln_1p();
            "__nv_powf" => |x, y| x.powf(y);
            "__nv_sinf" => |x| x.sin();
            "__nv_cosf" => |x| x.cos();
            "__nv_tanf" => |x| x.tan();
            "__nv_asinf" => |x| x.asin();
            "__nv_acosf" => |x| x.acos();
            "__nv_atanf" => |x| x.atan();
            "__nv_atan2f" => |x, y| x.atan2(y);
            "__nv_sinhf" => |x| x.sinh();
            "__nv_coshf" => |x| x.cosh();
            "__nv_tanhf" => |x| x.tanh();
            "__nv_asinhf" => |x| x.asinh();
            "__nv_acoshf" => |x| x.acosh();
            "__nv_atanhf" => |x| x.atanh();
            "__nv_hypotf" => |x, y| x.hypot(y);
            "__nv_erff" => |x| SpecialMath::erf(x);
            "__nv_erfcf" => |x| SpecialMath::erfc(x);
            "__nv_tgammaf" => |x| SpecialMath::gamma(x);
            "__nv_lgammaf" => |x| SpecialMath::ln_gamma(x);
        f64:
            "__nv_fmod" => |x, y| x % y;
            "__nv_cbrt" => |x| x.cbrt();
            "__nv_exp" => |x| x.exp();
            "__nv_exp2" => |x| x.exp2();
            "__nv_expm1" => |x| x.exp_m1();
            "__nv_log" => |x| x.ln();
            "__nv_log2" => |x| x.log2();
            "__nv_log10" => |x| x.log10();
            "__nv_log1p" => |x| x.ln_1p();
            "__nv_pow" => |x, y| x.powf(y);
            "__nv_sin" => |x| x.sin();
            "__nv_cos" => |x| x.cos();
            "__nv_tan" => |x| x.tan();
            "__nv_asin" => |x| x.asin();
            "__nv_acos" => |x| x.acos();
            "__nv_atan" => |x| x.atan();
            "__nv_atan2" => |x, y| x.atan2(y);
            "__nv_sinh" => |x| x.sinh();
            "__nv_cosh" => |x| x.cosh();
            "__nv_tanh" => |x| x.tanh();
            "__nv_asinh" => |x| x.asinh();
            "__nv_acosh" => |x| x.acosh();
            "__nv_atanh" => |x| x.atanh();
            "__nv_hypot" => |x, y| x.hypot(y);
            "__nv_erf" => |x| SpecialMath::erf(x);
            "__nv_erfc" => |x| SpecialMath::erfc(x);
            "__nv_tgamma" => |x| SpecialMath::gamma(x);
            "__nv_lgamma" => |x| SpecialMath::ln_gamma(x);
    }
    None
}
