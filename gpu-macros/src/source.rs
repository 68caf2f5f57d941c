//! What the macro can see of the file its function is written in.
//!
//! A proc macro sees only its own item, yet some mistakes show only around it: `#[vectorize]`
//! on a method (an `impl` cannot hold the module the macro generates), a call of a function
//! that is not marked `#[device]`, or device functions that call each other in a cycle. In
//! the last two, the chain that fetches definitions (see `chain`) names a module that never
//! comes to exist, and rustc would report only an unresolved module (E0433).
//!
//! Where rustc tells the macro the file of its function (1.88 and later), the file is parsed
//! once per compilation into a plain summary, and these mistakes are reported here. The
//! summary claims only what the file shows for certain: a name that could come from
//! elsewhere (another file, an import, a glob, an item macro, a `cfg`) is left to rustc, so
//! a program that compiles is never refused here.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use quote::quote;
use syn::visit::Visit;

use ptx_codegen::frontend::{external_callees, path_key, scalar_type};

/// How a function is marked.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// No attribute that could change what it is.
    Plain,
    Device,
    Vectorized,
    /// `cfg`, or an attribute the summary cannot judge.
    Unknown,
}

/// A function of the file, with what the checks need of it.
#[derive(Debug)]
struct FnInfo {
    /// The inline modules around it, from the file's root.
    module: Vec<String>,
    name: String,
    kind: Kind,
    /// In an `impl` or a `trait` rather than a module.
    associated: bool,
    /// Its signature and body as tokens, to recognise the macro's own function.
    fingerprint: String,
    /// The paths it calls (see `frontend::external_callees`).
    callees: Vec<String>,
}

/// The names of an inline module that the summary can account for.
#[derive(Debug, Default)]
struct ModuleInfo {
    path: Vec<String>,
    /// A glob import, an item macro or an `extern crate` may bring in any name.
    opaque: bool,
    /// Names brought in by `use`, and modules (inline or in their own file).
    other_names: Vec<String>,
    /// Inline modules, whose items the summary has.
    inline: Vec<String>,
}

#[derive(Debug, Default)]
struct Summary {
    fns: Vec<FnInfo>,
    modules: Vec<ModuleInfo>,
    consts: Vec<ConstInfo>,
}

/// A `const` item of a module of the file.
#[derive(Debug)]
struct ConstInfo {
    module: Vec<String>,
    name: String,
    /// The item without its attributes and visibility, as tokens.
    text: String,
    /// Its type is a scalar (what a kernel can compute with) and it has no attribute.
    plain: bool,
}

/// The macro's function located in its file.
pub struct Surroundings {
    summary: Arc<Summary>,
    /// Index of the function in `summary.fns`.
    at: usize,
}

/// What a path called from the function names, as far as the file shows.
enum Callee {
    /// A function of the file without `#[device]`.
    Plain,
    /// A device or vectorized function of the file (index in `summary.fns`).
    Device(usize),
    Unknown,
}

impl Surroundings {
    /// The function `func` in its file, if the file can be read and holds it once.
    pub fn of(func: &syn::ItemFn) -> Option<Surroundings> {
        let path = func.sig.ident.span().local_file()?;
        let summary = summary_of(path)?;
        let fingerprint = fingerprint(&func.sig, &func.block);
        let name = func.sig.ident.to_string();
        let mut found = summary.fns.iter().enumerate().filter(|(_, f)| f.name == name && f.fingerprint == fingerprint);
        let (at, first) = found.next()?;
        // The same text twice in different places: which one is this?
        if found.any(|(_, f)| f.module != first.module || f.associated != first.associated) {
            return None;
        }
        Some(Surroundings { summary, at })
    }

    fn func(&self) -> &FnInfo {
        &self.summary.fns[self.at]
    }

    /// Whether the function is a method or an associated function (of an `impl` or `trait`).
    pub fn is_associated(&self) -> bool {
        self.func().associated
    }

