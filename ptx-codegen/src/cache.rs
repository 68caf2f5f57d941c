//! The on-disk cache of compiled kernels.
//!
//! rustc expands every macro of a crate again each time it rebuilds the crate, after an
//! edit anywhere in it, and LLVM takes tens to hundreds of milliseconds per kernel. So what
//! the macro uses of a function's compiled kernels (each overflow variant's ABI and PTX,
//! and a vectorized function's optimised LLVM IR) is kept on disk under a key that hashes
//! everything it depends on: the function's tokens and those of the
//! helpers it calls, the options, which compiler entry point, and the toolchain (this
//! compiler's build, LLVM's version, libdevice's bytes). An unchanged function is read back
//! instead of checked and compiled: the frontend is a function of the same inputs, and only
//! a function that compiled is stored, so there is nothing it could report. A changed one
//! has another key. The LLVM IR before optimisation is not kept: only `GPU_VECTORIZE_DUMP`
//! writes it, and it is most of the bytes (8 of the 9 MB of a register-tiled matmul whose
//! loops are unrolled); with that variable set the compiler leaves the cache alone.
//!
//! Where: `GPU_VECTORIZE_CACHE=<dir>`, or `ptx-cache/` in the target directory of the cargo
//! build; `GPU_VECTORIZE_CACHE=off` turns it off. Entries are never evicted: `cargo clean`
//! or deleting the directory clears them.
//!
//! An entry is written to a temporary file beside it and renamed into place, so a reader
//! sees a whole entry or none, and builds that write the same entry at once each rename a
//! complete copy over the other. An entry repeats its key, gives each field's length, and
//! ends with the BLAKE3 hash of all that precedes it: one that does not check out
//! (truncated, corrupt, another key's) is a miss, and the compile that follows replaces it.
//! The cache never fails a build: a directory that cannot be written costs a compile,
//! nothing more.
//!
//! The hash is BLAKE3 because cargo builds proc macros unoptimised in every profile
//! (`build-override`'s default `opt-level = 0`): SHA-256 in Rust then reads 20-30 MB/s,
//! a millisecond for a large kernel's key and ten for its entry, while BLAKE3's SIMD code
//! is assembly and hashes several GB/s there.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

use crate::abi::{ExplicitAbi, ExplicitParam, ExplicitParamKind, KernelAbi};
use crate::frontend::HelperDef;
use crate::options::Options;
use crate::ty::{ScalarType, StructId};
use crate::{CompiledExplicit, CompiledKernel, KernelVariants, Variants};

/// The environment variable that chooses the cache's directory, or turns it off (`off`).
pub const CACHE_ENV: &str = "GPU_VECTORIZE_CACHE";

/// The directory's name in the target directory.
pub const DEFAULT_DIR_NAME: &str = "ptx-cache";

/// The first bytes of an entry; a new layout of entries gets a new one.
const MAGIC: &[u8] = b"gpu-vectorize PTX cache entry 3\n";

/// What decides a compiled kernel beyond its source and options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// This compiler: its version and its build (a hash of its sources, `kernel-abi`'s and
    /// rustc's version, from `build.rs`).
    pub compiler: String,
    /// The version of the LLVM library loaded.
    pub llvm: String,
    /// The libdevice this process links ([`crate::libdevice::identity`]).
    pub libdevice: String,
}

impl Toolchain {
    /// This process's toolchain, found once (libdevice is read and hashed then).
    pub fn current() -> &'static Toolchain {
        static CURRENT: OnceLock<Toolchain> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let (major, minor, patch) = inkwell::support::get_llvm_version();
            Toolchain {
                compiler: format!("ptx-codegen {} {}", env!("CARGO_PKG_VERSION"), env!("PTX_CODEGEN_BUILD_ID")),
                llvm: format!("{major}.{minor}.{patch}"),
                libdevice: crate::libdevice::identity(),
            }
        })
    }
}

/// Which of the compiler's entry points a result is of: a vectorized function's
/// ([`crate::compile_variants`]) or an explicit kernel's ([`crate::compile_kernel_variants`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Vectorized,
    Explicit,
}

