"""Pass-by-pass dumps (``--xla_dump_hlo_pass_re=.*``) of a transformer train step and of the bench's Adam step.

    cd tests/data/producers
    nice -n 10 python programs_passes.py --python VENV/bin/python --out DUMPS/passes-transformer transformer
    nice -n 10 python programs_passes.py --python VENV/bin/python --out DUMPS/passes-adam3000 adam 3000

VENV is a scratch venv with ``jax==0.10.2 jaxlib==0.10.2`` (CPU), never a dependency of hlo-lsp. Each program
runs in its own process with ``XLA_FLAGS=--xla_dump_to=OUT --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*``
and ``JAX_PLATFORMS=cpu``, so XLA writes the module after every pass that changed it (the file names are
described in ``../shared/corpus/jax-cpu-passes/README.md``).

* ``transformer``: one train step (loss, grad, Adam update, params and moments donated) of a 2-layer
  pre-LN decoder (d=128, 4 heads, MLP 512, vocab 512, batch 4, sequence 64, f32), compiled ahead of time
  from ShapeDtypeStructs. Run from this folder, so its metadata says ``programs_passes.py``.
* ``adam N``: ``../shared/bench/large_adam_many_params.py N`` run as the bench's README says (it compiles and
  runs one Adam step over N donated tensors), from the bench folder under its own relative name, so its
  metadata says ``large_adam_many_params.py`` as the bench's own dump does. The shared folder is ``../shared``
  beside the checkout or ``$HLO_LSP_SHARED``.

The dump folder is passed to XLA as a path relative to the program's working folder. Prints the number of
files and bytes written.

What one run wrote (jax/jaxlib 0.10.2, Python 3.11, 2 cores; one module each, ``module_0000``; the dumps are not
in the repo, ``../shared/corpus/jax-cpu-passes`` holds two small ones):

| folder (module) | files | bytes | pass files | their bytes | final module | compile |
|---|---:|---:|---:|---:|---:|---:|
| ``passes-transformer`` (``jit_train_step``) | 360 | 22,525,287 | 59 (0000-0058) | 18,900,865 | 558,129 | 5 s |
| ``passes-adam3000`` (``jit_adam_update``) | 157 | 505,221,436 | 27 (0000-0026) | 412,449,073 | 23,330,124 | 225 s |

(14 pipelines each; the Adam time includes its one run.)

The rest are the before/after-optimizations files, the four buffer files, LLVM IR and object files. In both,
file 0000 is byte-identical to ``before_optimizations.txt`` and the last numbered file to
``cpu_after_optimizations.txt``, as in the shared corpus. An Adam run at N=300 wrote 48.8 MB, so size grows about
linearly with N. XLA's parser (``jaxlib._hlo.hlo_module_from_text``, jaxlib 0.10.2, load about 3): the final Adam
module in 1.54 s (best of 3), all 27 Adam pass files in 39.8 s, the final transformer module in 0.053 s and its 59
pass files in 1.0 s.
"""

from __future__ import annotations

import sys


def transformer():
    import jax
    import jax.numpy as jnp
    from jax import lax

    d, heads, mlp, vocab, batch, seq, layers = 128, 4, 512, 512, 4, 64, 2
    hd = d // heads

    def layer_norm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def block(p, x):
        h = layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = (jnp.einsum("btd,dhk->bthk", h, p[n]) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bthk,bshk->bhts", q, k) / jnp.sqrt(float(hd))
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        a = jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1)
        o = jnp.einsum("bhts,bshk->bthk", a, v).reshape(x.shape)
        x = x + o @ p["wo"]
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def loss(params, tokens, targets):
        x = params["embed"][tokens] + params["pos"]
        for p in params["blocks"]:
            x = block(p, x)
        x = layer_norm(x, params["lnf_g"], params["lnf_b"])
        logits = x @ params["embed"].T
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def train_step(params, m, v, tokens, targets, step):
        l, g = jax.value_and_grad(loss)(params, tokens, targets)
        t = step.astype(jnp.float32) + 1.0
        m = jax.tree_util.tree_map(lambda m_, g_: 0.9 * m_ + 0.1 * g_, m, g)
        v = jax.tree_util.tree_map(lambda v_, g_: 0.999 * v_ + 0.001 * g_ * g_, v, g)
        upd = lambda p, m_, v_: p - 1e-3 * (m_ / (1 - 0.9**t)) / (jnp.sqrt(v_ / (1 - 0.999**t)) + 1e-8)
        return jax.tree_util.tree_map(upd, params, m, v), m, v, l

    f32 = lambda *s: jax.ShapeDtypeStruct(s, jnp.float32)
    blk = {
        "ln1_g": f32(d),
        "ln1_b": f32(d),
        "ln2_g": f32(d),
        "ln2_b": f32(d),
        "wq": f32(d, heads, hd),
        "wk": f32(d, heads, hd),
        "wv": f32(d, heads, hd),
        "wo": f32(d, d),
        "w1": f32(d, mlp),
        "b1": f32(mlp),
        "w2": f32(mlp, d),
        "b2": f32(d),
    }
    params = {
        "embed": f32(vocab, d),
        "pos": f32(seq, d),
        "lnf_g": f32(d),
        "lnf_b": f32(d),
        "blocks": [dict(blk) for _ in range(layers)],
    }
    tok = jax.ShapeDtypeStruct((batch, seq), jnp.int32)
    jax.jit(train_step, donate_argnums=(0, 1, 2)).lower(
        params, params, params, tok, tok, jax.ShapeDtypeStruct((), jnp.int32)
    ).compile()


def drive() -> int:
    import argparse
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("program", choices=("transformer", "adam"))
    ap.add_argument("n", nargs="?", default="3000")
    a = ap.parse_args()
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if a.program == "adam":
        shared = Path(os.environ.get("HLO_LSP_SHARED") or here.parents[3] / "shared")
        cwd = shared / "bench"
        code = (
            "import runpy, sys; sys.argv[1:] = [%r]; "
            "runpy.run_path('large_adam_many_params.py', run_name='__main__')" % a.n
        )
    else:
        cwd = here
        code = (
            "import runpy, sys; sys.argv[1:] = ['transformer']; "
            "runpy.run_path('programs_passes.py', run_name='__main__')"
        )
    flags = f"--xla_dump_to={os.path.relpath(out, cwd)} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*"
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([a.python, "-c", code], cwd=cwd, env=env)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"{a.program}: exit {proc.returncode}, {len(files)} files, {sum(p.stat().st_size for p in files)} bytes")
    return proc.returncode


if __name__ == "__main__":
    if sys.argv[1:] == ["transformer"]:
        transformer()
    else:
        sys.exit(drive())