    /// Errors for the calls, among `paths`, of functions of the file not marked `#[device]`,
    /// and for a cycle of calls that comes back to this function.
    pub fn call_errors(&self, paths: &[syn::Path], caller: &str) -> Option<syn::Error> {
        let mut errors: Vec<syn::Error> = Vec::new();
        for path in paths {
            let key = path_key(path);
            if let Callee::Plain = self.resolve(&self.func().module, &key) {
                let name = path.segments.last().map_or_else(|| key.clone(), |s| s.ident.to_string());
                errors.push(syn::Error::new_spanned(
                    path,
                    format!(
                        "`{key}` cannot be called from a {caller}: it is not marked `#[gpu_runtime::device]`; \
                         add `#[gpu_runtime::device]` to `fn {name}` (or move `{name}` inside this function)"
                    ),
                ));
            }
        }
        if let Some((path, cycle)) = self.cycle(paths) {
            let names: Vec<String> = cycle.iter().map(|&i| format!("`{}`", self.summary.fns[i].name)).collect();
            let own = format!("`{}`", self.func().name);
            errors.push(syn::Error::new_spanned(
                path,
                format!(
                    "recursion is not supported on the GPU: {own} calls {}, which calls {own} (a kernel has no call \
                     stack to grow); rewrite them as a loop",
                    names.join(", which calls ")
                ),
            ));
        }
        let mut it = errors.into_iter();
        let mut first = it.next()?;
        it.for_each(|e| first.combine(e));
        Some(first)
    }

    /// Errors for `f32::consts::PI` (or `f64::…`) in `func` where the file shows that its
    /// module imports no `f32`: there `f32` is the primitive type, and rustc rejects the
    /// path (E0223). With `use std::f32;` in scope it is valid Rust, and accepted.
    pub fn consts_spelling_errors(&self, func: &syn::ItemFn) -> Option<syn::Error> {
        let m = self.module(&self.func().module)?;
        if m.opaque {
            return None;
        }
        let mut paths = TypeConsts(Vec::new());
        paths.visit_block(&func.block);
        let mut errors = paths
            .0
            .into_iter()
            .filter(|(ty, _, _)| !m.other_names.contains(ty) && !m.inline.contains(ty))
            .map(|(ty, name, path)| {
                syn::Error::new_spanned(
                    path,
                    format!(
                        "`{ty}::consts::{name}` is not a path Rust accepts (`{ty}` here is the type, not the module \
                         `std::{ty}`): write `std::{ty}::consts::{name}` or `core::{ty}::consts::{name}`"
                    ),
                )
            });
        let mut first = errors.next()?;
        errors.for_each(|e| first.combine(e));
        Some(first)
    }

    /// Copies of the module's own constants that `func` names (directly or through other
    /// such constants), in an order where each comes after those it uses, for the GPU
    /// compiler, which sees only the function. Only constants of the function's own module
    /// in this file, of a scalar type and without attributes, are copied: a name that
    /// could come from elsewhere (an import, a glob, another file, a `cfg`) stays unknown
    /// to the compiler, which says so. `Err` for a name the module defines more than once.
    pub fn module_consts(&self, func: &syn::ItemFn) -> Result<Vec<syn::ItemConst>, syn::Error> {
        let module = &self.func().module;
        let Some(m) = self.module(module) else { return Ok(Vec::new()) };
        let mut names = Names::default();
        names.visit_block(&func.block);
        let own: Vec<String> = names.defined.clone();
        let mut wanted: Vec<(String, Option<syn::Ident>)> =
            names.used.into_iter().filter(|(n, _)| !own.contains(n)).map(|(n, at)| (n, Some(at))).collect();
        let mut copied: Vec<(String, syn::ItemConst)> = Vec::new();
        while let Some((name, at)) = wanted.pop() {
            if copied.iter().any(|(n, _)| *n == name) || m.other_names.contains(&name) {
                continue;
            }
            let mut defs = self.summary.consts.iter().filter(|c| c.module == *module && c.name == name);
            let Some(def) = defs.next() else { continue };
            if defs.next().is_some() {
                let msg = format!(
                    "`{name}` is defined more than once in this module (under different `#[cfg]`s?): the GPU \
                     compiler cannot tell which one applies; define the constant inside the function"
                );
                return Err(match at {
                    Some(at) => syn::Error::new_spanned(at, msg),
                    None => syn::Error::new(proc_macro2::Span::call_site(), msg),
                });
            }
            if !def.plain {
                continue;
            }
            let Ok(item) = syn::parse_str::<syn::ItemConst>(&def.text) else { continue };
            let mut inner = Names::default();
            inner.visit_expr(&item.expr);
            wanted.extend(inner.used.into_iter().map(|(n, _)| (n, None)));
            copied.push((name, item));
        }
        // Dependencies first (the frontend checks constants in dependency order anyway;
        // this keeps the copied text readable).
        copied.reverse();
        Ok(copied.into_iter().map(|(_, c)| c).collect())
    }

