"""Make real XLA dumps with one producer (a jax/jaxlib or TensorFlow version, on CPU, or TPU/GPU deviceless).

    cd tests/data/producers && python make.py PRODUCER --python VENV/bin/python --out DUMPS/PRODUCER [--spec H100]

PRODUCER names the platform by its prefix: ``jax-*`` (CPU), ``tpu-*``, ``gpu-*`` (deviceless, see
programs_jax.py; gpu needs ``--spec``, XLA's ``h100_sxm.txtpb`` without its ``collective_memory_granularity``
line), ``tf-*`` (TensorFlow with ``jit_compile=True``, programs_tf.py). Each program runs in its own process with
``XLA_FLAGS=--xla_dump_to=OUT/<program> --xla_dump_hlo_as_text`` so each gets its own folder. The programs run
from this folder under a relative name, so no absolute path lands in a dump's FileNames table. The venv is a
scratch one (``pip install jax==V jaxlib==V``, ``'jax[tpu]==V'``, ``'jax[cuda12]==V'``, ``tensorflow-cpu==V``),
never a dependency of hlo-lsp. A program a producer cannot run is reported and skipped. Prints one line a program.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAX_PROGRAMS = ("mlp_train", "loops", "conv", "gather_scatter_sort", "transformer", "cond_rng_linalg", "collectives")
TF_PROGRAMS = ("mlp_train", "loops", "conv", "gather_scatter_sort", "transformer")


def run(producer: str, python: str, out: Path, spec: str | None) -> int:
    platform = producer.split("-", 1)[0]
    script = "programs_tf.py" if platform == "tf" else "programs_jax.py"
    programs = TF_PROGRAMS if platform == "tf" else JAX_PROGRAMS
    failed = 0
    for program in programs:
        dump = out / program
        # relative: the dump folder is written into the config files TPU and GPU dump
        flags = f"--xla_dump_to={os.path.relpath(dump, HERE)} --xla_dump_hlo_as_text"
        env = dict(os.environ, XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2")
        args = [platform if platform in ("tpu", "gpu") else "cpu", program]
        if platform == "jax" and program == "collectives":
            env["XLA_FLAGS"] += " --xla_force_host_platform_device_count=4"
        if platform == "gpu":
            env["JAX_PLATFORMS"] = "cpu"
            args.append(os.path.relpath(spec, HERE))
        if platform == "tf":
            args = [program]
        code = f"import runpy, sys; sys.argv[1:] = {args!r}; runpy.run_path({script!r}, run_name='__main__')"
        proc = subprocess.run([python, "-c", code], cwd=HERE, env=env, capture_output=True, text=True)
        n = len(list(dump.glob("*"))) if dump.is_dir() else 0
        status = "ok" if proc.returncode == 0 else "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
        failed += proc.returncode != 0
        print(f"{producer} {program}: {n} files, {status}", flush=True)
    return failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("producer")
    ap.add_argument("--python", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--spec")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    return 1 if run(a.producer, a.python, a.out.resolve(), a.spec) else 0


if __name__ == "__main__":
    sys.exit(main())