/// The key of compiling `item` (with the helpers it calls, as the compiler's entry points
/// take them) with `options` by `toolchain`: the BLAKE3 hash of all of it, each part tagged
/// and delimited so that no two different inputs give the same bytes. Functions are hashed
/// as syn prints them, the syntax tree the compiler reads: not their layout or comments.
pub fn key(
    toolchain: &Toolchain,
    kind: Kind,
    item: &syn::ItemFn,
    callees: &[(String, String)],
    helpers: &[HelperDef],
    options: &Options,
) -> Key {
    let mut b = KeyBytes(Vec::with_capacity(4096));
    b.text(b'M', std::str::from_utf8(MAGIC).expect("ASCII"));
    let Toolchain { compiler, llvm, libdevice } = toolchain;
    b.text(b'C', compiler);
    b.text(b'L', llvm);
    b.text(b'D', libdevice);
    b.text(b'K', &format!("{kind:?}"));
    // Every option, named one by one: a new option cannot be left out of the key.
    let Options { target, arch, fastmath, identity, types, launch_bounds } = options;
    b.text(b'T', &format!("{target:?}"));
    b.text(b'A', arch);
    b.text(b'F', &fastmath.to_string());
    match identity {
        Some(e) => b.tokens(e.to_token_stream()),
        None => b.text(b'N', ""),
    }
    b.text(b'Y', &format!("{types:?}"));
    b.text(b'B', &format!("{launch_bounds:?}"));
    b.tokens(item.to_token_stream());
    b.callees(callees);
    b.number(helpers.len());
    for HelperDef { id, item, callees } in helpers {
        b.text(b'H', id);
        b.tokens(item.to_token_stream());
        b.callees(callees);
    }
    Key(blake3::hash(&b.0).into())
}

/// The bytes a key hashes, gathered first and hashed at once.
struct KeyBytes(Vec<u8>);