    /// The first call among `paths` that leads back to this function through device or
    /// vectorized functions of the file, and the functions on the way.
    fn cycle<'p>(&self, paths: &'p [syn::Path]) -> Option<(&'p syn::Path, Vec<usize>)> {
        for path in paths {
            let Callee::Device(first) = self.resolve(&self.func().module, &path_key(path)) else { continue };
            if first == self.at {
                continue; // a call of itself is reported by the entry point
            }
            let mut visited = vec![first];
            if let Some(way) = self.way_back(first, &mut visited) {
                return Some((path, way));
            }
        }
        None
    }

    /// The functions from `from` (included) to one that calls this function, if any.
    fn way_back(&self, from: usize, visited: &mut Vec<usize>) -> Option<Vec<usize>> {
        let f = &self.summary.fns[from];
        for key in &f.callees {
            let Callee::Device(next) = self.resolve(&f.module, key) else { continue };
            if next == self.at {
                return Some(vec![from]);
            }
            if !visited.contains(&next) {
                visited.push(next);
                if let Some(mut way) = self.way_back(next, visited) {
                    way.insert(0, from);
                    return Some(way);
                }
            }
        }
        None
    }

    /// What `key`, called from the inline module `module`, names.
    fn resolve(&self, module: &[String], key: &str) -> Callee {
        let mut segments: Vec<&str> = key.split("::").collect();
        // `g::scalar(x)`: the original of the vectorized function `g`.
        let scalar = segments.len() > 1 && segments.last() == Some(&"scalar");
        if scalar {
            segments.pop();
        }
        let mut at: Vec<String> = module.to_vec();
        let Some((name, mut prefix)) = segments.split_last() else { return Callee::Unknown };
        if let Some((&"self", rest)) = prefix.split_first() {
            prefix = rest;
        }
        while let Some((&"super", rest)) = prefix.split_first() {
            if at.pop().is_none() {
                return Callee::Unknown;
            }
            prefix = rest;
        }
        // Other leading segments name inline modules of the file (`crate::` and other
        // crates are left to rustc).
        for seg in prefix {
            let Some(m) = self.module(&at) else { return Callee::Unknown };
            if m.opaque || !m.inline.iter().any(|n| n == seg) || m.other_names.iter().any(|n| n == seg) {
                return Callee::Unknown;
            }
            at.push((*seg).to_string());
        }
        let Some(m) = self.module(&at) else { return Callee::Unknown };
        if m.opaque || m.other_names.iter().any(|n| n == name) || m.inline.iter().any(|n| n == name) {
            return Callee::Unknown;
        }
        let mut fns =
            self.summary.fns.iter().enumerate().filter(|(_, f)| !f.associated && f.module == at && f.name == *name);
        let (Some((i, f)), None) = (fns.next(), fns.next()) else { return Callee::Unknown };
        match (f.kind, scalar) {
            (Kind::Plain, false) => Callee::Plain,
            (Kind::Device, false) | (Kind::Vectorized, true) => Callee::Device(i),
            _ => Callee::Unknown,
        }
    }

    /// The inline module at `path`, if there is one (two, under different `cfg`s, could be
    /// either).
    fn module(&self, path: &[String]) -> Option<&ModuleInfo> {
        let mut found = self.summary.modules.iter().filter(|m| m.path == path);
        match (found.next(), found.next()) {
            (Some(m), None) => Some(m),
            _ => None,
        }
    }
}

/// The paths `f32::consts::NAME` and `f64::consts::NAME` of a body: the type, the name and
/// the path.
struct TypeConsts(Vec<(String, String, syn::Path)>);

