//! The attribute's arguments: `#[vectorize(target = "cuda", arch = "sm_90")]`.

use proc_macro2::TokenStream;
use syn::parse::{Parse, Parser};
use syn::spanned::Spanned;

use crate::emit::SUPPORTED_ARCHS;
use crate::ty::ScalarType;

/// Where a vectorized function's calls run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A kernel on an NVIDIA GPU (the default).
    Cuda,
    /// A loop on the calling thread.
    Cpu,
    /// A loop split over threads (rayon).
    Parallel,
}

/// How a vectorized function is compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub target: Target,
    /// The PTX target architecture (`sm_70` unless chosen): the oldest GPU generation the
    /// kernel runs on; the driver compiles the PTX for newer ones when it loads it.
    pub arch: String,
    /// `fastmath`: FMA contraction, flush-to-zero of subnormal f32 values, and libdevice's
    /// fast approximate f32 transcendentals. Off by default (results then equal the CPU's).
    pub fastmath: bool,
    /// `identity = value`: what `name::reduce` returns for an empty array.
    pub identity: Option<syn::Expr>,
    /// `types(f32, f64)`: the types a generic function `fn f<T: Float>(…)` is compiled for.
    pub types: Vec<ScalarType>,
    /// `launch_bounds(max_threads, min_blocks)` (`#[kernel]` only): CUDA's
    /// `__launch_bounds__`, Numba's `launch_bounds`.
    pub launch_bounds: Option<LaunchBounds>,
}

/// A kernel's promise about its launches, which lets `ptxas` budget registers: no block
/// has more than `max_threads` threads (a launch with more is refused), and, if given, at
/// least `min_blocks` blocks should fit on one multiprocessor at once (so each thread gets
/// at most 65536 / (`max_threads` · `min_blocks`) registers, spilling the rest).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Cuda,
            arch: "sm_70".to_string(),
            fastmath: false,
            identity: None,
            types: Vec::new(),
            launch_bounds: None,
        }
    }
}

const KEYS: &[&str] = &["target", "arch", "fastmath", "identity", "types", "launch_bounds"];
const TARGETS: &[&str] = &["cuda", "cpu", "parallel"];

