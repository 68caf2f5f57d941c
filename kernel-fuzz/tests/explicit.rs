//! The explicit kernels' generator and interpreter: over the corpus's seeds
//! (`explicit::SEEDS`, what `tests/explicit_fuzz.rs` compiles), every construct appears and
//! the interpreter accepts every kernel (it refuses what would race, read shared memory
//! never written, or put a barrier where not the whole block comes), most launches run to
//! the end and the others fault in every way; and the interpreter computes what a few
//! hand-written kernels compute by hand. A change that stops the generator from producing
//! something fails here rather than silently shrinking what the simulator and the GPU are
//! checked on.

use std::collections::{BTreeMap, BTreeSet};

use kernel_fuzz::ast::{BinOp, Expr, ExprKind};
use kernel_fuzz::explicit::*;
use kernel_fuzz::{Overflow, Ty, Value};

fn visit(body: &[KStmt], f: &mut dyn FnMut(&KStmt, bool), uniform: bool) {
    for s in body {
        f(s, uniform);
        match s {
            KStmt::If { then, els, uniform: u, .. } => {
                visit(then, f, uniform && *u);
                visit(els, f, uniform && *u);
            }
            KStmt::Repeat { body, .. } => visit(body, f, uniform),
            KStmt::GridStride { body, .. } | KStmt::BlockStride { body, .. } => visit(body, f, false),
            _ => {}
        }
    }
}

/// The names of what kernel `k` contains, with how many kernels contain each.
fn constructs(k: &Kernel, seen: &mut BTreeMap<String, u32>) {
    let mut here = BTreeSet::new();
    let mut add = |s: String| {
        here.insert(s);
    };
    add(format!("whole warps {}", k.whole_warps));
    add(format!("{} slices", k.params.iter().filter(|p| !matches!(p.kind, ParamKind::Scalar(_))).count()));
    for p in &k.params {
        let class = |t: Ty| {
            if t.is_float() {
                "float"
            } else if t == Ty::Bool {
                "bool"
            } else {
                "integer"
            }
        };
        add(match p.kind {
            ParamKind::Scalar(t) => format!("scalar {}", class(t)),
            ParamKind::Input(t) => format!("input {}", class(t)),
            ParamKind::Output(t, w) => format!("output {} {w:?}", class(t)),
        });
    }
    let shared: Vec<String> = {
        let mut v = Vec::new();
        visit(
            &k.body,
            &mut |s, _| {
                if let KStmt::Shared { name, .. } = s {
                    v.push(name.clone());
                }
            },
            true,
        );
        v
    };
    visit(
        &k.body,
        &mut |s, uniform| {
            let place = if uniform { "in uniform code" } else { "in divergent code" };
            match s {
                KStmt::Index { builtin, .. } => add(format!("{builtin:?}")),
                KStmt::Len { .. } => add("len".into()),
                KStmt::WarpLanes { .. } => add("the warp's lanes".into()),
                KStmt::Scalar(_) => add("scalar statements".into()),
                KStmt::Load { array: Array::Global(_), .. } => add("load from a slice".into()),
                KStmt::Load { array: Array::Shared(_), .. } => add("load from shared memory".into()),
                KStmt::Store { array, op, .. } => add(format!(
                    "store{} into {}",
                    if op.is_some() { " with an operator" } else { "" },
                    if matches!(array, Array::Shared(_)) { "shared memory" } else { "a slice" }
                )),
                KStmt::Shared { ty, .. } => add(format!("shared array of {}", ty.name())),
                KStmt::Atomic { op, array, .. } => {
                    let at = if shared.contains(&array.name().to_string()) { "shared" } else { "global" };
                    add(format!("atomic {} on {at} memory", op.name()));
                }
                KStmt::Barrier { kind, .. } => add(format!("barrier {kind:?}")),
                KStmt::Warp { op, mask, arg, .. } => {
                    add(format!("{op:?} with mask {}", if *mask == Mask::Full { "full" } else { "of the lanes" }));
                    if let Some(Expr { kind: ExprKind::Lit(l), .. }) = arg {
                        if matches!(op, WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor)
                            && l.value.as_i128().is_some_and(|v| v >= 32)
                        {
                            add(format!("{op:?} past the warp"));
                        }
                    }
                }
                KStmt::If { then, uniform: u, .. } => {
                    if matches!(then.as_slice(), [KStmt::Return]) {
                        add(format!("{} return {place}", if *u { "uniform" } else { "divergent" }));
                    } else {
                        add(format!("{} if", if *u { "uniform" } else { "divergent" }));
                    }
                }
                KStmt::GridStride { form, .. } => add(format!("grid-stride loop {form:?}")),
                KStmt::BlockStride { .. } => add("block-stride loop".into()),
                KStmt::Repeat { .. } => add("uniform loop".into()),
                KStmt::Tree { op, .. } => add(format!("tree reduction {}", op.symbol())),
                KStmt::Return => {}
            }
        },
        true,
    );
    for c in here {
        *seen.entry(c).or_insert(0) += 1;
    }
}

