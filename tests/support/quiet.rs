//! Runs code that may panic, quietly (the panics are expected): `Err` holds Rust's panic
//! message. The differential tests of the workspace include this file (`tests/common`,
//! `ptx-codegen/tests/host_diff.rs`, `kernel-fuzz/tests/differential.rs`) to run the CPU's
//! side of a comparison; the runtime has its own, for its host loops (`gpu_runtime`'s
//! `panics.rs`).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// `f()`, or the message it panicked with (not printed).
pub fn quietly<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTING_PANIC.with(Cell::get) {
                default(info)
            }
        }));
    });
    EXPECTING_PANIC.with(|e| e.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    EXPECTING_PANIC.with(|e| e.set(false));
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}