impl<'ast> Visit<'ast> for TypeConsts {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [ty, consts, name] = segments.as_slice() {
            if p.qself.is_none() && p.path.leading_colon.is_none() && (ty == "f32" || ty == "f64") && consts == "consts"
            {
                self.0.push((ty.clone(), name.clone(), p.path.clone()));
            }
        }
    }
}

/// The signature and body as one string of tokens, spacing aside.
fn fingerprint(sig: &syn::Signature, block: &syn::Block) -> String {
    quote!(#sig #block).to_string().chars().filter(|c| !c.is_whitespace()).collect()
}

/// The summary of the file at `path`, parsed at most once per compilation (and again if it
/// changes, for a long-lived macro server).
fn summary_of(path: PathBuf) -> Option<Arc<Summary>> {
    type Cache = Vec<(PathBuf, Option<SystemTime>, Arc<Summary>)>;
    static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
    let modified = std::fs::metadata(&path).ok()?.modified().ok();
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, s)) = cache.iter().find(|(p, m, _)| *p == path && *m == modified) {
        return Some(Arc::clone(s));
    }
    let summary = Arc::new(Summary::parse(&std::fs::read_to_string(&path).ok()?)?);
    cache.retain(|(p, _, _)| *p != path);
    cache.push((path, modified, Arc::clone(&summary)));
    Some(summary)
}

impl Summary {
    fn parse(text: &str) -> Option<Summary> {
        let file = syn::parse_file(text).ok()?;
        let mut summary = Summary::default();
        summarise(&file.items, &mut Vec::new(), &mut summary);
        Some(summary)
    }
}

fn summarise(items: &[syn::Item], module: &mut Vec<String>, out: &mut Summary) {
    let mut info = ModuleInfo { path: module.clone(), ..ModuleInfo::default() };
    for item in items {
        match item {
            syn::Item::Fn(f) => out.fns.push(fn_info(module, &f.attrs, &f.sig, &f.block, false, Some(f))),
            syn::Item::Impl(i) => {
                for it in &i.items {
                    if let syn::ImplItem::Fn(f) = it {
                        out.fns.push(fn_info(module, &f.attrs, &f.sig, &f.block, true, None));
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(syn::TraitItemFn { attrs, sig, default: Some(block), .. }) = it {
                        out.fns.push(fn_info(module, attrs, sig, block, true, None));
                    }
                }
            }
            syn::Item::Mod(m) => {
                let name = m.ident.to_string();
                match &m.content {
                    Some((_, items)) => {
                        info.inline.push(name.clone());
                        module.push(name);
                        summarise(items, module, out);
                        module.pop();
                    }
                    _ => info.other_names.push(name),
                }
            }
            syn::Item::Use(u) => use_names(&u.tree, &mut info),
            syn::Item::Const(c) => {
                let mut item = c.clone();
                item.attrs.clear();
                item.vis = syn::Visibility::Inherited;
                out.consts.push(ConstInfo {
                    module: module.clone(),
                    name: c.ident.to_string(),
                    text: quote!(#item).to_string(),
                    // A scalar type, as the kernel language reads one.
                    plain: c.attrs.iter().all(|a| a.path().is_ident("doc")) && scalar_type(&c.ty).is_ok(),
                });
            }
            syn::Item::Macro(m) if m.ident.is_none() => info.opaque = true,
            syn::Item::ExternCrate(_) => info.opaque = true,
            _ => {}
        }
    }
    out.modules.push(info);
}

fn use_names(tree: &syn::UseTree, info: &mut ModuleInfo) {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, info),
        syn::UseTree::Name(n) => info.other_names.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => info.other_names.push(r.rename.to_string()),
        syn::UseTree::Glob(_) => info.opaque = true,
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_names(t, info)),
    }
}

fn fn_info(
    module: &[String],
    attrs: &[syn::Attribute],
    sig: &syn::Signature,
    block: &syn::Block,
    associated: bool,
    item: Option<&syn::ItemFn>,
) -> FnInfo {
    FnInfo {
        module: module.to_vec(),
        name: sig.ident.to_string(),
        kind: kind(attrs),
        associated,
        fingerprint: fingerprint(sig, block),
        callees: item.map(|f| external_callees(f).iter().map(path_key).collect()).unwrap_or_default(),
    }
}

