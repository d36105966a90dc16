"""Compile-time out-of-memory reports of XLA's TPU compiler, deviceless, with the dump of each compilation.

    cd tests/data/producers
    nice -n 10 python programs_oom.py --python VENV/bin/python --out DUMPS/oom-tpu-0.10.2 [PROGRAM ...]
    (more XLA flags: --flags=--xla_dump_hlo_pass_re=.* ; other table rows, to search the size: --rows R)

VENV is a scratch venv with ``jax[tpu]==0.10.2`` (no TPU needed: the programs are compiled for the topology
``v5e:2x2`` from ``jax.experimental.topologies.get_topology_desc``, 15.75 GiB of HBM per chip, and never run).
Each program compiles in its own process with
``XLA_FLAGS=--xla_dump_to=OUT/<program> --xla_dump_hlo_as_text`` (a path relative to this folder), and the
error the compile raises is written to ``OUT/<program>.log`` as a user would paste it: the exception's type
and message (jax's traceback is left out: it names the venv's absolute paths).

The programs: one train step of an MLP (``loss``, ``grad``, SGD update, nothing donated, f32) whose layers are
16384x16384 weights (1 GiB each), preceded by a table f32[rows, 16384] whose mean is added to the input; the
non-donated parameters and their new values fill HBM, and the table's rows tune the total (128 KiB a row on one
device).

* ``long_1dev``: one device, 7 layers, batch 1024, 11984 rows: a few MB over 15.75 GiB, XLA's long form
  (``Ran out of memory in memory space hbm`` ... ``Largest program allocations in hbm``). The window is narrow:
  11944 rows compile, 12024 rows give the short form (see ``../oom/README.md``).
* ``long_mesh``: the 2x2 mesh (``data`` x ``model``), batch 2048 over ``data``, weights and table split over
  ``model`` (half a weight a device), 14 layers, 16776 rows: the long form again, per device.
* ``short``: one device, 2 layers, batch 65536: the short form (``HLO temporaries (...) exceeds available HBM``).

Run from this folder under a relative name, so the dumps' FileNames tables hold ``programs_oom.py``.
"""

from __future__ import annotations

import sys

# program -> (mesh shape, layers, batch, rows of the table, weights sharded over "model");
# width 16384 (1 GiB an f32 weight); the rows tune the total to a few MB over 15.75 GiB
PROGRAMS = {
    "long_1dev": ((1, 1), 7, 1024, 11984, False),
    "long_mesh": ((2, 2), 14, 2048, 16776, True),
    "short": ((1, 1), 2, 65536, 8, False),
}
WIDTH = 16384


def main(program: str, table_rows: str | None = None) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import topologies
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    shape, layers, b, rows, shard_w = PROGRAMS[program]
    if table_rows:
        rows = int(table_rows)
    devices = topologies.get_topology_desc(topology_name="v5e:2x2", platform="tpu").devices
    mesh = Mesh(np.array(devices[: shape[0] * shape[1]]).reshape(shape), ("data", "model"))

    def predict(params, x):
        table, params = params[0], params[1:]
        x = x + jnp.mean(table, axis=0)
        for w in params[:-1]:
            x = jax.nn.relu(x @ w)
        return x @ params[-1]

    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)

    def train_step(params, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        return [p - 0.01 * d for p, d in zip(params, g)], l

    wsh = NamedSharding(mesh, P(None, "model") if shard_w else P())
    batch_sharded = NamedSharding(mesh, P("data"))
    params = [jax.ShapeDtypeStruct((rows, WIDTH), jnp.float32, sharding=wsh)]
    params += [jax.ShapeDtypeStruct((WIDTH, WIDTH), jnp.float32, sharding=wsh) for _ in range(layers)]
    x = jax.ShapeDtypeStruct((b, WIDTH), jnp.float32, sharding=batch_sharded)
    y = jax.ShapeDtypeStruct((b, WIDTH), jnp.float32, sharding=batch_sharded)
    try:
        jax.jit(train_step).lower(params, x, y).compile()
    except Exception as e:  # the OOM: print it as a user would paste it
        print(f"{type(e).__module__}.{type(e).__name__}: {e}", file=sys.stderr)
        raise SystemExit(3) from None
    print("compiled: no out-of-memory", file=sys.stderr)


def drive() -> int:
    import argparse
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--rows", help="override the table's rows (to search for the size that just overflows)")
    ap.add_argument("--flags", default="", help="more XLA_FLAGS")
    ap.add_argument("programs", nargs="*", default=list(PROGRAMS))
    a = ap.parse_args()
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for program in a.programs:
        dump = out / program
        flags = f"--xla_dump_to={os.path.relpath(dump, here)} --xla_dump_hlo_as_text {a.flags}".strip()
        env = dict(os.environ, XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2")
        args = [program] + ([a.rows] if a.rows else [])
        code = f"import runpy, sys; sys.argv[1:] = {args!r}; runpy.run_path('programs_oom.py', run_name='__main__')"
        proc = subprocess.run([a.python, "-c", code], cwd=here, env=env, capture_output=True, text=True)
        err = proc.stderr
        start = err.find("jax.errors.") if "jax.errors." in err else err.find("jaxlib.")
        msg = err[start:] if start >= 0 else err
        (out / f"{program}.log").write_text(msg)
        n = len(list(dump.glob("*"))) if dump.is_dir() else 0
        first = next((ln for ln in msg.splitlines() if ln.strip()), "?")
        print(f"{program}: exit {proc.returncode}, {n} files; {first[:200]}", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] and sys.argv[1] in PROGRAMS:
        main(*sys.argv[1:])
    else:
        sys.exit(drive())
