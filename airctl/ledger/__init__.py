"""The ledger: the folder one airctl run leaves behind (layout in docs/ledger.md).

- :mod:`airctl.ledger.index` — ``index.json`` as dataclasses (``RunIndex``, ``GraphEntry``,
  ``StageEntry``, ``DumpEntry``), on the JSON round trip of :mod:`airctl.ledger.record`;
- :mod:`airctl.ledger.writer` — ``LedgerWriter``, the one writer;
- :mod:`airctl.ledger.reader` — ``Ledger``, the one reader (and ``stage_path``);
- :mod:`airctl.ledger.defaults` — ``default_stage``, the one rule for the stage a command reads
  when the user names none.
"""
