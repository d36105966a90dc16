"""One sharded module on 8 host CPU devices, dumped after every pass (issue 21's spmd-partitioning case).

JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX='.*/tests/data/passes/' python programs/sharded_tanh_matmul.py OUT_DIR

(run from tests/data/passes: the regex leaves programs/sharded_tanh_matmul.py as the source file in the metadata)
"""

import os
import sys

out = sys.argv[1]
os.environ["XLA_FLAGS"] = (
    f"--xla_dump_to={out} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.* "
    "--xla_force_host_platform_device_count=8"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
xs, ws, outs = NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model"))


def step(x, w):
    return jnp.tanh(x @ w).sum(axis=0)


f = jax.jit(step, in_shardings=(xs, ws), out_shardings=outs)
compiled = f.lower(jax.ShapeDtypeStruct((64, 32), jnp.float32), jax.ShapeDtypeStruct((32, 16), jnp.float32)).compile()
x = jax.device_put(np.ones((64, 32), np.float32), xs)
w = jax.device_put(np.full((32, 16), 0.01, np.float32), ws)
print(compiled(x, w).shape)