impl Options {
    /// Parses the attribute's arguments, reporting every problem.
    pub fn parse(args: TokenStream) -> syn::Result<Options> {
        let mut opts = Options::default();
        let mut errors: Vec<syn::Error> = Vec::new();
        let args = without_signature_list(args, &mut errors);
        let mut seen: Vec<String> = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            // A repeated option would silently override the first: which one was meant?
            if KEYS.contains(&key.as_str()) {
                if seen.contains(&key) {
                    let how = if key == "types" { ": list every type in one `types(…)`" } else { ": keep one" };
                    errors.push(meta.error(format!("`{key}` is given more than once{how}")));
                } else {
                    seen.push(key.clone());
                }
            }
            match key.as_str() {
                "target" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    let v = lit.value();
                    match v.as_str() {
                        "cuda" => opts.target = Target::Cuda,
                        "cpu" => opts.target = Target::Cpu,
                        "parallel" => opts.target = Target::Parallel,
                        _ => {
                            let hint = target_hint(&v);
                            errors.push(syn::Error::new(
                                lit.span(),
                                format!("unsupported target \"{v}\"{hint}; the targets are \"cuda\", \"cpu\" and \"parallel\""),
                            ));
                        }
                    }
                    Ok(())
                }
                "fastmath" => {
                    if meta.input.peek(syn::Token![=]) {
                        let v: syn::Expr = meta.value()?.parse()?;
                        match &v {
                            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) => opts.fastmath = b.value,
                            _ => errors.push(syn::Error::new_spanned(
                                v,
                                "`fastmath` takes no value (`fastmath`), or `true` or `false`",
                            )),
                        }
                    } else {
                        opts.fastmath = true;
                    }
                    Ok(())
                }
                "types" => meta.parse_nested_meta(|t| {
                    let name = t.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                    match ScalarType::from_name(&name) {
                        Some(ty) if !opts.types.contains(&ty) => opts.types.push(ty),
                        Some(_) => errors.push(t.error(format!("`{name}` is listed twice"))),
                        None => errors.push(t.error(format!(
                            "`types` lists scalar types (f32, f64, i8 … u64, isize, usize, bool), not `{}`",
                            crate::frontend::path_key(&t.path)
                        ))),
                    }
                    Ok(())
                }),
                "identity" => {
                    opts.identity = Some(meta.value()?.parse()?);
                    Ok(())
                }
                "launch_bounds" => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let values = content.parse_terminated(syn::LitInt::parse, syn::Token![,])?;
                    match launch_bounds(&values, meta.path.span()) {
                        Ok(b) => opts.launch_bounds = Some(b),
                        Err(e) => errors.push(e),
                    }
                    Ok(())
                }
                "arch" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    let v = lit.value();
                    if SUPPORTED_ARCHS.contains(&v.as_str()) {
                        opts.arch = v;
                    } else {
                        let hint = suggestion(&v, SUPPORTED_ARCHS);
                        errors.push(syn::Error::new(
                            lit.span(),
                            format!(
                                "unknown GPU architecture \"{v}\"{hint}; supported are {}",
                                SUPPORTED_ARCHS.join(", ")
                            ),
                        ));
                    }
                    Ok(())
                }
                _ => {
                    let shown = if key.is_empty() { "this option".to_string() } else { format!("`{key}`") };
                    let hint = suggestion(&key, KEYS);
                    errors.push(meta.error(format!(
                        "unknown option {shown}{hint}; `#[vectorize]` takes `target = \"cuda\"`, `arch = \"sm_70\"` (or another architecture), `fastmath`, `identity = <value>` and `types(f32, f64)` (and a `#[kernel]` `launch_bounds(threads, blocks)`)"
                    )));
                    // Skip a value, if any, so that the next option still parses.
                    if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        let _group: proc_macro2::Group = meta.input.parse()?;
                    }
                    Ok(())
                }
            }
        });
        if let Err(e) = parser.parse2(args) {
            errors.push(e);
        }
        let mut it = errors.into_iter();
        match it.next() {
            None => Ok(opts),
            Some(mut first) => {
                for e in it {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

/// `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`.
fn launch_bounds(
    values: &syn::punctuated::Punctuated<syn::LitInt, syn::Token![,]>,
    at: proc_macro2::Span,
) -> syn::Result<LaunchBounds> {
    let usage = "`launch_bounds` takes the most threads a block has and, optionally, the fewest blocks \
                 that should fit on a multiprocessor: `launch_bounds(256)` or `launch_bounds(256, 2)`";
    let number = |lit: &syn::LitInt, what: &str, max: u32| -> syn::Result<u32> {
        match lit.base10_parse::<u32>() {
            Ok(v) if (1..=max).contains(&v) => Ok(v),
            _ => Err(syn::Error::new(lit.span(), format!("{what} must be an integer from 1 to {max}, not `{lit}`"))),
        }
    };
    match values.len() {
        1 | 2 => {
            let max_threads = number(&values[0], "the most threads per block", kernel_abi::MAX_BLOCK_THREADS)?;
            let min_blocks = match values.get(1) {
                Some(lit) => Some(number(lit, "the fewest blocks per multiprocessor", 32)?),
                None => None,
            };
            Ok(LaunchBounds { max_threads, min_blocks })
        }
        _ => Err(syn::Error::new(at, usage)),
    }
}

/// Numba's `@vectorize(["float32(float32)"])` spelled in Rust: a leading list or string of
/// signatures. Reported (the types come from the Rust signature), and taken out so that the
/// options after it are still checked.
fn without_signature_list(args: TokenStream, errors: &mut Vec<syn::Error>) -> TokenStream {
    use proc_macro2::{Delimiter, TokenTree};
    let mut tokens = args.into_iter().peekable();
    let signatures = match tokens.peek() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => Some(g.span()),
        Some(TokenTree::Literal(l)) if l.to_string().starts_with(['"', 'r']) => Some(l.span()),
        _ => None,
    };
    let Some(span) = signatures else { return tokens.collect() };
    errors.push(syn::Error::new(
        span,
        "`#[vectorize]` takes no signature strings: the types come from the Rust signature \
         (`fn f(a: f32, b: f32) -> f32`), or from `types(f32, f64)` for a generic function \
         `fn f<T: Float>(x: T) -> T`; remove the list",
    ));
    tokens.next();
    if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ',') {
        tokens.next();
    }
    tokens.collect()
}

/// The hint for a target that is not one: the GPU is `"cuda"` (not `"gpu"`, which is one
/// edit from `"cpu"`), and the names are lowercase.
fn target_hint(given: &str) -> String {
    let lower = given.to_ascii_lowercase();
    if TARGETS.contains(&lower.as_str()) {
        return format!(" (targets are lowercase: write `target = \"{lower}\"`)");
    }
    if matches!(lower.as_str(), "gpu" | "nvidia" | "ptx" | "nvptx" | "cuda_gpu") {
        return " (for an NVIDIA GPU, write `target = \"cuda\"`)".to_string();
    }
    suggestion(given, TARGETS)
}

/// `; did you mean "x"?` for the closest candidate within a small edit distance.
fn suggestion(given: &str, candidates: &[&str]) -> String {
    candidates
        .iter()
        .map(|c| (strsim::osa_distance(given, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn defaults_and_choices() {
        assert_eq!(Options::parse(quote!()).unwrap(), Options::default());
        assert_eq!(Options::parse(quote!(target = "cuda")).unwrap().arch, "sm_70");
        assert_eq!(Options::parse(quote!(target = "cuda", arch = "sm_90")).unwrap().arch, "sm_90");
        assert!(Options::parse(quote!(fastmath)).unwrap().fastmath);
        assert!(!Options::parse(quote!(fastmath = false)).unwrap().fastmath);
        assert_eq!(Options::parse(quote!(types(f32, f64))).unwrap().types, vec![ScalarType::F32, ScalarType::F64]);
        assert!(Options::parse(quote!(types(f32, String))).is_err());
    }

    #[test]
    fn every_problem_is_reported() {
        let e = Options::parse(quote!(tagret = "cuda", arch = "sm_91", fast = 1)).unwrap_err();
        let msgs: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].contains("unknown option `tagret` (did you mean `target`?)"), "{}", msgs[0]);
        assert!(msgs[1].contains("unknown GPU architecture \"sm_91\" (did you mean `sm_90`?)"), "{}", msgs[1]);
        assert!(msgs[2].contains("unknown option `fast`"), "{}", msgs[2]);
    }

    #[test]
    fn repeated_options_and_signature_lists() {
        let msgs =
            |args| -> Vec<String> { Options::parse(args).unwrap_err().into_iter().map(|e| e.to_string()).collect() };
        let m = msgs(quote!(target = "cuda", target = "cpu"));
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("`target` is given more than once"), "{}", m[0]);
        assert!(msgs(quote!(fastmath, fastmath = false))[0].contains("`fastmath` is given more than once"));
        assert!(msgs(quote!(types(f32), types(f64)))[0].contains("one `types(…)`"));
        let m = msgs(quote!(["float32(float32)"], tagret = "cuda"));
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].contains("the types come from the Rust signature"), "{}", m[0]);
        assert!(m[1].contains("unknown option `tagret`"), "{}", m[1]);
        assert!(msgs(quote!("float32(float32)"))[0].contains("no signature strings"));
    }

    #[test]
    fn unsupported_target() {
        let e = Options::parse(quote!(target = "cdua")).unwrap_err().to_string();
        assert!(e.contains("unsupported target \"cdua\" (did you mean `cuda`?)"), "{e}");
        assert_eq!(Options::parse(quote!(target = "parallel")).unwrap().target, Target::Parallel);
        let e = Options::parse(quote!(target = "gpu")).unwrap_err().to_string();
        assert!(e.contains("(for an NVIDIA GPU, write `target = \"cuda\"`)"), "{e}");
        let e = Options::parse(quote!(target = "CUDA")).unwrap_err().to_string();
        assert!(e.contains("(targets are lowercase: write `target = \"cuda\"`)"), "{e}");
    }
}