#[test]
fn the_corpus_has_every_construct() {
    let mut seen = BTreeMap::new();
    for seed in SEEDS {
        constructs(&kernel(seed), &mut seen);
    }
    println!("kernels of the corpus with each construct: {seen:#?}");
    let mut want: Vec<String> = Vec::new();
    want.extend(["whole warps true", "whole warps false", "1 slices", "2 slices", "3 slices"].map(String::from));
    for c in ["integer", "float", "bool"] {
        want.push(format!("scalar {c}"));
        want.push(format!("input {c}"));
        want.push(format!("output {c} Grid"));
        want.push(format!("output {c} Block"));
    }
    want.push("output integer Atomic".into());
    for b in ["ThreadX", "BlockX", "BlockDimX", "GridDimX", "Grid1", "GridSize1", "LaneId"] {
        want.push(b.into());
    }
    want.extend(
        [
            "len",
            "the warp's lanes",
            "scalar statements",
            "load from a slice",
            "load from shared memory",
            "store into a slice",
            "store with an operator into a slice",
            "store into shared memory",
            "store with an operator into shared memory",
            "block-stride loop",
            "uniform loop",
            "uniform if",
            "divergent if",
            "grid-stride loop While",
            "grid-stride loop StepBy",
            "uniform return in uniform code",
            "divergent return in uniform code",
            "divergent return in divergent code",
        ]
        .map(String::from),
    );
    for t in ATOMIC_TYPES {
        want.push(format!("shared array of {}", t.name()));
    }
    for op in AtomicOp::ALL {
        want.push(format!("atomic {} on shared memory", op.name()));
        want.push(format!("atomic {} on global memory", op.name()));
    }
    for b in ["Sync", "Count", "And", "Or"] {
        want.push(format!("barrier {b}"));
    }
    for op in ["Shfl", "Ballot", "All", "Any", "MatchAny"] {
        want.push(format!("{op} with mask full"));
        want.push(format!("{op} with mask of the lanes"));
    }
    for op in ["ShflUp", "ShflDown", "ShflXor"] {
        want.push(format!("{op} with mask full"));
        want.push(format!("{op} past the warp"));
    }
    for op in ["+", "^", "|", "&"] {
        want.push(format!("tree reduction {op}"));
    }
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains_key(*w)).collect();
    assert!(missing.is_empty(), "the corpus lacks {missing:?}\n(it has {seen:?})");
}