/// What a function's attributes make of it.
fn kind(attrs: &[syn::Attribute]) -> Kind {
    // Attributes that leave a function a plain function.
    const INERT: &[&str] = &[
        "doc",
        "inline",
        "cold",
        "must_use",
        "allow",
        "warn",
        "deny",
        "forbid",
        "expect",
        "deprecated",
        "track_caller",
        "rustfmt",
        "clippy",
    ];
    let mut kind = Kind::Plain;
    for a in attrs {
        let segments: Vec<String> = a.path().segments.iter().map(|s| s.ident.to_string()).collect();
        let (first, last) = match (segments.first(), segments.last()) {
            (Some(f), Some(l)) => (f.as_str(), l.as_str()),
            _ => return Kind::Unknown,
        };
        kind = match (kind, last) {
            (Kind::Plain, "device") => Kind::Device,
            (Kind::Plain, "vectorize") => Kind::Vectorized,
            (k, _) if INERT.contains(&first) => k,
            _ => return Kind::Unknown,
        };
    }
    kind
}

/// The one-segment names a body uses (as values, types or generic arguments: `N` in
/// `shared::<f32, N>()`), and the constants it defines itself.
#[derive(Default)]
struct Names {
    used: Vec<(String, syn::Ident)>,
    defined: Vec<String>,
}

