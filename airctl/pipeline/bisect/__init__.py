"""Finding what broke a run: ``airctl bisect`` (its conditions and searches) and ``airctl repro``
(a reproducer folder, minified)."""