#[test]
fn the_interpreter_runs_the_corpus() {
    let (mut done, mut faults, mut unspecified) = (0, 0, 0);
    let mut messages = BTreeSet::new();
    for seed in SEEDS {
        let k = kernel(seed);
        for (n, launch) in launches(&k).into_iter().enumerate() {
            assert!(!k.whole_warps || launch.block % 32 == 0);
            match run(&k, launch, &arguments(&k, launch, n), Overflow::Wrap) {
                Ok(Outcome::Done(outs)) => {
                    done += 1;
                    assert_eq!(outs.len(), k.params.iter().filter(|p| matches!(p.kind, ParamKind::Output(..))).count());
                }
                Ok(Outcome::Fault { first, faults: all, .. }) => {
                    faults += 1;
                    assert_eq!(all[0], first);
                    messages.insert(first.message.split(':').next().unwrap_or_default().to_string());
                }
                Ok(Outcome::Unspecified(_)) => unspecified += 1,
                Err(e) => panic!("seed {seed}, launch {n}: {e}\n{}", render(&k)),
            }
        }
    }
    let total = done + faults + unspecified;
    assert!(done * 100 >= total * 75, "{done} of {total} launches run to the end");
    assert!(faults > 0 && unspecified > 0, "{faults} faults, {unspecified} unspecified");
    for m in [
        "index out of bounds",
        "attempt to divide by zero",
        "attempt to calculate the remainder with a divisor of zero",
    ] {
        assert!(messages.contains(m), "no launch faults with {m:?}: {messages:?}");
    }
}

/// A hand-written kernel: `name(y0: &mut [u32])` with `body` after the prelude `t`, `b`.
fn by_hand(body: Vec<KStmt>, whole_warps: bool) -> Kernel {
    let mut stmts = vec![
        KStmt::Index { name: "t".into(), builtin: Builtin::ThreadX, ty: Ty::Usize },
        KStmt::Index { name: "gid".into(), builtin: Builtin::Grid1, ty: Ty::Usize },
        KStmt::Index { name: "lane".into(), builtin: Builtin::LaneId, ty: Ty::U32 },
    ];
    stmts.extend(body);
    Kernel {
        seed: 0,
        name: "by_hand".into(),
        params: vec![KParam { name: "y0".into(), kind: ParamKind::Output(Ty::U32, Writes::Grid) }],
        body: stmts,
        whole_warps,
    }
}

fn var(name: &str, ty: Ty) -> Expr {
    Expr::new(ty, ExprKind::Var(name.into()))
}

fn cast(e: Expr, ty: Ty) -> Expr {
    Expr::new(ty, ExprKind::Cast(Box::new(e)))
}

fn outputs(k: &Kernel, launch: Launch) -> Vec<Value> {
    let len = (launch.grid * launch.block) as usize;
    let args = vec![Arg::Slice(vec![Value::U32(0); len])];
    match run(k, launch, &args, Overflow::Wrap) {
        Ok(Outcome::Done(mut outs)) => outs.remove(0),
        other => panic!("{other:?}"),
    }
}

fn store(value: Expr) -> KStmt {
    KStmt::Store { array: Array::Global("y0".into()), index: var("gid", Ty::Usize), op: None, value }
}

#[test]
fn shuffles_take_their_lanes_as_documented() {
    let lane = var("lane", Ty::U32);
    for (op, arg, want) in [
        // lane + 3, or the own value past the warp's end
        (WarpOp::ShflDown, 3, (0..32).map(|l| if l + 3 < 32 { l + 3 } else { l }).collect::<Vec<u32>>()),
        (WarpOp::ShflUp, 5, (0..32).map(|l| if l >= 5 { l - 5 } else { l }).collect()),
        (WarpOp::ShflXor, 6, (0..32).map(|l| l ^ 6).collect()),
        (WarpOp::Shfl, 37, vec![5; 32]),
        // Offsets of a warp or more: the own value.
        (WarpOp::ShflDown, 33, (0..32).collect()),
        (WarpOp::ShflUp, 32, (0..32).collect()),
        (WarpOp::ShflXor, 40, (0..32).collect()),
        (WarpOp::Ballot, 0, vec![0x5555_5555; 32]),
    ] {
        let value = if op == WarpOp::Ballot {
            Expr::new(
                Ty::Bool,
                ExprKind::Binary(
                    BinOp::Eq,
                    Box::new(Expr::new(
                        Ty::U32,
                        ExprKind::Binary(BinOp::Rem, Box::new(lane.clone()), Box::new(Expr::lit(Value::U32(2)))),
                    )),
                    Box::new(Expr::lit(Value::U32(0))),
                ),
            )
        } else {
            lane.clone()
        };
        let offset = arg;
        let arg = (op != WarpOp::Ballot).then(|| Expr::lit(Value::U32(offset)));
        let k = by_hand(
            vec![KStmt::Warp { name: "w".into(), op, mask: Mask::Full, value, arg }, store(var("w", Ty::U32))],
            true,
        );
        let got = outputs(&k, Launch { grid: 2, block: 64 });
        let want: Vec<Value> = (0..4).flat_map(|_| want.iter().map(|&v| Value::U32(v))).collect();
        assert!(got.iter().zip(&want).all(|(a, b)| a.same(*b)), "{op:?} {offset}: {got:?}");
    }
}

