"""Create every input the benchmarks need, skipping what already exists.

Usage::

    python3 benchmarks/make_inputs.py [--out /tmp/bench] [--venv /tmp/jaxenv] [--step STEP ...]

Steps (all by default, in this order; each one is skipped when its output is already there):

``venv``
    A scratch virtualenv with jax/jaxlib 0.10.2 (never a project dependency), marked ready by an empty
    ``<venv>/READY`` once ``from jaxlib import _hlo`` works.
``adam``
    ``<out>/adam3000/``: XLA's dump of ``../shared/bench/large_adam_many_params.py 3000`` (one Adam
    step over 3000 donated tensors; a minute or two and about 3 GB of memory).
``synth``
    ``<out>/synth/synth_20mb.txt`` and ``synth_100mb.txt``: synthetic valid HLO modules made by
    ``synth_module.py`` from the transformer train-step module in tests/data; the 20 MB one is checked
    with XLA's parser.
``manyfiles``
    ``<out>/manyfiles/``: a dump folder made with ``--xla_dump_hlo_pass_re=.*`` (one HLO text file per
    pass that changed a module) for a small program that jits a few hundred variants of small functions,
    giving thousands of files; the step fails if fewer than ``--min-files`` files (at any depth) were
    written.
``passes``
    ``<out>/passes-adam3000/`` and ``<out>/passes-transformer/``: pass-by-pass dumps
    (``--xla_dump_hlo_pass_re=.*``) of the Adam program above and of a transformer train step, made by
    ``tests/data/producers/programs_passes.py`` (the Adam one: about 4 minutes, 3 GB of memory and 500 MB of
    files, 27 pass files of up to 23 MB); what ``bench_passes.py`` measures.

Every step writes into ``<name>.partial`` and renames it when complete, so an interrupted run is redone
rather than mistaken for a finished one. Nothing is written into the repository or into the shared corpus
(``../shared`` beside the checkout, or ``$HLO_LSP_SHARED``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the shared corpus beside the checkout (../shared), as the tests find it, or $HLO_LSP_SHARED
SHARED = Path(os.environ.get("HLO_LSP_SHARED") or HERE.parent.parent / "shared")
ADAM_PROGRAM = SHARED / "bench" / "large_adam_many_params.py"
ADAM_TENSORS = 3000
JAX_PINS = ["jax==0.10.2", "jaxlib==0.10.2"]
SYNTH_SIZES_MB = (20, 100)
SYNTH_VERIFIED_MB = 20
STEPS = ("venv", "adam", "synth", "manyfiles", "passes")
PASSES_PRODUCER = HERE.parent / "tests" / "data" / "producers" / "programs_passes.py"
PASSES_PROGRAMS = {"passes-adam3000": ["adam", str(ADAM_TENSORS)], "passes-transformer": ["transformer"]}

# The program dumped pass by pass for the "manyfiles" step: each (function, size) pair is its own jitted
# module, and XLA writes one file per optimization pass that changed it (about 25-40 per module).
MANYFILES_PROGRAM = '''\
"""Jit many small variants of common JAX patterns so XLA dumps thousands of per-pass files."""
import jax
import jax.numpy as jnp


def mlp(w1, w2, x):
    return jnp.tanh(x @ w1) @ w2


def mlp_loss(w1, w2, x):
    return jnp.mean(mlp(w1, w2, x) ** 2)


def softmax_attention(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(s, axis=-1) @ v


def scan_cumsum(x):
    return jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros_like(x[0]), x)


def while_norm(x):
    return jax.lax.while_loop(lambda s: s[1] < 5, lambda s: (s[0] / (1.0 + jnp.linalg.norm(s[0])), s[1] + 1), (x, 0))


def switch(i, x):
    return jax.lax.switch(i % 3, [jnp.sin, jnp.cos, lambda y: y * y], x)


def sort_gather(x, idx):
    return jnp.sort(x, axis=-1)[:, :2], x[idx % x.shape[0]], x.at[idx % x.shape[0]].add(1.0)


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b


def conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")


def main(sizes):
    key = jax.random.PRNGKey(0)
    for n in sizes:
        a = jax.random.normal(key, (n, n))
        v = jax.random.normal(key, (n,))
        idx = jnp.arange(3, dtype=jnp.int32)
        jax.jit(mlp)(a, a, a)
        jax.jit(jax.grad(mlp_loss, argnums=(0, 1)))(a, a, a)
        jax.jit(softmax_attention)(a, a, a)
        jax.jit(scan_cumsum)(a)
        jax.jit(while_norm)(v)
        jax.jit(switch)(n, v)
        jax.jit(sort_gather)(a, idx)
        jax.jit(layer_norm)(a, v, v)
        jax.jit(conv)(a.reshape(1, 1, n, n), jnp.ones((1, 1, 3, 3)))
        jax.jit(jax.grad(lambda x, g, b: layer_norm(x, g, b).sum()))(a, v, v)


if __name__ == "__main__":
    import sys
    main([int(s) for s in sys.argv[1:]])
'''
MANYFILES_SIZES = [4 + 2 * i for i in range(12)]


def log(message: str) -> None:
    """Print a progress line at once (the steps are long)."""
    print(f"[make_inputs] {message}", flush=True)


def venv_python(venv: Path) -> Path:
    """Return the venv's python executable path (it may not exist yet)."""
    return venv / "bin" / "python"


