"""Pairs of real dumps for ``peak --diff``: one program under two jax versions, and one change at a time.

    cd tests/data/producers
    nice -n 10 python programs_diff.py --python VENV/bin/python --out DUMPS/diff-jax-V VARIANT ...

VENV is a scratch venv (``jax==V jaxlib==V``, plus ``'numpy<2'`` for 0.4.x; never a dependency of hlo-lsp), on
CPU. Each VARIANT compiles one module, ``jit_train_step``: a train step (loss, grad, SGD update) of a 5-layer
MLP (batch 1024, 256 -> 512 -> 512 -> 512 -> 512 -> 16) whose layers are wrapped in ``jax.checkpoint``, from
ShapeDtypeStructs (nothing runs), with ``XLA_FLAGS=--xla_dump_to=OUT/<variant> --xla_dump_hlo_as_text``:

* ``base``: f32, checkpoint policy ``dots_saveable``. Made with jax 0.4.30 and 0.10.2: the same program
  under two jax versions.
* ``remat``: as base with the policy ``nothing_saveable`` (the backward pass recomputes the layers).
* ``bf16``: as base with parameters and activations in bfloat16.
* ``moved``: base, with 4 comment lines inserted above the line of the first matmul (the line marked
  ``MOVE-ANCHOR``): the same program whose source lines moved. The shifted copy of this file is written to a
  temporary folder and run there under the same relative name, so both dumps name ``programs_diff.py``.

Each variant runs in its own process from this folder under a relative name, so the dumps' FileNames tables
hold ``programs_diff.py``.
"""

from __future__ import annotations

import sys

VARIANTS = ("base", "remat", "bf16", "moved")


def main(variant: str, platform: str = "cpu") -> None:
    import jax
    import jax.numpy as jnp

    sharding = {}
    if platform == "tpu":
        from jax.experimental import topologies
        from jax.sharding import SingleDeviceSharding

        dev = topologies.get_topology_desc(topology_name="v5e:2x2", platform="tpu").devices[0]
        sharding = {"sharding": SingleDeviceSharding(dev)}

    dtype = jnp.bfloat16 if variant == "bf16" else jnp.float32
    policy = jax.checkpoint_policies.nothing_saveable if variant == "remat" else jax.checkpoint_policies.dots_saveable

    def layer(w, b, x):
        y = x @ w  # MOVE-ANCHOR
        return jax.nn.gelu(y + b)

    layer = jax.checkpoint(layer, policy=policy)

    def loss(params, x, y):
        for w, b in params[:-1]:
            x = layer(w, b, x)
        w, b = params[-1]
        logits = (x @ w + b).astype(jnp.float32)
        return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0])

    def train_step(params, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, params, g), l

    sizes = (256, 512, 512, 512, 512, 16)
    params = [
        (jax.ShapeDtypeStruct((m, n), dtype, **sharding), jax.ShapeDtypeStruct((n,), dtype, **sharding))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    jax.jit(train_step).lower(
        params,
        jax.ShapeDtypeStruct((1024, 256), dtype, **sharding),
        jax.ShapeDtypeStruct((1024,), jnp.int32, **sharding),
    ).compile()


def drive() -> int:
    import argparse
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--platform", choices=("cpu", "tpu"), default="cpu")
    ap.add_argument("variants", nargs="*", default=list(VARIANTS))
    a = ap.parse_args()
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for variant in a.variants:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = here
            if variant == "moved":
                src = (here / "programs_diff.py").read_text().splitlines(keepends=True)
                at = next(i for i, ln in enumerate(src) if ln.rstrip().endswith("# MOVE-ANCHOR"))
                pad = " " * (len(src[at]) - len(src[at].lstrip()))
                src[at:at] = [f"{pad}# (moved: four lines inserted above the matmul)\n"] * 4
                Path(tmp, "programs_diff.py").write_text("".join(src))
                cwd = Path(tmp)
            dump = out / variant
            flags = f"--xla_dump_to={os.path.relpath(dump, cwd)} --xla_dump_hlo_as_text"
            env = dict(os.environ, XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2")
            if a.platform == "cpu":
                env["JAX_PLATFORMS"] = "cpu"
            code = (
                f"import runpy, sys; sys.argv[1:] = [{variant!r}, {a.platform!r}]; "
                "runpy.run_path('programs_diff.py', run_name='__main__')"
            )
            proc = subprocess.run([a.python, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
        n = len(list(dump.glob("*"))) if dump.is_dir() else 0
        status = "ok" if proc.returncode == 0 else "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
        failed += proc.returncode != 0
        print(f"{variant}: {n} files, {status}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] and sys.argv[1] in VARIANTS:
        main(*sys.argv[1:])
    else:
        sys.exit(drive())
