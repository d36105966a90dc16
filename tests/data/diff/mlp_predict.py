"""Dump jit(predict) of a small MLP; argv[1] is the second hidden width (the "small change")."""

import sys

import jax
import jax.numpy as jnp


def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def predict(params, x):
    return jnp.argmax(mlp(params, x), axis=-1)


def main():
    sizes = [784, 512, int(sys.argv[1]), 10]
    keys = jax.random.split(jax.random.PRNGKey(0), len(sizes))
    params = [(jax.random.normal(k, (a, b)) * 0.01, jnp.zeros(b)) for k, a, b in zip(keys, sizes, sizes[1:])]
    x = jnp.ones((128, 784))
    print(jax.jit(predict)(params, x).shape)


if __name__ == "__main__":
    main()