def venv_ready(venv: Path) -> bool:
    """Return True when the venv is marked ready and its jaxlib parser module imports."""
    if not (venv / "READY").exists():
        return False
    check = subprocess.run(
        [venv_python(venv), "-c", "from jaxlib import _hlo; _hlo.hlo_module_from_text"],
        capture_output=True,
        check=False,
    )
    return check.returncode == 0


def make_venv(venv: Path) -> None:
    """Create the jax scratch venv if it is not ready, then touch ``<venv>/READY``."""
    if venv_ready(venv):
        log(f"venv: {venv} ready, skipped")
        return
    log(f"venv: creating {venv} with {' '.join(JAX_PINS)}")
    if not venv_python(venv).exists():
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([venv_python(venv), "-m", "pip", "install", "-q", *JAX_PINS], check=True)
    subprocess.run([venv_python(venv), "-c", "from jaxlib import _hlo; _hlo.hlo_module_from_text"], check=True)
    (venv / "READY").touch()
    log("venv: ready")


def _run_dump(venv: Path, program: Path, args: list[str], dump_dir: Path, extra_flags: str = "") -> None:
    """Run ``program`` under the venv's python with XLA dumping HLO text into ``dump_dir``."""
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        XLA_FLAGS=f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text {extra_flags}".strip(),
    )
    subprocess.run([venv_python(venv), program, *args], env=env, check=True)


