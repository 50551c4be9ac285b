"""Tools for maintainers: the engine benchmark (``mus bench``), the kernel profile, the generators of the equity
and sign tables in ``agents/data``, and the generator of the docs' and README's generated blocks."""
