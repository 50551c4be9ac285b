"""Tools: the engine benchmark (``mus bench``), and for maintainers the kernel profile (``mus profile``), the
generators of the equity and sign tables in ``agents/data`` (``mus make-tables equity|signs``), and the generator
of the docs' and README's generated blocks."""
