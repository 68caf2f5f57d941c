//! The on-disk cache of compiled kernels.
//!
//! rustc expands every macro of a crate again each time it rebuilds the crate, after an
//! edit anywhere in it, and LLVM takes 40-200 ms per kernel. So the texts a kernel compiles
//! to (its PTX and LLVM IR) are kept on disk under a key that hashes everything they depend
//! on: the function's tokens and those of the helpers it calls, the options, the overflow
//! variant, and the toolchain (this compiler's build, LLVM's version, libdevice's bytes).
//! An unchanged kernel is read back instead of compiled; a changed one has another key.
//! The checks of the frontend still run on every expansion: they give the kernel's ABI and
//! the user's diagnostics, and cost far less than LLVM.
//!
//! Where: `GPU_VECTORIZE_CACHE=<dir>`, or `ptx-cache/` in the target directory of the cargo
//! build; `GPU_VECTORIZE_CACHE=off` turns it off. Entries are never evicted: `cargo clean`
//! or deleting the directory clears them.
//!
//! An entry is written to a temporary file beside it and renamed into place, so a reader
//! sees a whole entry or none, and builds that write the same entry at once each rename a
//! complete copy over the other. An entry repeats its key, gives each text's length, and
//! ends with a checksum of all that precedes it ([`word_sum`]): one that does not check out
//! (truncated, corrupt, another key's) is a miss, and the compile that follows replaces it.
//! The cache never fails a build: a directory that cannot be written costs a compile,
//! nothing more.
//!
//! Cargo builds proc macros unoptimised in every profile (`build-override`'s default
//! `opt-level = 0`), where SHA-256 reads about 20 MB/s: fine for a key (a few kilobytes of
//! tokens), too slow for an entry (up to 400 kB for a function whose `sin` carries
//! libdevice's slow path). Entries are checked with a sum over 8-byte words instead, about
//! 1 GB/s there.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use sha2::{Digest, Sha256};

use crate::emit::Emitted;
use crate::frontend::HelperDef;
use crate::ir::IntOverflow;
use crate::options::Options;

/// The environment variable that chooses the cache's directory, or turns it off (`off`).
pub const CACHE_ENV: &str = "GPU_VECTORIZE_CACHE";

/// The directory's name in the target directory.
pub const DEFAULT_DIR_NAME: &str = "ptx-cache";

/// The first bytes of an entry; a new layout of entries gets a new one.
const MAGIC: &[u8] = b"gpu-vectorize PTX cache entry 1\n";

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

/// Which of the compiler's programs a kernel is: a vectorized function's elementwise
/// entries, or an explicit kernel (`#[kernel]`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Vectorized,
    Explicit,
}

/// Everything one function's kernels depend on except the overflow variant, hashed;
/// [`Inputs::key`] adds the variant.
#[derive(Clone)]
pub struct Inputs(Sha256);

impl Inputs {
    /// The inputs of compiling `item` (with the helpers it calls, as the compiler's entry
    /// points take them) with `options` by `toolchain`.
    pub fn new(
        toolchain: &Toolchain,
        kind: Kind,
        item: &syn::ItemFn,
        callees: &[(String, String)],
        helpers: &[HelperDef],
        options: &Options,
    ) -> Inputs {
        let mut h = Sha256::new();
        text(&mut h, b'M', std::str::from_utf8(MAGIC).expect("ASCII"));
        let Toolchain { compiler, llvm, libdevice } = toolchain;
        text(&mut h, b'C', compiler);
        text(&mut h, b'L', llvm);
        text(&mut h, b'D', libdevice);
        text(&mut h, b'K', &format!("{kind:?}"));
        // Every option, named one by one: a new option cannot be left out of the key.
        let Options { target, arch, fastmath, identity, types, launch_bounds } = options;
        text(&mut h, b'T', &format!("{target:?}"));
        text(&mut h, b'A', arch);
        text(&mut h, b'F', &fastmath.to_string());
        match identity {
            Some(e) => tokens(&mut h, e.to_token_stream()),
            None => text(&mut h, b'N', ""),
        }
        text(&mut h, b'Y', &format!("{types:?}"));
        text(&mut h, b'B', &format!("{launch_bounds:?}"));
        tokens(&mut h, item.to_token_stream());
        callee_list(&mut h, callees);
        count(&mut h, helpers.len());
        for HelperDef { id, item, callees } in helpers {
            text(&mut h, b'H', id);
            tokens(&mut h, item.to_token_stream());
            callee_list(&mut h, callees);
        }
        Inputs(h)
    }

