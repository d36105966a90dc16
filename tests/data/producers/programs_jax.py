"""Small JAX programs whose compilation makes XLA dump its work (run by make.py, inside a producer's venv).

    python -c "import runpy, sys; runpy.run_path('programs_jax.py', run_name='__main__')" PLATFORM PROGRAM [SPEC]

PLATFORM is cpu, tpu (deviceless, a v5e:2x2 topology) or gpu (deviceless, a 1x1x4 H100 topology whose target
config text is the file SPEC). XLA_FLAGS (the dump flags) must be set by the caller. Every program is compiled
ahead of time from ShapeDtypeStructs (`jit(...).lower(...).compile()`), nothing runs, so no device is needed.
run_path keeps this file's name relative, so the FileNames tables of the dumps hold `programs_jax.py`.
Written for every jax from 0.4.13 to 0.10: only APIs all of them have.
"""

import sys

import numpy as np


def main(platform, program, spec=None):
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    if platform == "tpu":
        from jax.experimental import topologies

        devices = topologies.get_topology_desc(topology_name="v5e:2x2", platform="tpu").devices
    elif platform == "gpu":
        from jax.experimental import topologies

        with open(spec) as f:
            text = f.read()
        devices = topologies.get_topology_desc(platform="cuda", target_config=text, topology="1x1x4").devices
    else:
        devices = jax.devices()
    mesh = Mesh(np.array(devices[:4]).reshape(2, 2), ("x", "y")) if len(devices) >= 4 else None

    def arg(shape, dtype=jnp.float32, spec=None):
        if mesh is None:
            return jax.ShapeDtypeStruct(shape, dtype)
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec if spec is not None else P()))

    def compile_(fn, *args, out=None, static=()):
        kw = {}
        if mesh is not None and out is not None:
            kw["out_shardings"] = NamedSharding(mesh, out)
        return jax.jit(fn, static_argnums=static, **kw).lower(*args).compile()

    if program == "mlp_train":

        def predict(params, x):
            (w1, b1), (w2, b2) = params
            h = jax.nn.relu(x @ w1 + b1)
            return h @ w2 + b2

        def loss(params, x, y):
            logits = predict(params, x)
            logp = jax.nn.log_softmax(logits)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

        def train_step(params, x, y):
            l, g = jax.value_and_grad(loss)(params, x, y)
            return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, params, g), l

        params = ((arg((128, 256)), arg((256,))), (arg((256, 10)), arg((10,))))
        compile_(train_step, params, arg((32, 128), spec=P("x")), arg((32,), jnp.int32, spec=P("x")))
        compile_(predict, params, arg((32, 128), spec=P("x")), out=P("x"))

    elif program == "loops":

        def scan_cumsum(xs):
            def body(c, x):
                c = c * 0.9 + jnp.tanh(x)
                return c, c.sum()

            return lax.scan(body, jnp.zeros(xs.shape[1:], xs.dtype), xs)

        def while_norm(x):
            def cond(s):
                return (s[1] < 20) & (jnp.linalg.norm(s[0]) > 1.0)

            def body(s):
                return s[0] * 0.5 + 0.01, s[1] + 1

            return lax.while_loop(cond, body, (x, 0))

        def fori(x):
            return lax.fori_loop(0, 5, lambda i, v: v @ v.T @ v * 0.01 + i, x)

        compile_(scan_cumsum, arg((16, 64)))
        compile_(while_norm, arg((64, 64)))
        compile_(fori, arg((32, 32)))

    elif program == "conv":

        def net(w, x):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            y = jax.nn.relu(y)
            y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            return lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME").mean()

        compile_(jax.value_and_grad(net), arg((3, 3, 4, 8)), arg((2, 16, 16, 4)))

    elif program == "gather_scatter_sort":

        def gss(x, idx, upd):
            g = x[idx]
            s = jnp.zeros_like(x).at[idx].add(upd)
            order = jnp.argsort(x[:, 0])
            srt = jnp.sort(x, axis=0)
            top = lax.top_k(x[0], 4)[0]
            return g, s, x[order], srt, jnp.cumsum(x, axis=1), top, jnp.flip(x, 0), jnp.pad(x, ((1, 2), (0, 3)))

        compile_(gss, arg((64, 16)), arg((8,), jnp.int32), arg((8, 16)))

    elif program == "transformer":

        def layer_norm(x, g, b):
            m = x.mean(-1, keepdims=True)
            v = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) * lax.rsqrt(v + 1e-5) * g + b

        def block(p, x):
            h = layer_norm(x, p["g1"], p["b1"])
            q, k, v = (jnp.einsum("btd,dhk->bthk", h, p[n]) for n in ("wq", "wk", "wv"))
            s = jnp.einsum("bthk,bshk->bhts", q, k) / 4.0
            mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
            a = jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1)
            o = jnp.einsum("bhts,bshk->bthk", a, v).reshape(x.shape)
            x = x + o @ p["wo"]
            h = layer_norm(x, p["g2"], p["b2"])
            return x + jax.nn.gelu(h @ p["w1"]).astype(jnp.bfloat16).astype(jnp.float32) @ p["w2"]

        d = 64
        p = {
            "g1": arg((d,)),
            "b1": arg((d,)),
            "g2": arg((d,)),
            "b2": arg((d,)),
            "wq": arg((d, 4, 16)),
            "wk": arg((d, 4, 16)),
            "wv": arg((d, 4, 16)),
            "wo": arg((d, d)),
            "w1": arg((d, 4 * d)),
            "w2": arg((4 * d, d)),
        }
        compile_(lambda p, x: jax.grad(lambda p: block(p, x).sum())(p), p, arg((4, 16, d), spec=P("x")))

    elif program == "cond_rng_linalg":

        def branches(i, x):
            return lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * 2.0], x)

        def cond(p, x):
            return lax.cond(p > 0, lambda v: v @ v, lambda v: v.T, x)

        def rng(key):
            return lax.rng_bit_generator(key, (16, 16))

        def linalg(a, b):
            c = a @ a.T + 16.0 * jnp.eye(a.shape[0])
            l = jnp.linalg.cholesky(c)
            sol = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
            return sol, jnp.fft.fft(b[0]), jnp.fft.rfft(b[:, 0])

        compile_(branches, arg((), jnp.int32), arg((32, 32)))
        compile_(cond, arg(()), arg((32, 32)))
        compile_(rng, arg((4,), jnp.uint32))
        compile_(linalg, arg((16, 16)), arg((16, 8)))

    elif program == "collectives":
        if mesh is None:
            raise SystemExit("collectives needs 4 devices")
        try:
            shard_map = jax.shard_map
        except AttributeError:
            from jax.experimental.shard_map import shard_map

        def coll(a, b):
            s = lax.psum(a, "x")
            g = lax.all_gather(a, "y", tiled=True)
            r = lax.ppermute(a, "x", [(0, 1), (1, 0)])
            t = lax.all_to_all(b, "y", 0, 0, tiled=True)
            rs = lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True)
            return s + r, g, t, rs

        f = shard_map(
            coll,
            mesh=mesh,
            in_specs=(P("x", "y"), P("x", "y")),
            out_specs=(P("x", "y"), P("x", "y"), P("x", "y"), P("x", "y")),
        )
        compile_(f, arg((64, 32), spec=P("x", "y")), arg((64, 32), spec=P("x", "y")))

        def spmd(w, x):  # collectives inserted by XLA's SPMD partitioner
            return jnp.tanh(x @ w).sum(0), (x @ w).T @ x

        compile_(spmd, arg((128, 64), spec=P("y", "x")), arg((32, 128), spec=P("x", "y")), out=P())
    else:
        raise SystemExit(f"unknown program {program}")


PROGRAMS = ("mlp_train", "loops", "conv", "gather_scatter_sort", "transformer", "cond_rng_linalg", "collectives")

if __name__ == "__main__":
    main(*sys.argv[1:])
