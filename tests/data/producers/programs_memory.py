"""Donation: one entry parameter donated (``input_output_alias``), another not, beside an output of its shape.

    cd tests/data/producers
    nice -n 10 python programs_memory.py --python VENV/bin/python --out DUMPS/memory-jax-0.10.2 cpu
    nice -n 10 python programs_memory.py --python TPUVENV/bin/python --out DUMPS/memory-tpu-0.10.2 tpu

VENV: scratch ``jax==0.10.2 jaxlib==0.10.2`` (CPU); TPUVENV: scratch ``jax[tpu]==0.10.2`` (deviceless
``v5e:2x2``, one device, nothing runs). Never a dependency of hlo-lsp. One program, ``donation``: an SGD-with-
momentum step ``step(params, momentum, x, y) -> (params, momentum, loss)`` compiled with
``jax.jit(step, donate_argnums=0)``: every ``params`` leaf is aliased to its new value (``input_output_alias``
in the module header), while every ``momentum`` leaf is not donated although an output of the same shape and
type exists. jax names each entry parameter in its metadata (``op_name="params['w1']"``, ``"momentum['w1']"``).
Compiled from ShapeDtypeStructs with ``XLA_FLAGS=--xla_dump_to=OUT/donation --xla_dump_hlo_as_text`` (relative to
this folder, from which the program runs, so FileNames hold ``programs_memory.py``).
"""

from __future__ import annotations

import sys


def donation(platform: str) -> None:
    import jax
    import jax.numpy as jnp

    if platform == "tpu":
        from jax.experimental import topologies
        from jax.sharding import SingleDeviceSharding

        dev = topologies.get_topology_desc(topology_name="v5e:2x2", platform="tpu").devices[0]
        arg = lambda *s, dt=jnp.float32: jax.ShapeDtypeStruct(s, dt, sharding=SingleDeviceSharding(dev))
    else:
        arg = lambda *s, dt=jnp.float32: jax.ShapeDtypeStruct(s, dt)

    def loss(params, x, y):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)

    def step(params, momentum, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        momentum = jax.tree_util.tree_map(lambda m, d: 0.9 * m + d, momentum, g)
        params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, momentum)
        return params, momentum, l

    params = {"w1": arg(256, 512), "b1": arg(512), "w2": arg(512, 128), "b2": arg(128)}
    jax.jit(step, donate_argnums=0).lower(params, dict(params), arg(64, 256), arg(64, 128)).compile()


def drive() -> int:
    import argparse
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("platform", choices=("cpu", "tpu"))
    a = ap.parse_args()
    dump = a.out.resolve() / "donation"
    flags = f"--xla_dump_to={os.path.relpath(dump, here)} --xla_dump_hlo_as_text"
    env = dict(os.environ, XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2")
    if a.platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    code = (
        f"import runpy, sys; sys.argv[1:] = ['donation', {a.platform!r}]; "
        "runpy.run_path('programs_memory.py', run_name='__main__')"
    )
    proc = subprocess.run([a.python, "-c", code], cwd=here, env=env, capture_output=True, text=True)
    n = len(list(dump.glob("*"))) if dump.is_dir() else 0
    status = "ok" if proc.returncode == 0 else "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    print(f"donation ({a.platform}): {n} files, {status}")
    return proc.returncode


if __name__ == "__main__":
    if sys.argv[1:2] == ["donation"]:
        donation(sys.argv[2])
    else:
        sys.exit(drive())