impl KeyBytes {
    /// A tagged text after its length: no two different sequences of fields give the same
    /// bytes.
    fn text(&mut self, tag: u8, s: &str) {
        self.0.push(tag);
        self.number(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A number, seven bits a byte (LEB128): one byte for most.
    fn number(&mut self, n: usize) {
        let mut n = n as u64;
        while n >= 0x80 {
            self.0.push((n & 0x7f) as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn callees(&mut self, callees: &[(String, String)]) {
        self.number(callees.len());
        for (path, id) in callees {
            self.text(b'p', path);
            self.text(b'i', id);
        }
    }

    /// The tokens in a canonical form that keeps what printing them loses: every group's
    /// delimiter, an invisible one included (`$e * 2` with `$e` = `a + b` is `(a + b) * 2`,
    /// and prints as `a + b * 2`), and each punctuation's spacing.
    fn tokens(&mut self, stream: TokenStream) {
        self.0.push(b'(');
        for tree in stream {
            match tree {
                TokenTree::Group(g) => {
                    let delimiter = match g.delimiter() {
                        Delimiter::Parenthesis => b'p',
                        Delimiter::Brace => b'b',
                        Delimiter::Bracket => b'k',
                        Delimiter::None => b'n',
                    };
                    self.0.extend_from_slice(&[b'G', delimiter]);
                    self.tokens(g.stream());
                }
                TokenTree::Ident(i) => self.text(b'I', &i.to_string()),
                TokenTree::Punct(p) => {
                    self.0.push(if p.spacing() == Spacing::Joint { b'J' } else { b'P' });
                    self.number(p.as_char() as usize);
                }
                TokenTree::Literal(l) => self.text(b'l', &l.to_string()),
            }
        }
        self.0.push(b')');
    }
}

/// A cache entry's key ([`key`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A directory of compiled kernels, one file per [`Key`].
#[derive(Clone, Debug)]
pub struct PtxCache {
    dir: PathBuf,
}

impl PtxCache {
    /// The cache in `dir` (created when the first entry is written).
    pub fn new(dir: impl Into<PathBuf>) -> PtxCache {
        PtxCache { dir: dir.into() }
    }

    /// The cache the environment asks for: `GPU_VECTORIZE_CACHE=<dir>`, none for
    /// `GPU_VECTORIZE_CACHE=off`; otherwise `ptx-cache/` in the target directory of the
    /// cargo build this process compiles for, and none outside one (an editor's expansion
    /// of the macro, a plain program).
    pub fn from_env() -> Option<PtxCache> {
        PtxCache::chosen(std::env::var_os(CACHE_ENV), std::env::args_os())
    }

    /// The cache a setting of [`CACHE_ENV`] and the compiler's arguments choose.
    fn chosen(setting: Option<OsString>, args: impl IntoIterator<Item = OsString>) -> Option<PtxCache> {
        match setting {
            Some(v) if v == "off" => None,
            Some(v) if !v.is_empty() => Some(PtxCache::new(v)),
            _ => target_dir(args).map(|t| PtxCache::new(t.join(DEFAULT_DIR_NAME))),
        }
    }

    /// [`PtxCache::from_env`], decided once per process (the macro's: one rustc).
    pub fn for_build() -> Option<&'static PtxCache> {
        static CACHE: OnceLock<Option<PtxCache>> = OnceLock::new();
        CACHE.get_or_init(PtxCache::from_env).as_ref()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the entry `key`.
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.kernel", key.hex()))
    }

    /// The result stored under `key`, if a whole, valid entry of its kind is there.
    pub fn load<T: Cached>(&self, key: &Key) -> Option<T> {
        // One buffer per thread, reused: fresh memory for each entry read would cost a page
        // fault per 4 kB, more than the read.
        thread_local!(static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
        let fields = BUFFER.with_borrow_mut(|buffer| {
            buffer.clear();
            std::fs::File::open(self.entry_path(key)).ok()?.read_to_end(buffer).ok()?;
            decode(key, buffer)
        })?;
        let mut fields = fields.into_iter();
        (fields.next()? == format!("{:?}", T::KIND)).then_some(())?;
        let result = T::read(&mut fields)?;
        fields.next().is_none().then_some(result)
    }

    /// Stores `result` under `key`, atomically: a temporary file of this process's own,
    /// renamed over the entry.
    pub fn store<T: Cached>(&self, key: &Key, result: &T) -> std::io::Result<()> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let mut fields = vec![format!("{:?}", T::KIND)];
        result.write(&mut fields);
        std::fs::create_dir_all(&self.dir)?;
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(".{}.{}.{serial}.tmp", key.hex(), std::process::id()));
        let written = (|| {
            {
                let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
                file.write_all(&encode(key, &fields))?;
            }
            // No fsync: an entry cut short by a crash fails its checksum and is rewritten.
            std::fs::rename(&temp, self.entry_path(key))
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

/// A compiler entry point's result, as an entry's fields (texts): what the macro uses of
/// it. Each impl names every field of the result, so that a field added to one cannot be
/// left out unnoticed.
pub trait Cached: Sized {
    const KIND: Kind;
    fn write(&self, out: &mut Vec<String>);
    fn read(fields: &mut impl Iterator<Item = String>) -> Option<Self>;
}

impl Cached for Variants {
    const KIND: Kind = Kind::Vectorized;

    fn write(&self, out: &mut Vec<String>) {
        let Variants { wrapping, checked } = self;
        write_kernel(wrapping, out);
        out.push(flag(checked.is_some()));
        if let Some(c) = checked {
            write_kernel(c, out);
        }
    }

    fn read(fields: &mut impl Iterator<Item = String>) -> Option<Variants> {
        let wrapping = read_kernel(fields)?;
        let checked = if read_flag(fields)? { Some(read_kernel(fields)?) } else { None };
        Some(Variants { wrapping, checked })
    }
}

impl Cached for KernelVariants {
    const KIND: Kind = Kind::Explicit;

    fn write(&self, out: &mut Vec<String>) {
        let KernelVariants { wrapping, checked } = self;
        write_explicit(wrapping, out);
        out.push(flag(checked.is_some()));
        if let Some(c) = checked {
            write_explicit(c, out);
        }
    }

    fn read(fields: &mut impl Iterator<Item = String>) -> Option<KernelVariants> {
        let wrapping = read_explicit(fields)?;
        let checked = if read_flag(fields)? { Some(read_explicit(fields)?) } else { None };
        Some(KernelVariants { wrapping, checked })
    }
}

fn write_kernel(k: &CompiledKernel, out: &mut Vec<String>) {
    // The IR before optimisation is for dumps only (see the module's note).
    let CompiledKernel { abi, ptx, llvm_ir, llvm_ir_unoptimized: _ } = k;
    let KernelAbi { entry, inputs, outputs, error_flag, reduce_entry } = abi;
    // An entry symbol is never empty: "" is no reduction entry.
    let reduce_entry = reduce_entry.clone().unwrap_or_default();
    out.extend([entry.clone(), type_list(inputs), type_list(outputs), flag(*error_flag), reduce_entry]);
    out.extend([ptx.clone(), llvm_ir.clone()]);
}

fn read_kernel(fields: &mut impl Iterator<Item = String>) -> Option<CompiledKernel> {
    let entry = fields.next()?;
    let (inputs, outputs) = (read_type_list(&fields.next()?)?, read_type_list(&fields.next()?)?);
    let error_flag = read_flag(fields)?;
    let reduce_entry = Some(fields.next()?).filter(|e| !e.is_empty());
    let abi = KernelAbi { entry, inputs, outputs, error_flag, reduce_entry };
    Some(CompiledKernel { abi, ptx: fields.next()?, llvm_ir: fields.next()?, llvm_ir_unoptimized: String::new() })
}

fn write_explicit(k: &CompiledExplicit, out: &mut Vec<String>) {
    // `#[kernel]` shows no LLVM IR: the texts are for dumps only.
    let CompiledExplicit { abi, ptx, llvm_ir: _, llvm_ir_unoptimized: _ } = k;
    let ExplicitAbi { symbol, params, static_shared_bytes, dynamic_shared } = abi;
    out.extend([symbol.clone(), static_shared_bytes.to_string(), flag(*dynamic_shared), params.len().to_string()]);
    for ExplicitParam { name, kind } in params {
        let kind = match kind {
            ExplicitParamKind::Scalar(t) => type_name(*t),
            ExplicitParamKind::Slice { elem, mutable: false } => format!("&[{}]", type_name(*elem)),
            ExplicitParamKind::Slice { elem, mutable: true } => format!("&mut [{}]", type_name(*elem)),
        };
        out.extend([name.clone(), kind]);
    }
    out.push(ptx.clone());
}

fn read_explicit(fields: &mut impl Iterator<Item = String>) -> Option<CompiledExplicit> {
    let symbol = fields.next()?;
    let static_shared_bytes = fields.next()?.parse().ok()?;
    let dynamic_shared = read_flag(fields)?;
    let count: usize = fields.next()?.parse().ok()?;
    let mut params = Vec::new();
    for _ in 0..count {
        let name = fields.next()?;
        let kind = fields.next()?;
        let slice = |s: &str, mutable| Some(ExplicitParamKind::Slice { elem: type_of(s)?, mutable });
        let kind = match kind.strip_suffix(']') {
            Some(k) => match k.strip_prefix("&mut [") {
                Some(elem) => slice(elem, true)?,
                None => slice(k.strip_prefix("&[")?, false)?,
            },
            None => ExplicitParamKind::Scalar(type_of(&kind)?),
        };
        params.push(ExplicitParam { name, kind });
    }
    let abi = ExplicitAbi { symbol, params, static_shared_bytes, dynamic_shared };
    Some(CompiledExplicit { abi, ptx: fields.next()?, llvm_ir: String::new(), llvm_ir_unoptimized: String::new() })
}

fn flag(b: bool) -> String {
    (if b { "1" } else { "0" }).to_string()
}

fn read_flag(fields: &mut impl Iterator<Item = String>) -> Option<bool> {
    match fields.next()?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

fn type_list(types: &[ScalarType]) -> String {
    types.iter().map(|t| type_name(*t)).collect::<Vec<_>>().join(",")
}

fn read_type_list(list: &str) -> Option<Vec<ScalarType>> {
    if list.is_empty() {
        return Some(Vec::new());
    }
    list.split(',').map(type_of).collect()
}

/// A type as an entry names it: a scalar by its Rust name, a user struct by a key of the
/// struct table (which the entry's own key covers: the definitions are part of it).
fn type_name(t: ScalarType) -> String {
    match t {
        ScalarType::Struct(id) => format!("struct {}", id.key().unwrap_or_default()),
        t => t.rust_name().to_string(),
    }
}

/// The type an entry names ([`type_name`]); `None` (a miss) for a struct not entered in
/// this process's table.
fn type_of(name: &str) -> Option<ScalarType> {
    match name.strip_prefix("struct ") {
        Some(key) => StructId::by_key(key).map(ScalarType::Struct),
        None => ScalarType::from_name(name),
    }
}

/// The target directory of the cargo build whose compiler runs this: cargo runs rustc with
/// `--out-dir <target>/<profile>/deps` (or `<target>/<triple>/<profile>/deps`) and marks the
/// target directory with a `CACHEDIR.TAG`. Proc macros get no `OUT_DIR`, and
/// `CARGO_TARGET_DIR` is set only where the user sets it.
fn target_dir(args: impl IntoIterator<Item = OsString>) -> Option<PathBuf> {
    // A command line too long for the system reaches rustc as `@file`, one argument a line.
    let mut args = args.into_iter().flat_map(|arg| {
        let file = arg.to_str().and_then(|a| a.strip_prefix('@')).map(|f| std::fs::read_to_string(f).ok());
        match file {
            Some(text) => text.unwrap_or_default().lines().map(OsString::from).collect(),
            None => vec![arg],
        }
    });
    let out_dir = loop {
        let arg = args.next()?;
        if arg == "--out-dir" {
            break PathBuf::from(args.next()?);
        }
        if let Some(dir) = arg.to_str().and_then(|a| a.strip_prefix("--out-dir=")) {
            break PathBuf::from(dir);
        }
    };
    out_dir.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf)
}

/// An entry: [`MAGIC`], the key, the number of fields, each field after its length (all
/// u64, little endian), and the BLAKE3 hash of all that.
fn encode(key: &Key, fields: &[String]) -> Vec<u8> {
    let size = MAGIC.len() + 32 + 8 + fields.iter().map(|f| 8 + f.len()).sum::<usize>() + 32;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(fields.len() as u64).to_le_bytes());
    for f in fields {
        out.extend_from_slice(&(f.len() as u64).to_le_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}

/// The fields of an entry, if it is whole, intact and `key`'s.
fn decode(key: &Key, bytes: &[u8]) -> Option<Vec<String>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if blake3::hash(body) != <[u8; 32]>::try_from(sum).ok()? {
        return None;
    }
    let mut rest = body.strip_prefix(MAGIC)?.strip_prefix(key.0.as_slice())?;
    let count = take_number(&mut rest)?;
    let mut fields = Vec::new();
    for _ in 0..count {
        let len = take_number(&mut rest)?;
        let (field, after) = rest.split_at_checked(len)?;
        fields.push(String::from_utf8(field.to_vec()).ok()?);
        rest = after;
    }
    rest.is_empty().then_some(fields)
}

/// The u64 at the start of `rest`, which moves past it.
fn take_number(rest: &mut &[u8]) -> Option<usize> {
    let (n, after) = rest.split_at_checked(8)?;
    *rest = after;
    usize::try_from(u64::from_le_bytes(n.try_into().ok()?)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<String> {
        ["Vectorized", "", "; after", "// ptx\n"].map(String::from).to_vec()
    }

    #[test]
    fn an_entry_reads_back_only_whole_intact_and_under_its_key() {
        let (key, other) = (Key([7; 32]), Key([8; 32]));
        let bytes = encode(&key, &fields());
        assert_eq!(decode(&key, &bytes), Some(fields()));
        assert_eq!(decode(&other, &bytes), None, "another key's entry");
        for cut in [0, 1, MAGIC.len(), bytes.len() - 33, bytes.len() - 1] {
            assert_eq!(decode(&key, &bytes[..cut]), None, "cut at {cut}");
        }
        for at in [0, MAGIC.len() + 3, MAGIC.len() + 32 + 2, bytes.len() - 40, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1;
            assert_eq!(decode(&key, &flipped), None, "a bit flipped at {at}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&key, &longer), None);
    }

    #[test]
    fn the_target_directory_is_the_tagged_ancestor_of_the_out_dir() {
        let root = std::env::temp_dir().join(format!("ptx-cache-target-{}", std::process::id()));
        let deps = root.join("target/release/deps");
        std::fs::create_dir_all(&deps).unwrap();
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        let out_dir = deps.to_str().unwrap();
        // Untagged: not a target directory cargo made.
        assert_eq!(target_dir(args(&["rustc", "--out-dir", out_dir])), None);
        std::fs::write(root.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55").unwrap();
        let target = Some(root.join("target"));
        assert_eq!(
            target_dir(args(&["rustc", "--crate-name", "x", "--out-dir", out_dir, "-C", "opt-level=3"])),
            target
        );
        assert_eq!(target_dir(args(&["rustc", &format!("--out-dir={out_dir}")])), target);
        assert_eq!(target_dir(args(&["rustc", "--crate-name", "x"])), None);
        assert_eq!(target_dir(args(&["rustc", "--out-dir"])), None);
        let argfile = root.join("args");
        std::fs::write(&argfile, format!("--crate-name\nx\n--out-dir\n{out_dir}\n")).unwrap();
        assert_eq!(target_dir(args(&["rustc", &format!("@{}", argfile.display())])), target);
        // The environment's choice comes first, and `off` turns the cache off.
        let dir = |setting: Option<&str>| {
            PtxCache::chosen(setting.map(OsString::from), args(&["rustc", "--out-dir", out_dir])).map(|c| c.dir)
        };
        assert_eq!(dir(None), Some(root.join("target").join(DEFAULT_DIR_NAME)));
        assert_eq!(dir(Some("")), Some(root.join("target").join(DEFAULT_DIR_NAME)));
        assert_eq!(dir(Some("/elsewhere/kernels")), Some(PathBuf::from("/elsewhere/kernels")));
        assert_eq!(dir(Some("off")), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