    /// The key of the kernel compiled with integer overflow `overflow`.
    pub fn key(&self, overflow: IntOverflow) -> Key {
        let mut h = self.0.clone();
        text(&mut h, b'O', &format!("{overflow:?}"));
        Key(h.finalize().into())
    }
}

/// A length-prefixed, tagged text: no two different sequences of fields hash the same bytes.
fn text(h: &mut Sha256, tag: u8, s: &str) {
    h.update([tag]);
    h.update((s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

fn count(h: &mut Sha256, n: usize) {
    h.update([b'#']);
    h.update((n as u64).to_le_bytes());
}

fn callee_list(h: &mut Sha256, callees: &[(String, String)]) {
    count(h, callees.len());
    for (path, id) in callees {
        text(h, b'p', path);
        text(h, b'i', id);
    }
}

/// The tokens in a canonical form that keeps what printing them loses: every group's
/// delimiter, an invisible one included (`$e * 2` with `$e` = `a + b` is `(a + b) * 2`, and
/// prints as `a + b * 2`), and each punctuation's spacing.
fn tokens(h: &mut Sha256, stream: TokenStream) {
    h.update([b'(']);
    for tree in stream {
        match tree {
            TokenTree::Group(g) => {
                let delimiter = match g.delimiter() {
                    Delimiter::Parenthesis => b'p',
                    Delimiter::Brace => b'b',
                    Delimiter::Bracket => b'k',
                    Delimiter::None => b'n',
                };
                h.update([b'G', delimiter]);
                tokens(h, g.stream());
            }
            TokenTree::Ident(i) => text(h, b'I', &i.to_string()),
            TokenTree::Punct(p) => {
                let spacing = if p.spacing() == Spacing::Joint { b'j' } else { b'a' };
                h.update([b'P']);
                h.update(u32::from(p.as_char()).to_le_bytes());
                h.update([spacing]);
            }
            TokenTree::Literal(l) => text(h, b'l', &l.to_string()),
        }
    }
    h.update([b')']);
}

/// A cache entry's key: the SHA-256 of its [`Inputs`] and overflow variant.
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

    /// The texts stored under `key`, if a whole, valid entry is there.
    pub fn load(&self, key: &Key) -> Option<Emitted> {
        decode(key, &std::fs::read(self.entry_path(key)).ok()?)
    }

    /// Stores `texts` under `key`, atomically: a temporary file of this process's own,
    /// renamed over the entry.
    pub fn store(&self, key: &Key, texts: &Emitted) -> std::io::Result<()> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(&self.dir)?;
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(".{}.{}.{serial}.tmp", key.hex(), std::process::id()));
        let written = (|| {
            {
                let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
                file.write_all(&encode(key, texts))?;
            }
            // No fsync: an entry cut short by a crash fails its checksum and is rewritten.
            std::fs::rename(&temp, self.entry_path(key))
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// The texts under `key`, or those `emit` gives, stored under `key` for next time. A
    /// cache that cannot be written is no error: the next build compiles again.
    pub fn emitted(&self, key: &Key, emit: impl FnOnce() -> Result<Emitted, String>) -> Result<Emitted, String> {
        if let Some(texts) = self.load(key) {
            return Ok(texts);
        }
        let texts = emit()?;
        let _ = self.store(key, &texts);
        Ok(texts)
    }
}

/// The target directory of the cargo build whose compiler runs this: cargo runs rustc with
/// `--out-dir <target>/<profile>/deps` (or `<target>/<triple>/<profile>/deps`) and marks the
/// target directory with a `CACHEDIR.TAG`. Proc macros get no `OUT_DIR`, and
/// `CARGO_TARGET_DIR` is set only where the user sets it.
fn target_dir(args: impl IntoIterator<Item = OsString>) -> Option<PathBuf> {
    let mut args = args.into_iter();
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

/// An entry: [`MAGIC`], the key, the three texts each after its length (u64, little
/// endian), and the [`word_sum`] of all that (two u64, little endian).
fn encode(key: &Key, texts: &Emitted) -> Vec<u8> {
    let Emitted { llvm_ir_unoptimized, llvm_ir, ptx } = texts;
    let fields = [llvm_ir_unoptimized, llvm_ir, ptx];
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + fields.iter().map(|f| 8 + f.len()).sum::<usize>() + 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.0);
    for f in fields {
        out.extend_from_slice(&(f.len() as u64).to_le_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    let sum = word_sum(&out);
    out.extend_from_slice(&sum[0].to_le_bytes());
    out.extend_from_slice(&sum[1].to_le_bytes());
    out
}

/// The texts of an entry, if it is whole, intact and `key`'s.
fn decode(key: &Key, bytes: &[u8]) -> Option<Emitted> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(16)?)?;
    let [a, b] = word_sum(body);
    if sum[..8] != a.to_le_bytes() || sum[8..] != b.to_le_bytes() {
        return None;
    }
    let rest = body.strip_prefix(MAGIC)?.strip_prefix(key.0.as_slice())?;
    let mut fields = Vec::with_capacity(3);
    let mut rest = rest;
    for _ in 0..3 {
        let (len, after) = rest.split_at_checked(8)?;
        let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
        let (field, after) = after.split_at_checked(len)?;
        fields.push(String::from_utf8(field.to_vec()).ok()?);
        rest = after;
    }
    let [llvm_ir_unoptimized, llvm_ir, ptx]: [String; 3] = fields.try_into().ok()?;
    rest.is_empty().then_some(Emitted { llvm_ir_unoptimized, llvm_ir, ptx })
}

/// A checksum of `bytes` read as little-endian u64 words, the last one padded with zeros:
/// Fletcher's two running sums (modulo 2^64), of the words and of the first sum, and the
/// length. A changed word changes the first sum; reordered or moved words, the second. Not
/// a cryptographic hash: it catches accidents (a truncated, zero-filled or damaged file),
/// and runs fast without optimisation (see the module's note: four words a step, for the
/// loop's own cost there).
pub(crate) fn word_sum(bytes: &[u8]) -> [u64; 2] {
    let (mut a, mut b) = (0u64, 0u64);
    let mut add = |w: u64| {
        a = a.wrapping_add(u64::from_le(w));
        b = b.wrapping_add(a);
    };
    // SAFETY: every bit pattern is a valid `[u64; 4]`, and `align_to` keeps them in bounds.
    let (head, quads, _) = unsafe { bytes.align_to::<[u64; 4]>() };
    // Memory not 8-byte aligned (the global allocator's buffers are) is summed by the
    // slower loop alone: the same sum.
    let quads = if head.is_empty() { quads } else { &[] };
    for &[w0, w1, w2, w3] in quads {
        add(w0);
        add(w1);
        add(w2);
        add(w3);
    }
    let mut words = bytes[quads.len() * 32..].chunks(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        add(u64::from_ne_bytes(word));
    }
    [a.wrapping_add(bytes.len() as u64), b]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts() -> Emitted {
        Emitted { llvm_ir_unoptimized: "; before".into(), llvm_ir: "; after".into(), ptx: "// ptx\n".into() }
    }

    #[test]
    fn an_entry_reads_back_only_whole_intact_and_under_its_key() {
        let (key, other) = (Key([7; 32]), Key([8; 32]));
        let bytes = encode(&key, &texts());
        assert_eq!(decode(&key, &bytes), Some(texts()));
        assert_eq!(decode(&other, &bytes), None, "another key's entry");
        for cut in [0, 1, MAGIC.len(), bytes.len() - 17, bytes.len() - 1] {
            assert_eq!(decode(&key, &bytes[..cut]), None, "cut at {cut}");
        }
        for at in [0, MAGIC.len() + 3, MAGIC.len() + 32 + 2, bytes.len() - 20, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1;
            assert_eq!(decode(&key, &flipped), None, "a bit flipped at {at}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&key, &longer), None);
    }

    #[test]
    fn the_word_sum_is_of_the_bytes_wherever_they_lie() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let sum = word_sum(&bytes[..999]);
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes[..999]);
        assert_eq!(word_sum(&shifted[1..]), sum, "the same bytes at another alignment");
        assert_ne!(word_sum(&bytes[..998]), sum, "one byte fewer");
        let mut zeroed = bytes[..999].to_vec();
        zeroed.push(0);
        assert_ne!(word_sum(&zeroed), sum, "a zero byte more");
        let mut swapped = bytes[..999].to_vec();
        swapped.swap(0, 8);
        assert_ne!(word_sum(&swapped), sum, "two words' bytes exchanged");
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