def _fresh_partial(final: Path) -> Path:
    """Return an empty ``<final>.partial`` directory (left-overs of an interrupted run are removed)."""
    partial = final.with_name(final.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    return partial


def make_adam(out: Path, venv: Path) -> None:
    """Dump the adam program with N = 3000 into ``<out>/adam3000`` unless it exists."""
    final = out / f"adam{ADAM_TENSORS}"
    if final.is_dir():
        log(f"adam: {final} exists, skipped")
        return
    if not ADAM_PROGRAM.exists():
        raise SystemExit(
            f"error: {ADAM_PROGRAM} is missing: it comes with the shared corpus "
            "(../shared beside the checkout; set HLO_LSP_SHARED to put it elsewhere)"
        )
    partial = _fresh_partial(final)
    log(f"adam: compiling N={ADAM_TENSORS} (a minute or two, ~3 GB of memory)")
    _run_dump(venv, ADAM_PROGRAM, [str(ADAM_TENSORS)], partial)
    partial.rename(final)
    for path in sorted(final.glob("*.txt")):
        log(f"adam: {path.name} {path.stat().st_size:,} bytes")


def make_synth(out: Path, venv: Path) -> None:
    """Write the synthetic modules into ``<out>/synth`` unless they exist; XLA-check the 20 MB one."""
    folder = out / "synth"
    folder.mkdir(parents=True, exist_ok=True)
    for size in SYNTH_SIZES_MB:
        final = folder / f"synth_{size}mb.txt"
        if final.exists():
            log(f"synth: {final} exists, skipped")
            continue
        partial = final.with_name(final.name + ".partial")
        command = [sys.executable, HERE / "synth_module.py", partial, "--size-mb", str(size)]
        if size == SYNTH_VERIFIED_MB and venv_ready(venv):
            command[0] = venv_python(venv)
            command.append("--verify")
        subprocess.run(command, check=True)
        partial.rename(final)


def count_files(folder: Path) -> tuple[int, int]:
    """Return (files under ``folder`` at any depth, of which HLO ``*.txt`` at its top level)."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(1 for p in files if p.parent == folder and p.suffix == ".txt")


def make_manyfiles(out: Path, venv: Path, min_files: int) -> None:
    """Dump the many-variants program pass by pass into ``<out>/manyfiles`` unless it exists."""
    final = out / "manyfiles"
    if final.is_dir():
        log(f"manyfiles: {final} exists (%d files, %d HLO text), skipped" % count_files(final))
        return
    partial = _fresh_partial(final)
    program = out / "manyfiles_program.py"
    program.write_text(MANYFILES_PROGRAM, encoding="utf-8")
    log(f"manyfiles: dumping every pass of {len(MANYFILES_SIZES) * 10} jitted variants")
    _run_dump(venv, program, [str(n) for n in MANYFILES_SIZES], partial, "--xla_dump_hlo_pass_re=.*")
    count, hlo_text = count_files(partial)
    if count < min_files:
        raise SystemExit(f"error: manyfiles has {count} files, fewer than {min_files}; left in {partial}")
    partial.rename(final)
    log(f"manyfiles: {count} files, {hlo_text} of them HLO text")


def make_passes(out: Path, venv: Path) -> None:
    """Dump the Adam program and the transformer train step pass by pass into ``<out>/passes-*`` unless they
    exist (``programs_passes.py`` runs each in its own process with the dump flags)."""
    for name, program in PASSES_PROGRAMS.items():
        final = out / name
        if final.is_dir():
            log(f"passes: {final} exists (%d files, %d HLO text), skipped" % count_files(final))
            continue
        if program[0] == "adam" and not ADAM_PROGRAM.exists():
            raise SystemExit(f"error: {ADAM_PROGRAM} is missing: it comes with the shared corpus")
        partial = _fresh_partial(final)
        log(f"passes: dumping {' '.join(program)} pass by pass")
        command = [sys.executable, PASSES_PRODUCER, "--python", venv_python(venv), "--out", partial, *program]
        subprocess.run(command, check=True, env=dict(os.environ, HLO_LSP_SHARED=str(SHARED)))
        partial.rename(final)
        log(f"passes: {final} %d files, %d HLO text" % count_files(final))


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns 0 when every requested step is done or skipped."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/bench"), help="output folder (default /tmp/bench)")
    ap.add_argument("--venv", type=Path, default=Path("/tmp/jaxenv"), help="jax scratch venv (default /tmp/jaxenv)")
    ap.add_argument("--step", action="append", choices=STEPS, help="run only this step (repeatable)")
    ap.add_argument("--min-files", type=int, default=5000, help="fewest files the manyfiles dump must hold")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    shared = SHARED.resolve()
    if out == HERE.parent or HERE.parent in out.parents or out == shared or shared in out.parents:
        ap.error(f"--out must be outside the repository and the shared corpus ({SHARED})")
    steps = args.step or list(STEPS)
    out.mkdir(parents=True, exist_ok=True)
    if "venv" in steps or ({"adam", "manyfiles", "passes"} & set(steps) and not venv_ready(args.venv)):
        make_venv(args.venv)
    if "adam" in steps:
        make_adam(out, args.venv)
    if "synth" in steps:
        make_synth(out, args.venv)
    if "manyfiles" in steps:
        make_manyfiles(out, args.venv, args.min_files)
    if "passes" in steps:
        make_passes(out, args.venv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