#[test]
fn a_tree_reduction_sums_the_block() {
    // s[j] = j for j < 64, then the tree: s[0] = 0 + 1 + … + 63 = 2016, read by every thread.
    let k = by_hand(
        vec![
            KStmt::Index { name: "bd".into(), builtin: Builtin::BlockDimX, ty: Ty::Usize },
            KStmt::Shared { name: "s".into(), ty: Ty::U32, len: 64 },
            KStmt::BlockStride {
                var: "j".into(),
                thread: "t".into(),
                step: "bd".into(),
                len: 64,
                body: vec![KStmt::Store {
                    array: Array::Shared("s".into()),
                    index: var("j", Ty::Usize),
                    op: None,
                    value: cast(var("j", Ty::Usize), Ty::U32),
                }],
            },
            KStmt::Barrier { kind: Barrier::Sync, vote: None },
            KStmt::Tree { array: "s".into(), len: 64, op: BinOp::Add, thread: "t".into(), var: "k".into() },
            KStmt::Load {
                name: "v".into(),
                ty: Ty::U32,
                array: Array::Shared("s".into()),
                index: Expr::lit(Value::Usize(0)),
            },
            KStmt::Barrier { kind: Barrier::Count, vote: Some(("c".into(), Expr::lit(Value::Bool(true)))) },
            store(Expr::new(
                Ty::U32,
                ExprKind::Binary(BinOp::Add, Box::new(var("v", Ty::U32)), Box::new(var("c", Ty::U32))),
            )),
        ],
        false,
    );
    // Its steps need threads 0..32 only; `c` counts the block's threads.
    for (block, sum) in [(64u32, 2016u32), (33, 2016)] {
        let got = outputs(&k, Launch { grid: 2, block });
        assert!(got.iter().all(|v| v.same(Value::U32(sum + block))), "{block}: {got:?}");
    }
}

#[test]
fn a_fault_stops_its_thread_and_the_first_one_is_reported() {
    // y0[gid] = 7 / (t - 5): thread 5 of every block divides by zero; the others write.
    let t32 = cast(var("t", Ty::Usize), Ty::U32);
    let divisor = Expr::new(Ty::U32, ExprKind::Binary(BinOp::Sub, Box::new(t32), Box::new(Expr::lit(Value::U32(5)))));
    let k = by_hand(
        vec![store(Expr::new(
            Ty::U32,
            ExprKind::Binary(BinOp::Div, Box::new(Expr::lit(Value::U32(7))), Box::new(divisor)),
        ))],
        false,
    );
    let args = vec![Arg::Slice(vec![Value::U32(0); 20])];
    match run(&k, Launch { grid: 2, block: 10 }, &args, Overflow::Wrap) {
        Ok(Outcome::Fault { first, faults, undefined: false }) => {
            assert_eq!((first.block, first.thread, first.message.as_str()), (0, 5, "attempt to divide by zero"));
            assert_eq!(faults.iter().map(|f| (f.block, f.thread)).collect::<Vec<_>>(), [(0, 5), (1, 5)]);
        }
        other => panic!("{other:?}"),
    }
}
