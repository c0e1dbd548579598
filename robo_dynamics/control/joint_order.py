"""Joint order: arrays given with their joint names, mapped to the model's order by name."""

import numpy as np


def order_of(names, reference, what="joint_names"):
    """Indices into `names` giving `reference` order; `names` empty means already in order.

    Raises ValueError unless names holds every reference joint exactly once.
    """
    if len(names) == 0:
        return np.arange(len(reference))
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has duplicates")
    position = {name: k for k, name in enumerate(names)}
    missing = [name for name in reference if name not in position]
    extra = [name for name in names if name not in set(reference)]
    if missing or extra:
        raise ValueError(f"{what} must name every chain joint once: missing {missing}, "
                         f"unknown {extra}")
    return np.array([position[name] for name in reference])
