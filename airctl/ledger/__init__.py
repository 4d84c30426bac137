"""The ledger: the folder one airctl run leaves behind (layout in docs/ledger.md)."""