impl Names {
    /// Notes a use of `ident` (its first, for the error's place).
    fn use_of(&mut self, ident: &syn::Ident) {
        let name = ident.to_string();
        if !self.used.iter().any(|(n, _)| *n == name) {
            self.used.push((name, ident.clone()));
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if let (None, [seg]) = (p.leading_colon, p.segments.iter().collect::<Vec<_>>().as_slice()) {
            self.use_of(&seg.ident);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        // A constant in a pattern (`TPB => …`) reads like a binding.
        self.use_of(&p.ident);
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        self.defined.push(c.ident.to_string());
        syn::visit::visit_item_const(self, c);
    }
}

/// `func` with copies of the constants of its module that it names (see
/// [`Surroundings::module_consts`]) at the start of its body, and items that make rustc
/// check each copy against the constant it compiled: a copy that differs (the file's text
/// is not what rustc built, e.g. a constant made by a macro) fails the build rather than
/// giving the GPU another value.
pub fn with_module_consts(
    func: syn::ItemFn,
    surroundings: Option<&Surroundings>,
) -> (syn::ItemFn, proc_macro2::TokenStream) {
    let Some(s) = surroundings else { return (func, proc_macro2::TokenStream::new()) };
    let consts = match s.module_consts(&func) {
        Ok(c) if c.is_empty() => return (func, proc_macro2::TokenStream::new()),
        Ok(c) => c,
        Err(e) => return (func, e.to_compile_error()),
    };
    let mut checks = proc_macro2::TokenStream::new();
    for c in &consts {
        let (name, ty, expr) = (&c.ident, &c.ty, &c.expr);
        let float = scalar_type(ty).is_ok_and(|t| t.is_floating());
        let same = if float { quote!(COPY.to_bits() == #name.to_bits()) } else { quote!(COPY == #name) };
        let msg = format!("the GPU copy of `{name}` differs from the constant rustc compiled");
        checks.extend(quote! {
            const _: () = {
                const COPY: #ty = #expr;
                ::core::assert!(#same, #msg);
            };
        });
    }
    let mut func = func;
    let items = consts.into_iter().map(|c| syn::Stmt::Item(syn::Item::Const(c)));
    func.block.stmts.splice(0..0, items);
    (func, checks)
}

/// The error for `#[vectorize]` or `#[device]` (`attr`) on an associated function.
pub fn associated_error(func: &syn::ItemFn, attr: &str) -> syn::Error {
    let name = &func.sig.ident;
    syn::Error::new_spanned(
        name,
        format!(
            "`{attr}` applies to free functions, not to functions in an `impl` or `trait`: move `fn {name}` out \
             of the `impl`, to module level (the macro defines a module `{name}` beside the function, which an \
             `impl` cannot hold)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The surroundings of the function `name` of `text`, and what `key` names from it.
    fn resolve(text: &str, name: &str, key: &str) -> &'static str {
        let s = at(text, name);
        match s.resolve(&s.func().module, key) {
            Callee::Plain => "plain",
            Callee::Device(i) => {
                if s.summary.fns[i].kind == Kind::Vectorized {
                    "vectorized"
                } else {
                    "device"
                }
            }
            Callee::Unknown => "unknown",
        }
    }

    fn at(text: &str, name: &str) -> Surroundings {
        let summary = Arc::new(Summary::parse(text).expect("parses"));
        let at = summary.fns.iter().position(|f| f.name == name).expect("the function is there");
        Surroundings { summary, at }
    }

    #[test]
    fn what_a_call_names() {
        let file = "
            #[vectorize] fn f(x: f32) -> f32 { x }
            fn plain(x: f32) -> f32 { x }
            #[inline] #[allow(dead_code)] fn inlined(x: f32) -> f32 { x }
            #[device] fn dev(x: f32) -> f32 { x }
            #[gpu_runtime::device] fn dev2(x: f32) -> f32 { x }
            #[cfg(test)] fn cfgd(x: f32) -> f32 { x }
            #[my_attr] fn other(x: f32) -> f32 { x }
            mod utils { fn helper(x: f32) -> f32 { x } pub fn g(x: f32) -> f32 { super::plain(x) } }
            mod elsewhere;
            use elsewhere::imported;
        ";
        assert_eq!(resolve(file, "f", "plain"), "plain");
        assert_eq!(resolve(file, "f", "self::plain"), "plain");
        assert_eq!(resolve(file, "f", "inlined"), "plain");
        assert_eq!(resolve(file, "f", "dev"), "device");
        assert_eq!(resolve(file, "f", "dev2"), "device");
        assert_eq!(resolve(file, "f", "f::scalar"), "vectorized");
        assert_eq!(resolve(file, "f", "f"), "unknown");
        assert_eq!(resolve(file, "f", "cfgd"), "unknown");
        assert_eq!(resolve(file, "f", "other"), "unknown");
        assert_eq!(resolve(file, "f", "utils::helper"), "plain");
        assert_eq!(resolve(file, "g", "super::plain"), "plain");
        assert_eq!(resolve(file, "f", "elsewhere::x"), "unknown");
        assert_eq!(resolve(file, "f", "imported"), "unknown");
        assert_eq!(resolve(file, "f", "crate::plain"), "unknown");
        assert_eq!(resolve(file, "f", "missing"), "unknown");
        let paths: Vec<syn::Path> = vec![syn::parse_quote!(utils::helper), syn::parse_quote!(dev)];
        let message = at(file, "f").call_errors(&paths, "vectorized function").expect("an error").to_string();
        assert!(message.starts_with("`utils::helper` cannot be called from a vectorized function"), "{message}");
    }

    #[test]
    fn what_the_file_cannot_show_is_unknown() {
        let glob = "use utils::*; #[vectorize] fn f(x: f32) -> f32 { x } fn plain(x: f32) -> f32 { x }";
        assert_eq!(resolve(glob, "f", "plain"), "unknown");
        let item_macro = "make_things!(); #[vectorize] fn f(x: f32) -> f32 { x } fn plain(x: f32) -> f32 { x }";
        assert_eq!(resolve(item_macro, "f", "plain"), "unknown");
        let module = "#[vectorize] fn f(x: f32) -> f32 { x } fn plain(x: f32) -> f32 { x } mod plain {}";
        assert_eq!(resolve(module, "f", "plain"), "unknown");
        let cfgs = "#[cfg(a)] mod m { #[vectorize] fn f(x: f32) -> f32 { x } fn plain(x: f32) -> f32 { x } }
                    #[cfg(not(a))] mod m { #[vectorize] fn f(x: f32) -> f32 { x } #[device] fn plain(x: f32) -> f32 { x } }";
        assert_eq!(resolve(cfgs, "f", "plain"), "unknown");
        let test_module =
            "#[cfg(test)] mod tests { #[vectorize] fn f(x: f32) -> f32 { x } fn plain(x: f32) -> f32 { x } }";
        assert_eq!(resolve(test_module, "f", "plain"), "plain");
    }

    #[test]
    fn cycles_and_methods() {
        let file = "
            #[device] fn a(n: u32) -> u32 { b(n) }
            #[device] fn b(n: u32) -> u32 { c(n) + d(n) }
            #[device] fn c(n: u32) -> u32 { a(n) }
            #[device] fn d(n: u32) -> u32 { n }
            struct S;
            impl S { #[vectorize] fn m(x: f32) -> f32 { x } }
        ";
        let s = at(file, "a");
        let paths: Vec<syn::Path> = vec![syn::parse_quote!(b)];
        let (_, way) = s.cycle(&paths).expect("a cycle");
        let names: Vec<&str> = way.iter().map(|&i| s.summary.fns[i].name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert!(at(file, "d").cycle(&[]).is_none());
        let message = s.call_errors(&paths, "device function").expect("an error").to_string();
        assert!(message.contains("`a` calls `b`, which calls `c`, which calls `a`"), "{message}");
        assert!(at(file, "m").is_associated());
        let consts = "fn f(r: f32) -> f32 { f32::consts::PI * std::f32::consts::E * r } mod m { use std::f64; fn g(r: f64) -> f64 { f64::consts::PI * r } }";
        let f: syn::ItemFn =
            syn::parse_str("fn f(r: f32) -> f32 { f32::consts::PI * std::f32::consts::E * r }").unwrap();
        let message = at(consts, "f").consts_spelling_errors(&f).expect("an error").to_string();
        assert!(message.contains("write `std::f32::consts::PI` or `core::f32::consts::PI`"), "{message}");
        let g: syn::ItemFn = syn::parse_str("fn g(r: f64) -> f64 { f64::consts::PI * r }").unwrap();
        assert!(at(consts, "g").consts_spelling_errors(&g).is_none());
        assert!(!s.is_associated());
    }

    #[test]
    fn a_function_gets_the_constants_of_its_module_it_names() {
        let file = "
            const TILE: usize = 2 * HALF;
            const HALF: usize = 8;
            const UNUSED: f32 = 1.0;
            const LIMIT: i64 = 5;
            #[cfg(test)] const FLAGGED: u32 = 1;
            const WIDE: [f32; 2] = [0.0; 2];
            const TWICE: u32 = 1;
            #[cfg(not(test))] const TWICE: u32 = 2;
            mod other { pub const FAR: usize = 3; }
            use other::FAR;
            fn k(x: i64) -> i64 {
                const OWN: i64 = 1;
                let t = [0.0f32; TILE];
                let m = match x { LIMIT => 1, _ => 2 };
                x + OWN + FAR as i64 + FLAGGED as i64 + m + WIDE.len() as i64
            }
            fn dup() -> u32 { TWICE }
        ";
        let s = at(file, "k");
        let f: syn::ItemFn = syn::parse_str(
            "fn k(x: i64) -> i64 { const OWN: i64 = 1; let t = [0.0f32; TILE]; let m = match x { LIMIT => 1, _ => 2 }; \
             x + OWN + FAR as i64 + FLAGGED as i64 + m + WIDE.len() as i64 }",
        )
        .unwrap();
        let names: Vec<String> = s.module_consts(&f).unwrap().iter().map(|c| c.ident.to_string()).collect();
        // `TILE` needs `HALF`, which comes first; `OWN` is the function's own, `FAR` is
        // imported, `FLAGGED` has an attribute, `WIDE` is not a scalar.
        assert_eq!(names, ["HALF", "TILE", "LIMIT"]);
        let (with, checks) = with_module_consts(f, Some(&s));
        assert_eq!(with.block.stmts.len(), 3 + 4, "the copies come first");
        let checks = checks.to_string();
        assert_eq!(checks.matches("assert").count(), 3, "{checks}");

        let d = at(file, "dup");
        let f: syn::ItemFn = syn::parse_str("fn dup() -> u32 { TWICE }").unwrap();
        let e = d.module_consts(&f).unwrap_err().to_string();
        assert!(e.contains("`TWICE` is defined more than once"), "{e}");
    }
}
