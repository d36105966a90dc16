"""Small TensorFlow programs compiled by XLA (`tf.function(jit_compile=True)`), run by make.py in a TF venv.

    python -c "import runpy, sys; runpy.run_path('programs_tf.py', run_name='__main__')" PROGRAM

XLA_FLAGS (the dump flags) must be set by the caller. Each function is called once on CPU, which compiles it.
"""

import sys


def main(program):
    import tensorflow as tf

    tf.random.set_seed(0)
    jit = tf.function(jit_compile=True)

    if program == "mlp_train":
        w1 = tf.Variable(tf.random.normal((128, 256)) * 0.05)
        w2 = tf.Variable(tf.random.normal((256, 10)) * 0.05)

        @jit
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = tf.nn.relu(x @ w1) @ w2
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            g1, g2 = tape.gradient(loss, [w1, w2])
            w1.assign_sub(0.01 * g1)
            w2.assign_sub(0.01 * g2)
            return loss

        train_step(tf.random.normal((32, 128)), tf.zeros((32,), tf.int32))

    elif program == "loops":

        @jit
        def loops(x):
            i = tf.constant(0)
            c = lambda i, v: tf.logical_and(i < 20, tf.norm(v) > 1.0)
            _, v = tf.while_loop(c, lambda i, v: (i + 1, v * 0.5 + 0.01), (i, x))
            s = tf.scan(lambda a, e: a * 0.9 + tf.tanh(e), x)
            return v, s

        loops(tf.random.normal((16, 64)))

    elif program == "conv":
        w = tf.Variable(tf.random.normal((3, 3, 4, 8)))

        @jit
        def conv(x):
            with tf.GradientTape() as tape:
                y = tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME"))
                y = tf.nn.max_pool2d(y, 2, 2, "VALID")
                loss = tf.reduce_mean(tf.nn.avg_pool2d(y, 2, 1, "SAME"))
            return loss, tape.gradient(loss, w)

        conv(tf.random.normal((2, 16, 16, 4)))

    elif program == "gather_scatter_sort":

        @jit
        def gss(x, idx, upd):
            g = tf.gather(x, idx)
            s = tf.tensor_scatter_nd_add(tf.zeros_like(x), idx[:, None], upd)
            srt = tf.sort(x, axis=0)
            order = tf.argsort(x[:, 0])
            top = tf.math.top_k(x[0], 4).values
            return (
                g,
                s,
                srt,
                tf.gather(x, order),
                tf.cumsum(x, axis=1),
                top,
                tf.reverse(x, [0]),
                tf.pad(x, [[1, 2], [0, 3]]),
            )

        gss(tf.random.normal((64, 16)), tf.constant([1, 5, 2, 7, 0, 3, 9, 4]), tf.random.normal((8, 16)))

    elif program == "transformer":
        d = 64
        p = {
            n: tf.Variable(tf.random.normal(s) * 0.05)
            for n, s in (
                ("wq", (d, d)),
                ("wk", (d, d)),
                ("wv", (d, d)),
                ("wo", (d, d)),
                ("w1", (d, 4 * d)),
                ("w2", (4 * d, d)),
            )
        }

        def ln(x):
            m, v = tf.nn.moments(x, axes=[-1], keepdims=True)
            return (x - m) * tf.math.rsqrt(v + 1e-5)

        @jit
        def block(x):
            with tf.GradientTape() as tape:
                h = ln(x)
                q, k, v = (tf.reshape(h @ p[n], (4, 16, 4, 16)) for n in ("wq", "wk", "wv"))
                s = tf.einsum("bthk,bshk->bhts", q, k) / 4.0
                mask = tf.linalg.band_part(tf.ones((16, 16)), -1, 0)
                a = tf.nn.softmax(s + (1.0 - mask) * -1e9, axis=-1)
                o = tf.reshape(tf.einsum("bhts,bshk->bthk", a, v), (4, 16, d))
                x = x + o @ p["wo"]
                y = x + tf.nn.gelu(ln(x) @ p["w1"]) @ p["w2"]
                loss = tf.reduce_sum(y)
            return loss, tape.gradient(loss, list(p.values()))

        block(tf.random.normal((4, 16, d)))
    else:
        raise SystemExit(f"unknown program {program}")


if __name__ == "__main__":
    main(*sys.argv[1:])
