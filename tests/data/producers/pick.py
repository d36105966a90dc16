"""Copy the few module sets kept in tests/data/producers from a folder of make.py dumps (files unchanged).

    python pick.py DUMPS [DEST]     (copies into DEST, e.g. `.`; without DEST it prints the sizes only)

Per producer: the module sets named in PICK (program folder, module name); "core" keeps only the HLO and buffer
files, otherwise every text file XLA wrote for that module is kept except the ones in SKIP (LLVM IR, PTX, object
files, MLIR, binary protos, and TPU's 50-60 KB flagfile and compilation environment).
"""

import shutil
import sys
from pathlib import Path

SKIP = (".ll", ".ptx", ".o", ".mlir", ".pb", ".flagfile", ".tpu_comp_env.txt")
CORE = (
    "after_optimizations.txt",
    "before_optimizations.txt",
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)
PICK = {
    **{
        f"jax-{v}": [("mlp_train", "jit_predict")]
        for v in ("0.4.13", "0.4.20", "0.5.3", "0.7.2", "0.9.2", "0.10.0", "0.10.2")
    },
    "jax-0.4.30": [("mlp_train", "jit_predict"), ("cond_rng_linalg", "jit_cond")],
    "jax-0.4.35": [("mlp_train", "jit_predict"), ("cond_rng_linalg", "jit_cond")],
    "tf-2.15": [("gather_scatter_sort", "a_inference_gss")],
    "tf-2.21": [("gather_scatter_sort", "a_inference_gss")],
    "tpu-0.10.2": [
        ("mlp_train", "jit_predict", "core"),
        ("cond_rng_linalg", "jit_branches", "core"),
        ("collectives", "jit_coll"),
    ],
    "gpu-0.10.2": [
        ("mlp_train", "jit_predict", "core"),
        ("cond_rng_linalg", "jit_cond", "core"),
        ("collectives", "jit_coll"),
    ],
}


def main(root: Path, dest: Path | None) -> None:
    total = 0
    for prod, picks in PICK.items():
        n = size = 0
        for prog, fn, *core in picks:
            for p in sorted((root / prod / prog).glob(f"module_*.{fn}*")):
                if not p.is_file() or p.name.endswith(SKIP) or "_kernel_module" in p.name or "obj-file" in p.name:
                    continue
                if core and not p.name.endswith(CORE):
                    continue
                n += 1
                size += p.stat().st_size
                if dest is not None:
                    out = dest / prod / prog / p.name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(p, out)
        total += size
        print(f"{prod}: {n} files, {size // 1024} KB")
    print(f"total {total // 1024} KB")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
